/**
 * Takes in a body for put/uploadPart: hashes it while it streams (MD5 always, plus the algorithm
 * the caller wants verified), keeps small bodies in memory to be stored inline in the metadata row,
 * and spills larger ones to a blob file. Nothing is buffered beyond the inline threshold.
 */
import { createHash, type Hash } from 'node:crypto';
import type { BlobStore, BlobWriter } from '../blobs/blob-store.ts';
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

export async function ingestBody(body: BodyInput, options: IngestOptions): Promise<Ingested> {
  const md5 = createHash('md5');
  const extra = options.extraAlgorithm && options.extraAlgorithm !== 'md5' ? createHash(NODE_HASH[options.extraAlgorithm]) : undefined;
  if (body instanceof Uint8Array) {
    if (body.byteLength > options.maxSize) throw new StoreError('STORE_ENTITY_TOO_LARGE');
    md5.update(body);
    extra?.update(body);
    if (!options.alwaysBlob && body.byteLength <= options.inlineMax) return finish(md5, extra, options, body.byteLength, { inline: body });
    const writer = await options.blobs.createWriter();
    try {
      await writer.write(body);
      const { blobId } = await writer.commit();
      return finish(md5, extra, options, body.byteLength, { blobId });
    } catch (error) {
      await writer.abort();
      throw error;
    }
  }
  return ingestStream(body.stream, body.length, md5, extra, options);
}

async function ingestStream(stream: AsyncIterable<Uint8Array>, declared: number | undefined, md5: Hash, extra: Hash | undefined,
  options: IngestOptions): Promise<Ingested> {
  if (declared !== undefined && declared > options.maxSize) throw new StoreError('STORE_ENTITY_TOO_LARGE');
  const held: Uint8Array[] = [];
  let size = 0;
  let writer: BlobWriter | undefined;
  try {
    for await (const chunk of stream) {
      if (chunk.byteLength === 0) continue;
      size += chunk.byteLength;
      if (size > options.maxSize) throw new StoreError('STORE_ENTITY_TOO_LARGE');
      md5.update(chunk);
      extra?.update(chunk);
      if (writer) {
        await writer.write(chunk);
      } else if (options.alwaysBlob || size > options.inlineMax) {
        writer = await options.blobs.createWriter();
        for (const early of held) await writer.write(early);
        held.length = 0;
        await writer.write(chunk);
      } else {
        // Streams may reuse their buffers; keep a private copy of the (small) inline bytes.
        held.push(Uint8Array.prototype.slice.call(chunk));
      }
    }
    if (declared !== undefined && size !== declared) throw new StoreError('STORE_INCOMPLETE_BODY');
    if (writer) {
      const { blobId } = await writer.commit();
      return finish(md5, extra, options, size, { blobId });
    }
    return finish(md5, extra, options, size, { inline: concat(held, size) });
  } catch (error) {
    await writer?.abort();
    throw error;
  }
}

function finish(md5: Hash, extra: Hash | undefined, options: IngestOptions, size: number,
  where: { inline?: Uint8Array; blobId?: string }): Ingested {
  const md5Hex = md5.digest('hex');
  const result: Ingested = { size, md5: md5Hex, ...where };
  if (options.extraAlgorithm) {
    result.extra = { algorithm: options.extraAlgorithm, hex: extra ? extra.digest('hex') : md5Hex };
  }
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
