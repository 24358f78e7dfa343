/**
 * Takes in a body for put/uploadPart: hashes it while it streams (MD5 always, plus the algorithm
 * the caller wants verified; a stream declared at 1 MiB or more is hashed on the hashing thread,
 * src/core/crypto/off-thread-digest.ts), keeps small bodies in memory to be stored inline in the
 * metadata row, and spills larger ones to a blob file. Nothing is buffered beyond the inline threshold.
 */
import * as crypto from 'node:crypto';
import type { BlobStore, BlobWriter } from '../blobs/blob-store.ts';
import { createBodyDigest, type StreamDigest } from '../../core/crypto/off-thread-digest.ts';
import { StoreError } from './errors.ts';
import type { BodyInput, ChecksumAlgorithm } from './types.ts';

const NODE_HASH: Record<ChecksumAlgorithm, string> = { md5: 'md5', sha1: 'sha1', sha256: 'sha256', sha384: 'sha384', sha512: 'sha512' };

export interface Ingested {
  size: number;
  md5: string;
  /** Hex of the extra algorithm, when one was asked for. */
  extra?: { algorithm: ChecksumAlgorithm; hex: string };
  /** The bytes, when small enough to store inline. */
  inline?: Uint8Array;
  /** The committed blob otherwise. */
  blobId?: string;
}

export interface IngestOptions {
  blobs: BlobStore;
  /** Bodies up to this size are kept in memory and stored inline. */
  inlineMax: number;
  maxSize: number;
  extraAlgorithm?: ChecksumAlgorithm;
  /** Force a blob file even for small bodies (multipart parts). */
  alwaysBlob?: boolean;
}

/** crypto.hash (Node 20.12+) hashes a whole small body in one call, cheaper than setting up a Hash object. */
const oneShotHash = (crypto as { hash?: (algorithm: string, data: Uint8Array, encoding: 'hex') => string }).hash;

/** MD5 (the etag) and the extra algorithm, hashed inline or on the hashing thread. */
interface BodyDigests {
  update(chunk: Uint8Array): Promise<void> | undefined;
  /**
   * [md5 hex, extra hex (when asked for)]. `whole` is the entire body when it is at hand: if no
   * chunk was given to update, it is hashed in one call per algorithm.
   */
  finish(whole?: Uint8Array): Promise<[string, string | undefined]>;
  cancel(): void;
}

/** MD5 and the extra algorithm, on the hashing thread for a large body (`length`, when known); set up on first use. */
function bodyDigests(extraAlgorithm: ChecksumAlgorithm | undefined, length: number | undefined): BodyDigests {
  const extra = extraAlgorithm && extraAlgorithm !== 'md5' ? NODE_HASH[extraAlgorithm] : undefined;
  const algorithms = extra ? ['md5', extra] : ['md5'];
  let digest: StreamDigest | undefined;
  return {
    update(chunk) {
      digest ??= createBodyDigest(algorithms, length);
      return digest.update(chunk);
    },
    async finish(whole) {
      let hex: string[];
      if (!digest && whole && oneShotHash) {
        hex = algorithms.map((algorithm) => oneShotHash(algorithm, whole, 'hex'));
      } else {
        if (!digest) {
          digest = createBodyDigest(algorithms, length);
          if (whole) await digest.update(whole);
        }
        hex = await digest.digest();
      }
      const [md5Hex, extraHex] = hex as [string, string | undefined];
      return [md5Hex, extraAlgorithm ? (extraHex ?? md5Hex) : undefined];
    },
    cancel() {
      digest?.cancel();
    },
  };
}

export async function ingestBody(body: BodyInput, options: IngestOptions): Promise<Ingested> {
  if (body instanceof Uint8Array) {
    if (body.byteLength > options.maxSize) throw new StoreError('STORE_ENTITY_TOO_LARGE');
    const digests = bodyDigests(options.extraAlgorithm, undefined);
    if (!options.alwaysBlob && body.byteLength <= options.inlineMax) return finish(digests, options, body.byteLength, { inline: body });
    digests.update(body);
    const writer = await options.blobs.createWriter({ size: body.byteLength });
    try {
      await writer.write(body);
      const { blobId } = await writer.commit();
      return await finish(digests, options, body.byteLength, { blobId });
    } catch (error) {
      await writer.abort();
      throw error;
    }
  }
  const declared = body.length;
  // A body kept inline is small: hashed where it is.
  const spills = declared !== undefined && (options.alwaysBlob || declared > options.inlineMax);
  return ingestStream(body.stream, declared, bodyDigests(options.extraAlgorithm, spills ? declared : undefined), options, spills);
}

/** `spills`: the declared length is known to need a blob file, so chunks are hashed as they come. */
async function ingestStream(
  stream: AsyncIterable<Uint8Array>,
  declared: number | undefined,
  digests: BodyDigests,
  options: IngestOptions,
  spills: boolean,
): Promise<Ingested> {
  if (declared !== undefined && declared > options.maxSize) throw new StoreError('STORE_ENTITY_TOO_LARGE');
  const held: Uint8Array[] = [];
  let size = 0;
  let writer: BlobWriter | undefined;
  try {
    for await (const chunk of stream) {
      if (chunk.byteLength === 0) continue;
      size += chunk.byteLength;
      if (size > options.maxSize) throw new StoreError('STORE_ENTITY_TOO_LARGE');
      // A body that may stay inline is hashed whole at the end (one call); chunks held until it
      // spills are hashed then, from their private copies.
      let hashing: Promise<void> | undefined;
      if (writer) {
        hashing = digests.update(chunk);
        await writer.write(chunk);
      } else if (options.alwaysBlob || size > options.inlineMax) {
        writer = await options.blobs.createWriter({ size: declared });
        if (!spills) for (const early of held) await digests.update(early);
        hashing = digests.update(chunk);
        for (const early of held) await writer.write(early);
        held.length = 0;
        await writer.write(chunk);
      } else {
        if (spills) hashing = digests.update(chunk);
        // Streams may reuse their buffers; keep a private copy of the (small) inline bytes.
        held.push(Uint8Array.prototype.slice.call(chunk));
      }
      if (hashing) await hashing;
    }
    if (declared !== undefined && size !== declared) throw new StoreError('STORE_INCOMPLETE_BODY');
    if (!writer) return await finish(digests, options, size, { inline: concat(held, size) });
    // The last bytes are hashed while the blob is made durable.
    const digested = finish(digests, options, size, {});
    digested.catch(() => undefined);
    const { blobId } = await writer.commit();
    try {
      return { ...(await digested), blobId };
    } catch (error) {
      await options.blobs.delete([blobId]).catch(() => undefined);
      throw error;
    }
  } catch (error) {
    digests.cancel();
    await writer?.abort();
    throw error;
  }
}

async function finish(digests: BodyDigests, options: IngestOptions, size: number, where: { inline?: Uint8Array; blobId?: string }): Promise<Ingested> {
  const [md5, extraHex] = await digests.finish(where.inline);
  const result: Ingested = { size, md5, ...where };
  if (options.extraAlgorithm && extraHex !== undefined) result.extra = { algorithm: options.extraAlgorithm, hex: extraHex };
  return result;
}
function concat(chunks: Uint8Array[], size: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}
