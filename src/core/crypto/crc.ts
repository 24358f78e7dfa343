/**
 * The CRCs of S3's flexible checksums: CRC-32 (node:zlib's native one from Node 20.15, else a
 * table), CRC-32C (Castagnoli) and CRC-64/NVME. All are reflected CRCs with all-ones init and
 * final xor; a digest is the CRC's big-endian bytes, as S3 sends it (base64) in x-amz-checksum-*.
 *
 * Table-driven, eight bytes per step ("slice-by-8"): table k holds the CRC of byte i followed by
 * k zero bytes. CRC-64 values are kept as two 32-bit halves, since JS bitwise operators are 32-bit.
 * Check values (CRC catalogue): "123456789" -> cbf43926 (CRC-32), e3069283 (CRC-32C),
 * ae8b14860a799888 (CRC-64/NVME).
 */
import * as zlib from 'node:zlib';

export const CRC32_POLY = 0xedb88320;
export const CRC32C_POLY = 0x82f63b78;
/** CRC-64/NVME's reflected polynomial 0x9a6c9329ac4bc9b5, as halves. */
const CRC64_POLY_HI = 0x9a6c9329;
const CRC64_POLY_LO = 0xac4bc9b5;

function crc32Tables(poly: number): Uint32Array[] {
  const tables = Array.from({ length: 8 }, () => new Uint32Array(256));
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let bit = 0; bit < 8; bit++) c = c & 1 ? (c >>> 1) ^ poly : c >>> 1;
    tables[0]![i] = c;
  }
  for (let k = 1; k < 8; k++) {
    for (let i = 0; i < 256; i++) {
      const previous = tables[k - 1]![i]!;
      tables[k]![i] = (previous >>> 8) ^ tables[0]![previous & 0xff]!;
    }
  }
  return tables;
}

function crc64Tables(): { hi: Uint32Array[]; lo: Uint32Array[] } {
  const hi = Array.from({ length: 8 }, () => new Uint32Array(256));
  const lo = Array.from({ length: 8 }, () => new Uint32Array(256));
  for (let i = 0; i < 256; i++) {
    let h = 0;
    let l = i;
    for (let bit = 0; bit < 8; bit++) {
      const odd = l & 1;
      l = (l >>> 1) | ((h & 1) << 31);
      h >>>= 1;
      if (odd) {
        h ^= CRC64_POLY_HI;
        l ^= CRC64_POLY_LO;
      }
    }
    hi[0]![i] = h >>> 0;
    lo[0]![i] = l >>> 0;
  }
  for (let k = 1; k < 8; k++) {
    for (let i = 0; i < 256; i++) {
      const ph = hi[k - 1]![i]!;
      const pl = lo[k - 1]![i]!;
      const index = pl & 0xff;
      lo[k]![i] = (((pl >>> 8) | (ph << 24)) ^ lo[0]![index]!) >>> 0;
      hi[k]![i] = ((ph >>> 8) ^ hi[0]![index]!) >>> 0;
    }
  }
  return { hi, lo };
}

const tables32 = new Map<number, Uint32Array[]>();
let crc64: { hi: Uint32Array[]; lo: Uint32Array[] } | undefined;
const zlibCrc32 = (zlib as unknown as { crc32?: (data: Uint8Array, value?: number) => number }).crc32;

/** An incremental checksum: update with any chunking, then the digest's big-endian bytes. */
export interface Crc {
  update(data: Uint8Array): void;
  digest(): Buffer;
}

/** A 32-bit CRC's digest: its four bytes, big-endian. */
function bigEndian32(value: number): Buffer {
  const out = Buffer.alloc(4);
  out.writeUInt32BE(value >>> 0);
  return out;
}

export function createCrc32(): Crc {
  if (!zlibCrc32) return createTableCrc32(CRC32_POLY);
  const crc32 = zlibCrc32;
  let value = 0;
  return {
    update(data) {
      // node:zlib's crc32 answers 0 for some empty buffers (randomBytes(0)'s), whatever the value passed.
      if (data.byteLength > 0) value = crc32(data, value);
    },
    digest: () => bigEndian32(value),
  };
}

export function createCrc32c(): Crc {
  return createTableCrc32(CRC32C_POLY);
}

/** Exported for tests: the table CRC-32 that stands in for node:zlib's on older Nodes. */
export function createTableCrc32(poly: number): Crc {
  let tables = tables32.get(poly);
  if (!tables) tables32.set(poly, (tables = crc32Tables(poly)));
  const [t0, t1, t2, t3, t4, t5, t6, t7] = tables as [Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array];
  let crc = 0xffffffff;
  return {
    update(data) {
      let i = 0;
      const end8 = data.length - (data.length & 7);
      for (; i < end8; i += 8) {
        const a = crc ^ (data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24));
        crc =
          t7[a & 0xff]! ^
          t6[(a >>> 8) & 0xff]! ^
          t5[(a >>> 16) & 0xff]! ^
          t4[a >>> 24]! ^
          t3[data[i + 4]!]! ^
          t2[data[i + 5]!]! ^
          t1[data[i + 6]!]! ^
          t0[data[i + 7]!]!;
      }
      for (; i < data.length; i++) crc = (crc >>> 8) ^ t0[(crc ^ data[i]!) & 0xff]!;
    },
    digest: () => bigEndian32(crc ^ 0xffffffff),
  };
}

export function createCrc64Nvme(): Crc {
  const { hi, lo } = (crc64 ??= crc64Tables());
  const [h0, h1, h2, h3, h4, h5, h6, h7] = hi as [Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array];
  const [l0, l1, l2, l3, l4, l5, l6, l7] = lo as [Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array];
  let crcHi = 0xffffffff;
  let crcLo = 0xffffffff;
  return {
    update(data) {
      let i = 0;
      const end8 = data.length - (data.length & 7);
      for (; i < end8; i += 8) {
        const a = crcLo ^ (data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24));
        const b = crcHi ^ (data[i + 4]! | (data[i + 5]! << 8) | (data[i + 6]! << 16) | (data[i + 7]! << 24));
        const i0 = a & 0xff;
        const i1 = (a >>> 8) & 0xff;
        const i2 = (a >>> 16) & 0xff;
        const i3 = a >>> 24;
        const i4 = b & 0xff;
        const i5 = (b >>> 8) & 0xff;
        const i6 = (b >>> 16) & 0xff;
        const i7 = b >>> 24;
        crcLo = l7[i0]! ^ l6[i1]! ^ l5[i2]! ^ l4[i3]! ^ l3[i4]! ^ l2[i5]! ^ l1[i6]! ^ l0[i7]!;
        crcHi = h7[i0]! ^ h6[i1]! ^ h5[i2]! ^ h4[i3]! ^ h3[i4]! ^ h2[i5]! ^ h1[i6]! ^ h0[i7]!;
      }
      for (; i < data.length; i++) {
        const index = (crcLo ^ data[i]!) & 0xff;
        crcLo = ((crcLo >>> 8) | (crcHi << 24)) ^ l0[index]!;
        crcHi = (crcHi >>> 8) ^ h0[index]!;
      }
    },
    digest() {
      const out = Buffer.alloc(8);
      out.writeUInt32BE((crcHi ^ 0xffffffff) >>> 0, 0);
      out.writeUInt32BE((crcLo ^ 0xffffffff) >>> 0, 4);
      return out;
    },
  };
}
