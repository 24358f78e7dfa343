/**
 * Writes an untouched store body to a response straight from where it lives: inline bytes as they
 * are, blob slices piped from their files, without the bytes ever passing through the script.
 */
import { createReadStream, type ReadStream } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { BodySegment } from '../store/engine/types.ts';

const READ_CHUNK_BYTES = 256 * 1024;

/** Writes every segment in order; the caller ends the response. Rejects if a file fails or the client leaves. */
export async function writeSegments(res: ServerResponse, segments: readonly BodySegment[], blobDir: string): Promise<void> {
  for (const segment of segments) {
    if (segment.kind === 'inline') {
      if (!res.write(segment.bytes)) await drained(res);
    } else if (segment.length > 0) {
      await pipeFile(res, createReadStream(join(blobDir, segment.blobId), {
        start: segment.offset, end: segment.offset + segment.length - 1, highWaterMark: READ_CHUNK_BYTES,
      }));
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

function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve, reject) => {
    const onDrain = (): void => {
      res.off('close', onClose);
      resolve();
    };
    const onClose = (): void => {
      res.off('drain', onDrain);
      reject(new Error('The client closed the connection.'));
    };
    res.once('drain', onDrain);
    res.once('close', onClose);
  });
}
