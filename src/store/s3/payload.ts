/**
 * Request bodies of the S3 API, verified while they stream: the declared x-amz-content-sha256,
 * x-amz-checksum-* (header or aws-chunked trailer), and aws-chunked decoding with chunk signatures
 * (AWS "Signature Calculations for the Authorization Header: Transferring Payload in Multiple
 * Chunks"). A mismatch throws before the last byte is handed on, so the engine never commits it.
 */
import { createHash, type Hash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { createCrc32, createCrc32c, createCrc64Nvme, type Crc } from '../../core/crypto/crc.ts';
import { createBodyDigest } from '../../core/crypto/off-thread-digest.ts';
import type { Checksums } from '../engine/types.ts';
import { S3_ERRORS, S3Error } from './s3-error.ts';
import { canonicalRequestHash, EMPTY_SHA256, hmacHex, type SigningContext } from './sigv4.ts';

/** The flexible checksums of the S3 API (x-amz-checksum-<name>), all verified. */
export const S3_CHECKSUM_ALGORITHMS = ['crc32', 'crc32c', 'crc64nvme', 'sha1', 'sha256'] as const;
export type S3ChecksumAlgorithm = (typeof S3_CHECKSUM_ALGORITHMS)[number];

interface Digest {
  algorithm: S3ChecksumAlgorithm;
  update(data: Uint8Array): void;
  /** The digest's bytes (once). */
  bytes(): Buffer;
}

function fromCrc(algorithm: S3ChecksumAlgorithm, crc: Crc): Digest {
  return {
    algorithm,
    update(data) {
      crc.update(data);
    },
    bytes() {
      return crc.digest();
    },
  };
}

function createDigest(name: string): Digest | undefined {
  switch (name) {
    case 'crc32':
      return fromCrc(name, createCrc32());
    case 'crc32c':
      return fromCrc(name, createCrc32c());
    case 'crc64nvme':
      return fromCrc(name, createCrc64Nvme());
    case 'sha1':
    case 'sha256': {
      const hash: Hash = createHash(name);
      return {
        algorithm: name,
        update(data) {
          hash.update(data);
        },
        bytes() {
          return hash.digest();
        },
      };
    }
    default:
      return undefined;
  }
}

/** A flexible checksum the body was verified against. */
export interface VerifiedChecksum {
  algorithm: S3ChecksumAlgorithm;
  /** Lowercase hex of the digest. */
  hex: string;
}

export interface PayloadOptions {
  headers: IncomingHttpHeaders;
  signing: SigningContext | undefined;
  /** Called once the body matched its x-amz-checksum-* (header or trailer), before its last bytes are handed on. */
  onChecksum?: (checksum: VerifiedChecksum) => void;
}

/** How many bytes each flexible checksum's digest has. */
export const CHECKSUM_BYTES: Record<S3ChecksumAlgorithm, number> = { crc32: 4, crc32c: 4, crc64nvme: 8, sha1: 20, sha256: 32 };

/**
 * Refuses a checksum value that cannot be one (not the base64 of a digest of the algorithm's
 * length) as S3 does, with 400 InvalidRequest; a well-formed value that does not match the body
 * is BadDigest, once the body has been read (checkDigest).
 */
function assertWellFormed(algorithm: S3ChecksumAlgorithm, value: string): void {
  const bytes = Buffer.from(value, 'base64');
  if (bytes.length !== CHECKSUM_BYTES[algorithm] || bytes.toString('base64') !== value) {
    throw S3_ERRORS.invalidRequest(`Value for x-amz-checksum-${algorithm} header is invalid.`);
  }
}

/** Throws BadDigest unless the digest equals the client's base64 value (InvalidRequest when that is no such value); reports the match. */
function checkDigest(digest: Digest, expected: string, options: PayloadOptions): void {
  assertWellFormed(digest.algorithm, expected);
  const actual = digest.bytes();
  if (actual.toString('base64') !== expected) throw S3_ERRORS.badDigest();
  options.onChecksum?.({ algorithm: digest.algorithm, hex: actual.toString('hex') });
}

/** Length of the decoded body, when the request says it. */
export function declaredLength(headers: IncomingHttpHeaders): number | undefined {
  const decoded = headers['x-amz-decoded-content-length'];
  const raw = typeof decoded === 'string' ? decoded : headers['content-length'];
  if (raw === undefined) return undefined;
  const n = Number(raw);
  return Number.isInteger(n) && n >= 0 ? n : undefined;
}

/**
 * A body to store (PutObject, UploadPart): streamed and verified, and the flexible checksum it
 * matched, in the engine's form, for the engine to read once the body has ended.
 */
export function verifiedUpload(
  source: AsyncIterable<Uint8Array>,
  headers: IncomingHttpHeaders,
  signing: SigningContext | undefined,
): { body: AsyncIterable<Uint8Array>; checksums: () => Checksums } {
  let verified: VerifiedChecksum | undefined;
  // Methods, not arrow properties: tsx gives each arrow property its name on every call (a PUT's cost).
  const body = verifiedBody(source, {
    headers,
    signing,
    onChecksum(checksum) {
      verified = checksum;
    },
  });
  return {
    body,
    checksums() {
      return verified ? { [verified.algorithm]: verified.hex } : {};
    },
  };
}

/**
 * Is the body aws-chunked? The payload hash says so (`STREAMING-...`); so does `aws-chunked` in
 * Content-Encoding beside the decoded length it needs. An `aws-chunked` token alone, on a body sent
 * plain (`Content-Encoding: gzip, aws-chunked` with a plain hash), is dropped, as S3 does: the body
 * is taken as it is and the object keeps the other encodings (httpMetadataFrom).
 */
export function isAwsChunked(headers: IncomingHttpHeaders, payloadHash: string): boolean {
  if (payloadHash.startsWith('STREAMING-')) return true;
  const encodings = String(headers['content-encoding'] ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase());
  return encodings.includes('aws-chunked') && typeof headers['x-amz-decoded-content-length'] === 'string';
}

/** Streams the request body decoded and verified. */
export function verifiedBody(source: AsyncIterable<Uint8Array>, options: PayloadOptions): AsyncIterable<Uint8Array> {
  const payloadHash = options.signing?.payloadHash ?? String(options.headers['x-amz-content-sha256'] ?? 'UNSIGNED-PAYLOAD');
  const chunked = isAwsChunked(options.headers, payloadHash);
  const checksumHeaders = Object.keys(options.headers).filter(
    (name) => name.startsWith('x-amz-checksum-') && name !== 'x-amz-checksum-type' && name !== 'x-amz-checksum-algorithm',
  );
  if (checksumHeaders.length > 1) throw S3_ERRORS.invalidRequest('Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.');
  const checksumHeader = checksumHeaders[0];
  const trailerName = typeof options.headers['x-amz-trailer'] === 'string' ? options.headers['x-amz-trailer'].toLowerCase() : undefined;
  const checksumName = checksumHeader ?? trailerName;
  const digest = checksumName ? createDigest(checksumName.slice('x-amz-checksum-'.length)) : undefined;
  const expectedFromHeader = checksumHeader ? String(options.headers[checksumHeader]) : undefined;
  // A value that cannot be a checksum is refused before any of the body is read.
  if (digest && expectedFromHeader !== undefined) assertWellFormed(digest.algorithm, expectedFromHeader);
  if (chunked) {
    const signed = payloadHash.startsWith('STREAMING-AWS4-HMAC-SHA256-PAYLOAD') ? options.signing : undefined;
    // No payload hash declared: the signature covers the body as sent (aws-chunked framing and all), checked before its end is decoded.
    const deferred = options.signing?.verifyDeferred;
    const sent = deferred ? deferredChecked(kept(source), deferred) : kept(source);
    return decodeAwsChunked(sent, signed, digest, expectedFromHeader, trailerName, options);
  }
  const verify =
    options.signing?.verifyDeferred ??
    (/^[0-9a-f]{64}$/.test(payloadHash) ? (actual: string) => (actual === payloadHash ? undefined : S3_ERRORS.contentSha256Mismatch()) : undefined);
  // Nothing to verify (UNSIGNED-PAYLOAD, no checksum): the body as it comes, with no layer to pass through.
  if (!verify && !digest) return source;
  return plainBody(kept(source), verify, digest, expectedFromHeader, options);
}

/**
 * The source, iterated without ever being destroyed: a body refused mid-stream (a bad chunk, a
 * digest or signature mismatch) leaves the request readable, so the handler can still answer its
 * S3 error (and drain or close) instead of the connection being reset under it. for-await calls
 * an iterator's return() (which destroys a stream) on an early exit; this iterator has none.
 */
function kept(source: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  const iterator = source[Symbol.asyncIterator]();
  return { [Symbol.asyncIterator]: () => ({ next: () => iterator.next() }) };
}

async function* plainBody(
  source: AsyncIterable<Uint8Array>,
  /** The body's SHA-256 checked: undefined when it passes, else the error to throw. */
  verify: ((sha256: string) => S3Error | undefined) | undefined,
  digest: Digest | undefined,
  expected: string | undefined,
  options: PayloadOptions,
): AsyncIterable<Uint8Array> {
  // The payload's SHA-256 of a large body is taken on the hashing thread, beside the store's MD5.
  const hash = verify ? createBodyDigest(['sha256'], declaredLength(options.headers)) : undefined;
  let held: Uint8Array | undefined;
  let verified = false;
  try {
    // Each chunk is handed on one step late, so a mismatch is thrown before the final byte leaves.
    for await (const chunk of source) {
      const hashing = hash?.update(chunk);
      digest?.update(chunk);
      if (held) yield held;
      held = chunk;
      if (hashing) await hashing;
    }
    const mismatch = hash ? verify!((await hash.digest())[0]!) : undefined;
    if (mismatch) throw mismatch;
    verified = true;
  } finally {
    if (!verified) hash?.cancel();
  }
  if (digest && expected !== undefined) checkDigest(digest, expected, options);
  if (held) yield held;
}

/** The source as it comes, throwing at its end what `verify` answers for its SHA-256 (SignatureDoesNotMatch), if anything. */
async function* deferredChecked(source: AsyncIterable<Uint8Array>, verify: (sha256: string) => S3Error | undefined): AsyncIterable<Uint8Array> {
  const hash = createHash('sha256');
  for await (const chunk of source) {
    hash.update(chunk);
    yield chunk;
  }
  const mismatch = verify(hash.digest('hex'));
  if (mismatch) throw mismatch;
}

const CRLF = Buffer.from('\r\n');

async function* decodeAwsChunked(
  source: AsyncIterable<Uint8Array>,
  signing: SigningContext | undefined,
  digest: Digest | undefined,
  expectedFromHeader: string | undefined,
  trailerName: string | undefined,
  options: PayloadOptions,
): AsyncIterable<Uint8Array> {
  let buffer: Buffer = Buffer.alloc(0);
  let state: 'header' | 'data' | 'crlf' | 'trailer' | 'done' = 'header';
  let remaining = 0;
  let chunkSignature = '';
  let chunkHash: Hash | undefined;
  let previousSignature = signing?.signature ?? '';
  const trailers = new Map<string, string>();
  let held: Uint8Array | undefined;

  const verifyChunk = (dataHash: string) => {
    if (!signing) return;
    const stringToSign = `AWS4-HMAC-SHA256-PAYLOAD\n${signing.amzDate}\n${signing.scope}\n${previousSignature}\n${EMPTY_SHA256}\n${dataHash}`;
    const expected = hmacHex(signing.signingKey, stringToSign);
    if (expected !== chunkSignature) throw S3_ERRORS.signatureDoesNotMatch();
    previousSignature = expected;
  };

  for await (const incoming of source) {
    buffer = buffer.length === 0 ? Buffer.from(incoming.buffer, incoming.byteOffset, incoming.byteLength) : Buffer.concat([buffer, incoming]);
    for (;;) {
      if (state === 'header' || state === 'trailer') {
        const end = buffer.indexOf(CRLF);
        if (end < 0) {
          if (buffer.length > 8192) throw new S3Error('IncompleteBody', 400, 'An aws-chunked header line is too long.');
          break;
        }
        const line = buffer.subarray(0, end).toString('latin1');
        buffer = buffer.subarray(end + 2);
        if (state === 'trailer') {
          if (line === '') {
            state = 'done';
            break;
          }
          const colon = line.indexOf(':');
          if (colon > 0) trailers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
          continue;
        }
        const [sizeHex, ...extensions] = line.split(';');
        const size = Number.parseInt(sizeHex ?? '', 16);
        if (!Number.isInteger(size) || size < 0) throw new S3Error('IncompleteBody', 400, `Invalid aws-chunked chunk header ${JSON.stringify(line)}.`);
        chunkSignature = extensions.find((e) => e.startsWith('chunk-signature='))?.slice('chunk-signature='.length) ?? '';
        if (size === 0) {
          verifyChunk(EMPTY_SHA256);
          state = 'trailer';
          continue;
        }
        remaining = size;
        chunkHash = signing ? createHash('sha256') : undefined;
        state = 'data';
      }
      if (state === 'data') {
        if (buffer.length === 0) break;
        const take = Math.min(remaining, buffer.length);
        const piece = buffer.subarray(0, take);
        buffer = buffer.subarray(take);
        remaining -= take;
        chunkHash?.update(piece);
        digest?.update(piece);
        if (held) yield held;
        held = piece;
        if (remaining > 0) break;
        if (chunkHash) verifyChunk(chunkHash.digest('hex'));
        state = 'crlf';
      }
      if (state === 'crlf') {
        if (buffer.length < 2) break;
        if (buffer[0] !== 13 || buffer[1] !== 10) throw new S3Error('IncompleteBody', 400, 'aws-chunked data must end with CRLF.');
        buffer = buffer.subarray(2);
        state = 'header';
      }
      if (state === 'done') break;
    }
  }
  // Some clients end the body right after the last trailer without the final empty line.
  if ((state as string) === 'trailer' && buffer.length === 0) state = 'done';
  if (state !== 'done') throw new S3Error('IncompleteBody', 400, 'The aws-chunked body ended before its final chunk.');
  if (signing?.payloadHash.endsWith('-TRAILER')) verifyTrailer(signing, previousSignature, trailers);
  const expected = expectedFromHeader ?? (trailerName ? trailers.get(trailerName) : undefined);
  if (digest && expected !== undefined) checkDigest(digest, expected, options);
  if (held) yield held;
}

/**
 * STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER: the trailing headers are signed too, chained on the
 * final chunk's signature (AWS "Signature calculations for trailing headers"). Every trailer but
 * the signature, `name:value\n` as received (its bytes: the lines are read as latin1), is what is signed.
 */
function verifyTrailer(signing: SigningContext, finalChunkSignature: string, trailers: ReadonlyMap<string, string>): void {
  const signature = trailers.get('x-amz-trailer-signature');
  if (signature === undefined) throw S3_ERRORS.signatureDoesNotMatch();
  let canonical = '';
  for (const [name, value] of trailers) if (name !== 'x-amz-trailer-signature') canonical += `${name}:${value}\n`;
  const stringToSign = `AWS4-HMAC-SHA256-TRAILER\n${signing.amzDate}\n${signing.scope}\n${finalChunkSignature}\n${canonicalRequestHash(canonical)}`;
  if (hmacHex(signing.signingKey, stringToSign) !== signature) throw S3_ERRORS.signatureDoesNotMatch();
}
