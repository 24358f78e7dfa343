/**
 * Checksums on put: at most one of md5/sha1/sha256/sha384/sha512, each as a hex string or bytes,
 * checked with the runtime's exact errors. StoreChecksums exposes stored ones
 * as ArrayBuffers (a fresh copy on each access) and serialises to hex.
 */
import type { ChecksumAlgorithm, Checksums } from '../engine/types.ts';
import { CHECKSUM_ALGORITHMS } from '../engine/types.ts';
import { bytesToHex, hexToBytes } from './hex.ts';

const NAMES: Record<ChecksumAlgorithm, string> = { md5: 'MD5', sha1: 'SHA-1', sha256: 'SHA-256', sha384: 'SHA-384', sha512: 'SHA-512' };
const BYTES: Record<ChecksumAlgorithm, number> = { md5: 16, sha1: 20, sha256: 32, sha384: 48, sha512: 64 };
const HEX = /^[0-9a-fA-F]*$/;
const encoder = new TextEncoder();

/**
 * The checksum a put asks the engine to verify, or undefined. As in the runtime, wrong field types
 * are reported first (argument conversion); then the algorithms are taken in the order md5, sha1,
 * sha256, sha384, sha512, each validated before a second one is refused as "multiple".
 */
export function toExpectedChecksum(options: Partial<Record<ChecksumAlgorithm, unknown>>): { algorithm: ChecksumAlgorithm; hex: string } | undefined {
  const given = CHECKSUM_ALGORITHMS.filter((algorithm) => options[algorithm] !== undefined);
  for (const algorithm of given) {
    const value = options[algorithm];
    if (typeof value !== 'string' && !(value instanceof ArrayBuffer) && !ArrayBuffer.isView(value)) {
      throw new TypeError(
        `Incorrect type for the '${algorithm}' field on 'PutOptions': the provided value is not of type 'ArrayBuffer or ArrayBufferView or string'.`,
      );
    }
  }
  let expected: { algorithm: ChecksumAlgorithm; hex: string } | undefined;
  for (const algorithm of given) {
    if (expected) throw new TypeError('You cannot specify multiple hashing algorithms.');
    expected = { algorithm, hex: checksumHex(algorithm, options[algorithm] as string | ArrayBuffer | ArrayBufferView) };
  }
  return expected;
}

function checksumHex(algorithm: ChecksumAlgorithm, value: string | ArrayBuffer | ArrayBufferView): string {
  const name = NAMES[algorithm];
  if (typeof value === 'string') {
    // The runtime counts the UTF-8 bytes of the string.
    const length = encoder.encode(value).byteLength;
    if (length !== BYTES[algorithm] * 2) throw new TypeError(`${name} is ${BYTES[algorithm] * 2} hex characters, not ${length}`);
    if (!HEX.test(value)) throw new TypeError(`Provided ${name} wasn't a valid hex string`);
    return value.toLowerCase();
  }
  const bytes = value instanceof ArrayBuffer ? new Uint8Array(value) : new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  if (bytes.byteLength !== BYTES[algorithm]) throw new TypeError(`${name} is ${BYTES[algorithm]} bytes, not ${bytes.byteLength}`);
  return bytesToHex(bytes);
}

/** The checksums of a stored object, as scripts see them: ArrayBuffers, a fresh copy on each access. */
export class StoreChecksums {
  readonly #hex: Checksums;

  constructor(hex: Checksums) {
    this.#hex = hex;
  }

  get md5(): ArrayBuffer | undefined {
    return this.#bytes('md5');
  }
  get sha1(): ArrayBuffer | undefined {
    return this.#bytes('sha1');
  }
  get sha256(): ArrayBuffer | undefined {
    return this.#bytes('sha256');
  }
  get sha384(): ArrayBuffer | undefined {
    return this.#bytes('sha384');
  }
  get sha512(): ArrayBuffer | undefined {
    return this.#bytes('sha512');
  }

  /**
   * The binding's algorithms only: CRCs kept for the S3 API, and a multipart upload's COMPOSITE
   * checksum (`<hex>-<parts>`, not a digest of the object's bytes), stay out of sight.
   */
  toJSON(): Checksums {
    const out: Checksums = {};
    for (const algorithm of CHECKSUM_ALGORITHMS) {
      const value = this.#digest(algorithm);
      if (value !== undefined) out[algorithm] = value;
    }
    return out;
  }

  #digest(algorithm: ChecksumAlgorithm): string | undefined {
    const value = this.#hex[algorithm];
    return value === undefined || value.includes('-') ? undefined : value;
  }

  #bytes(algorithm: ChecksumAlgorithm): ArrayBuffer | undefined {
    const value = this.#digest(algorithm);
    if (value === undefined) return undefined;
    return hexToBytes(value).buffer;
  }
}
