/**
 * Server-side encryption with customer-provided keys (SSE-C): an object's bytes are kept encrypted
 * with a key the client sends with every request, never stored.
 *
 * What is stored per object (and per multipart upload, whose parts share it): a random salt, the
 * salted HMAC-SHA256 of the key (`check`: a key sent later is checked against it), and the key's
 * MD5 (base64), which S3 and the platform show back to identify the key. The data key is another
 * HMAC of the customer's key and the salt: every object has its own.
 *
 * Bodies are AES-256-GCM in chunks of CHUNK_BYTES of plaintext, each stored as a random 12-byte
 * nonce, the ciphertext and the 16-byte tag, the chunk's index (within its blob: a part's chunks
 * count from 0) authenticated with it. A range costs the chunks it touches, not the whole object.
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { StoredData } from '../../db/metadata-store.ts';
import type { BlobStore } from '../blobs/blob-store.ts';
import { StoreError } from './errors.ts';
import type { BodyInput, BodySegment, ServedRange, SseCInfo } from './types.ts';

/** Plaintext bytes per encrypted chunk. */
export const CHUNK_BYTES = 64 * 1024;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** What each chunk adds to its plaintext on disk. */
export const CHUNK_OVERHEAD = NONCE_BYTES + TAG_BYTES;

/** A customer's key, checked: 32 bytes, given to the engine as 64 lowercase hex characters. */
export function parseSseCKey(hex: string): Buffer {
  if (!/^[0-9a-f]{64}$/.test(hex)) throw new Error('An SSE-C key is 64 lowercase hex characters (32 bytes).');
  return Buffer.from(hex, 'hex');
}

/** The key's MD5, base64: what S3's x-amz-server-side-encryption-customer-key-MD5 and the binding's ssecKeyMd5 show. */
export function sseCKeyMd5(key: Buffer): string {
  return createHash('md5').update(key).digest('base64');
}

function derive(key: Buffer, purpose: 'check' | 'data', salt: Buffer): Buffer {
  return createHmac('sha256', key).update(`edgeport sse-c ${purpose}\n`).update(salt).digest();
}

/** A new object's (or upload's) record for `hexKey`, and the data key its bytes are encrypted with. */
export function newSseC(hexKey: string): { record: Required<SseCInfo>; dataKey: Buffer } {
  const key = parseSseCKey(hexKey);
  const salt = randomBytes(16);
  return {
    record: { keyMd5: sseCKeyMd5(key), salt: salt.toString('base64'), check: derive(key, 'check', salt).toString('base64') },
    dataKey: derive(key, 'data', salt),
  };
}

/**
 * The data key of something stored with `record`, when `hexKey` is its key; STORE_SSEC_KEY_MISMATCH
 * otherwise. `what` names it in the message.
 */
export function openSseC(record: SseCInfo, hexKey: string, what: 'object' | 'upload' = 'object'): Buffer {
  const key = parseSseCKey(hexKey);
  const salt = Buffer.from(record.salt ?? '', 'base64');
  const expected = Buffer.from(record.check ?? '', 'base64');
  const actual = derive(key, 'check', salt);
  if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) {
    throw new StoreError('STORE_SSEC_KEY_MISMATCH', {
      message: `The SSE-C key provided does not match the key the ${what} was stored with (its MD5 is ${record.keyMd5}, this key's ${sseCKeyMd5(key)}).`,
    });
  }
  return derive(key, 'data', salt);
}

/**
 * The etag of an SSE-C object (or part): an HMAC of its plaintext's MD5 under its data key. The same
 * bytes uploaded again under one key (a part sent twice) get the same etag, as S3 clients expect;
 * without the key it says nothing of the content, unlike the MD5 itself.
 */
export function sealedEtag(dataKey: Buffer, plainMd5Hex: string): string {
  return createHmac('md5', dataKey).update(plainMd5Hex).digest('hex');
}

/** The record as faces may show it: the key's MD5 only. */
export function publicSseC(record: SseCInfo): SseCInfo {
  return { keyMd5: record.keyMd5 };
}

/** Bytes on disk of `plain` bytes of plaintext. */
export function sealedLength(plain: number): number {
  return plain + Math.ceil(plain / CHUNK_BYTES) * CHUNK_OVERHEAD;
}

function aad(index: number): Buffer {
  const out = Buffer.alloc(8);
  out.writeBigUInt64BE(BigInt(index));
  return out;
}

function sealChunk(dataKey: Buffer, index: number, plain: Uint8Array): Buffer {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', dataKey, nonce);
  cipher.setAAD(aad(index));
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  return Buffer.concat([nonce, body, cipher.getAuthTag()]);
}

function openChunk(dataKey: Buffer, index: number, sealed: Uint8Array): Buffer {
  const nonce = sealed.subarray(0, NONCE_BYTES);
  const tag = sealed.subarray(sealed.length - TAG_BYTES);
  const decipher = createDecipheriv('aes-256-gcm', dataKey, nonce);
  decipher.setAAD(aad(index));
  decipher.setAuthTag(tag);
  try {
    return Buffer.concat([decipher.update(sealed.subarray(NONCE_BYTES, sealed.length - TAG_BYTES)), decipher.final()]);
  } catch (error) {
    throw new StoreError('STORE_INTERNAL', {
      message: 'We encountered an internal error. Please try again.',
      cause: error,
      details: { sseC: 'a stored chunk failed authentication' },
    });
  }
}

/** Hashes of the plaintext a sealing stream saw, once it has ended. */
export interface SealedDigests {
  size: number;
  hex: Partial<Record<string, string>>;
}

/**
 * The body encrypted as it streams (`body` for the engine's ingest, its length known when the
 * plaintext's is), hashing the plaintext with `algorithms` (node:crypto names) on the way:
 * `digests()` answers them once the stream has ended.
 */
export function sealBody(input: BodyInput, dataKey: Buffer, algorithms: readonly string[]): { body: BodyInput; digests: () => SealedDigests } {
  const source: AsyncIterable<Uint8Array> | Iterable<Uint8Array> = input instanceof Uint8Array ? [input] : input.stream;
  const declared = input instanceof Uint8Array ? input.byteLength : input.length;
  const hashes = algorithms.map((name) => [name, createHash(name)] as const);
  let size = 0;
  let ended = false;
  async function* sealed(): AsyncIterable<Uint8Array> {
    // Plaintext waiting for its chunk to fill (less than CHUNK_BYTES), privately copied: streams may reuse their buffers.
    let carry: Buffer | undefined;
    let index = 0;
    for await (const piece of source) {
      if (piece.byteLength === 0) continue;
      size += piece.byteLength;
      for (const [, hash] of hashes) hash.update(piece);
      // Each chunk is sealed before the next piece is asked for, so the piece is read while it is valid.
      let data = Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
      if (carry) {
        const need = CHUNK_BYTES - carry.length;
        if (data.length < need) {
          carry = Buffer.concat([carry, data]);
          continue;
        }
        yield sealChunk(dataKey, index++, Buffer.concat([carry, data.subarray(0, need)]));
        carry = undefined;
        data = data.subarray(need);
      }
      while (data.length >= CHUNK_BYTES) {
        yield sealChunk(dataKey, index++, data.subarray(0, CHUNK_BYTES));
        data = data.subarray(CHUNK_BYTES);
      }
      if (data.length > 0) carry = Buffer.from(data);
    }
    if (carry) yield sealChunk(dataKey, index, carry);
    ended = true;
  }
  const stream = sealed();
  return {
    body: declared === undefined ? { stream } : { stream, length: sealedLength(declared) },
    digests() {
      if (!ended) throw new Error('The sealed body has not been read to its end.');
      return { size, hex: Object.fromEntries(hashes.map(([name, hash]) => [name, hash.digest('hex')])) };
    },
  };
}

/**
 * The plaintext bytes [offset, offset + length) of one encrypted blob (or inline body) holding
 * `plainSize` bytes of plaintext: reads the chunks they lie in, through `read(cipherOffset,
 * cipherLength)`, and yields their plaintext, trimmed to the window.
 */
export async function* openRange(
  dataKey: Buffer,
  plainSize: number,
  offset: number,
  length: number,
  read: (cipherOffset: number, cipherLength: number) => AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
): AsyncIterable<Uint8Array> {
  if (length <= 0) return;
  const first = Math.floor(offset / CHUNK_BYTES);
  const last = Math.floor((offset + length - 1) / CHUNK_BYTES);
  const chunkLength = (index: number) => Math.min(CHUNK_BYTES, plainSize - index * CHUNK_BYTES) + CHUNK_OVERHEAD;
  const cipherOffset = first * (CHUNK_BYTES + CHUNK_OVERHEAD);
  let cipherLength = 0;
  for (let index = first; index <= last; index++) cipherLength += chunkLength(index);
  let index = first;
  // Sealed bytes of the chunk being gathered (a piece may hold many chunks, or part of one).
  let gathered: Buffer[] = [];
  let gatheredBytes = 0;
  const emit = (sealed: Buffer): Buffer => {
    const plain = openChunk(dataKey, index, sealed);
    const chunkStart = index * CHUNK_BYTES;
    index++;
    return plain.subarray(Math.max(offset, chunkStart) - chunkStart, Math.min(offset + length, chunkStart + plain.length) - chunkStart);
  };
  for await (const piece of read(cipherOffset, cipherLength)) {
    let data = Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
    while (index <= last && data.length > 0) {
      const need = chunkLength(index) - gatheredBytes;
      if (data.length < need) {
        gathered.push(Buffer.from(data));
        gatheredBytes += data.length;
        break;
      }
      const sealed = gatheredBytes === 0 ? data.subarray(0, need) : Buffer.concat([...gathered, data.subarray(0, need)]);
      gathered = [];
      gatheredBytes = 0;
      data = data.subarray(need);
      yield emit(sealed);
    }
  }
  if (index <= last)
    throw new StoreError('STORE_INTERNAL', { message: 'We encountered an internal error. Please try again.', details: { sseC: 'a stored body ended early' } });
}

/**
 * The body segment of the plaintext range `range` of an SSE-C object stored as `data` (`size`
 * bytes of plaintext; a multipart object's parts each encrypted apart): one segment made as it is
 * read, decrypting only the chunks the range touches.
 */
export function sealedSegments(blobs: BlobStore, data: StoredData, range: ServedRange, size: number, dataKey: Buffer): BodySegment[] {
  if (range.length === 0) return [];
  const pieces: Array<{
    plainSize: number;
    offset: number;
    length: number;
    read: (offset: number, length: number) => AsyncIterable<Uint8Array> | Iterable<Uint8Array>;
  }> = [];
  const end = range.offset + range.length;
  if (data.kind === 'inline') {
    pieces.push({ plainSize: size, offset: range.offset, length: range.length, read: (offset, length) => [data.bytes.subarray(offset, offset + length)] });
  } else if (data.kind === 'blob') {
    pieces.push({ plainSize: size, offset: range.offset, length: range.length, read: (offset, length) => blobs.read(data.blobId, offset, length) });
  } else {
    let partStart = 0;
    for (const part of data.parts) {
      const from = Math.max(range.offset, partStart);
      const to = Math.min(end, partStart + part.size);
      if (to > from)
        pieces.push({ plainSize: part.size, offset: from - partStart, length: to - from, read: (offset, length) => blobs.read(part.blobId, offset, length) });
      partStart += part.size;
      if (partStart >= end) break;
    }
  }
  return [
    {
      kind: 'stream',
      length: range.length,
      async *read() {
        for (const piece of pieces) yield* openRange(dataKey, piece.plainSize, piece.offset, piece.length, piece.read);
      },
    },
  ];
}
