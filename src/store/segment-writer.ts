/**
 * Writes an untouched store body to an HTTP response straight from where it lives: inline bytes as
 * they are, blob slices read from their files (core/http/file-range-sender.ts) or, for a remote blob
 * store, streamed from its reads. Shared by the S3 API's GetObject and the script host, so a body
 * never passes through a script or a copy of its own.
 */
import { join } from 'node:path';
import { drained, type BodySink } from '../core/http/drained.ts';
import { sendFileRange } from '../core/http/file-range-sender.ts';
import type { StoreEngine } from './engine/store-engine.ts';
import type { BodySegment } from './engine/types.ts';

/** Where blob segments come from: files in `dir` when the blobs are on this machine, else `read`. */
export interface BlobSource {
  dir: string | undefined;
  read(blobId: string, offset: number, length: number): AsyncIterable<Uint8Array>;
}

/** The blobs of a store engine, as a source of segment bytes. */
export function engineBlobs(engine: StoreEngine): BlobSource {
  return { dir: engine.blobDir, read: (blobId, offset, length) => engine.readBlob(blobId, offset, length) };
}

/** The first blob segment's read, begun, with its first bytes (primeFirstBlob). */
export interface PrimedRead {
  index: number;
  iterator: AsyncIterator<Uint8Array>;
  first: IteratorResult<Uint8Array>;
}

/**
 * On a remote blob store: begins the first blob (or stream) segment's read and waits for its first bytes, so
 * that a store that is down or silent fails the request before any header is sent (the client
 * gets its 503, not a cut connection). Undefined when there is nothing remote to read.
 */
export async function primeFirstBlob(segments: readonly BodySegment[], blobs: BlobSource): Promise<PrimedRead | undefined> {
  if (blobs.dir !== undefined) return undefined;
  const index = segments.findIndex((segment) => segment.kind !== 'inline' && segment.length > 0);
  const segment = segments[index];
  if (segment === undefined || segment.kind === 'inline') return undefined;
  // A stream segment (an SSE-C object's bytes, decrypted as read) reads the remote blob store too.
  const source = segment.kind === 'stream' ? segment.read() : blobs.read(segment.blobId, segment.offset, segment.length);
  const iterator = source[Symbol.asyncIterator]();
  return { index, iterator, first: await iterator.next() };
}

/**
 * Writes every segment in order; the caller ends the response. Rejects if a blob fails or the
 * client leaves. `primed`: the first blob's read, already begun (primeFirstBlob).
 */
export async function writeSegments(res: BodySink, segments: readonly BodySegment[], blobs: BlobSource, primed?: PrimedRead): Promise<void> {
  const dir = blobs.dir;
  for (const [index, segment] of segments.entries()) {
    if (primed?.index === index) {
      await writePrimed(res, primed);
      continue;
    }
    if (segment.kind === 'inline') {
      if (!res.write(segment.bytes)) await drained(res);
    } else if (segment.kind === 'stream') {
      // Made as it is read (an SSE-C object's bytes, decrypted): written as they come, paced by the client.
      for await (const chunk of segment.read()) {
        if (res.destroyed) throw new Error('The client closed the connection.');
        if (!res.write(chunk)) await drained(res);
      }
    } else if (segment.length === 0) {
      continue;
    } else if (dir !== undefined) {
      await sendFileRange(res, join(dir, segment.blobId), segment.offset, segment.length);
    } else {
      // Leaving the loop (a write fails, or the client is gone) ends the read and frees its connection.
      for await (const chunk of blobs.read(segment.blobId, segment.offset, segment.length)) {
        if (res.destroyed) throw new Error('The client closed the connection.');
        if (!res.write(chunk)) await drained(res);
      }
    }
  }
}

async function writePrimed(res: BodySink, primed: PrimedRead): Promise<void> {
  try {
    for (let next = primed.first; !next.done; next = await primed.iterator.next()) {
      if (res.destroyed) throw new Error('The client closed the connection.');
      if (!res.write(next.value)) await drained(res);
    }
  } finally {
    // Leaving early ends the read and frees its connection (as a for-await loop would).
    await primed.iterator.return?.();
  }
}
