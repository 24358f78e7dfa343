/**
 * Combining CRCs: the CRC of A followed by B from the CRC of A, the CRC of B and B's length, as
 * zlib's crc32_combine does (multiplication by x^(8·len) modulo the polynomial, in the reflected
 * representation). S3's FULL_OBJECT checksum of a multipart object is the CRC of all its bytes:
 * it is made from the parts' CRCs at completion, without reading a byte again. It holds for the
 * three CRCs of crc.ts, which are reflected with all-ones init and final xor.
 *
 * BigInt arithmetic: a combine costs a few hundred multiplications of 64-bit values, once per part
 * at completion; speed does not matter here, clarity does.
 */
import { CRC32_POLY, CRC32C_POLY } from './crc.ts';

export type CombinableCrc = 'crc32' | 'crc32c' | 'crc64nvme';

const WIDTHS: Record<CombinableCrc, { width: bigint; poly: bigint }> = {
  crc32: { width: 32n, poly: BigInt(CRC32_POLY) },
  crc32c: { width: 32n, poly: BigInt(CRC32C_POLY) },
  crc64nvme: { width: 64n, poly: 0x9a6c9329ac4bc9b5n },
};

/** a·b modulo the polynomial; the top bit is x^0 (reflected). */
function multiplyModulo(a: bigint, b: bigint, width: bigint, poly: bigint): bigint {
  let mask = 1n << (width - 1n);
  let product = 0n;
  let factor = b;
  while (mask !== 0n) {
    if (a & mask) product ^= factor;
    mask >>= 1n;
    factor = factor & 1n ? (factor >> 1n) ^ poly : factor >> 1n;
  }
  return product;
}

/** x^(8·bytes) modulo the polynomial: the operator that moves a CRC past `bytes` zero bytes. */
function shiftOperator(bytes: bigint, width: bigint, poly: bigint): bigint {
  let result = 1n << (width - 1n);
  // x^(2^k), starting at x^8 (one byte), squared as the exponent's bits are walked.
  let power = 1n << (width - 2n);
  for (let k = 0; k < 3; k++) power = multiplyModulo(power, power, width, poly);
  for (let n = bytes; n > 0n; n >>= 1n) {
    if (n & 1n) result = multiplyModulo(power, result, width, poly);
    power = multiplyModulo(power, power, width, poly);
  }
  return result;
}

/**
 * The CRC (big-endian bytes, as crc.ts's digests) of the concatenation of parts, from each part's
 * CRC and byte length, in order. No parts: the CRC of nothing (0).
 */
export function combineCrcs(algorithm: CombinableCrc, parts: ReadonlyArray<{ crc: Uint8Array; length: number }>): Buffer {
  const { width, poly } = WIDTHS[algorithm];
  let combined = 0n;
  for (const part of parts) {
    const crc = BigInt(`0x${Buffer.from(part.crc).toString('hex') || '0'}`);
    combined = multiplyModulo(shiftOperator(BigInt(part.length), width, poly), combined, width, poly) ^ crc;
  }
  const out = Buffer.alloc(Number(width / 8n));
  let value = combined;
  for (let i = out.length - 1; i >= 0; i--) {
    out[i] = Number(value & 0xffn);
    value >>= 8n;
  }
  return out;
}
