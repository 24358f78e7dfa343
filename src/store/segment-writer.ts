/**
 * Writes an untouched store body to a response straight from where it lives: inline bytes as they
 * are, blob slices piped from their files (or, for a remote blob store, streamed from its reads),
 * without the bytes ever passing through the script.
 */
import { createReadStream, type ReadStream } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { drained } from '../core/http/drained.ts';
import type { BodySegment } from '../store/engine/types.ts';

const READ_CHUNK_BYTES = 256 * 1024;

/** Where blob segments come from: files in `dir` when the blobs are on this machine, else `read`. */
export interface BlobSource {
  dir: string | undefined;
  read(blobId: string, offset: number, length: number): AsyncIterable<Uint8Array>;
}

/** Writes every segment in order; the caller ends the response. Rejects if a blob fails or the client leaves. */
export async function writeSegments(res: ServerResponse, segments: readonly BodySegment[], blobs: BlobSource): Promise<void> {
  const dir = blobs.dir;
  for (const segment of segments) {
    if (segment.kind === 'inline') {
      if (!res.write(segment.bytes)) await drained(res);
    } else if (segment.length === 0) {
      continue;
    } else if (dir !== undefined) {
      await pipeFile(res, createReadStream(join(dir, segment.blobId), {
        start: segment.offset, end: segment.offset + segment.length - 1, highWaterMark: READ_CHUNK_BYTES,
      }));
    } else {
      // Leaving the loop (a write fails, or the client is gone) ends the read and frees its connection.
      for await (const chunk of blobs.read(segment.blobId, segment.offset, segment.length)) {
        if (res.destroyed) throw new Error('The client closed the connection.');
        if (!res.write(chunk)) await drained(res);
      }
    }
  }
}

function pipeFile(res: ServerResponse, file: ReadStream): Promise<void> {
  return new Promise((resolve, reject) => {
    const onClose = (): void => {
      file.destroy();
      reject(new Error('The client closed the connection.'));
    };
    res.once('close', onClose);
    file.once('error', (error) => {
      res.off('close', onClose);
      file.unpipe(res);
      reject(error);
    });
    file.once('end', () => {
      res.off('close', onClose);
      resolve();
    });
    file.pipe(res, { end: false });
  });
}
