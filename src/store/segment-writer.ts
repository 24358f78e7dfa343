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

/** Writes every segment in order; the caller ends the response. Rejects if a blob fails or the client leaves. */
export async function writeSegments(res: BodySink, segments: readonly BodySegment[], blobs: BlobSource): Promise<void> {
  const dir = blobs.dir;
  for (const segment of segments) {
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
