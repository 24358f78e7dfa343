/**
 * Sends a byte range of a file as part of an HTTP response. The file is read into buffers taken from
 * a small pool, two at a time, so the next read overlaps the socket's write of the last one; a
 * buffer goes back to the pool only once the socket has taken its bytes (the write's callback).
 *
 * Why not a file ReadStream: it allocates a fresh buffer for every read, and at 1 MiB responses the
 * page faults of that fresh memory cost more than the copies themselves (measured here: 1 MiB
 * bodies at 0.65 GB/s with fresh 256 KiB reads, 1.5 GB/s with pooled 512 KiB buffers).
 */
import { constants, open, type FileHandle } from 'node:fs/promises';
import type { BodySink } from './drained.ts';

/** Each read's size; two are in flight per response, so 1 MiB of buffers per busy response. */
export const FILE_CHUNK_BYTES = 512 * 1024;
/** Free buffers kept for reuse (16 MiB); more are left to the garbage collector. */
const POOL_LIMIT = 32;
const pool: Buffer[] = [];

function takeBuffer(): Buffer {
  return pool.pop() ?? Buffer.allocUnsafeSlow(FILE_CHUNK_BYTES);
}

function giveBack(buffer: Buffer): void {
  if (pool.length < POOL_LIMIT) pool.push(buffer);
}

/**
 * Resolves once `bytes` are written to the socket; rejects if the response fails or the client
 * goes away first. Until it settles, the bytes are still in use.
 */
function written(res: BodySink, bytes: Uint8Array): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onClose = (): void => reject(new Error('The client closed the connection.'));
    res.once('close', onClose);
    res.write(bytes, (error) => {
      res.off('close', onClose);
      if (error) reject(error);
      else resolve();
    });
  });
}

async function readFully(file: FileHandle, buffer: Buffer, length: number, position: number, path: string): Promise<void> {
  for (let got = 0; got < length;) {
    const { bytesRead } = await file.read(buffer, got, length - got, position + got);
    if (bytesRead === 0) throw new Error(`${path} ended ${length - got} bytes before the range it should hold.`);
    got += bytesRead;
  }
}

/**
 * Writes `length` bytes of the file at `path`, from `offset`, to `res` (which the caller ends).
 * Rejects if the file is shorter, cannot be read, or the client leaves.
 */
export async function sendFileRange(res: BodySink, path: string, offset: number, length: number): Promise<void> {
  if (length <= 0) return;
  // O_NOFOLLOW: the files sent are bodies the store wrote; a link planted at one's name is refused (ELOOP).
  const file = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  // The write in flight and the buffer it holds: returned to the pool only once it has succeeded.
  let inFlight: { done: Promise<void>; buffer: Buffer } | undefined;
  try {
    for (let position = offset, end = offset + length; position < end;) {
      const size = Math.min(FILE_CHUNK_BYTES, end - position);
      const buffer = takeBuffer();
      await readFully(file, buffer, size, position, path);
      position += size;
      if (inFlight) {
        await inFlight.done;
        giveBack(inFlight.buffer);
      }
      inFlight = { done: written(res, size === buffer.byteLength ? buffer : buffer.subarray(0, size)), buffer };
      // A failed write is awaited (and thrown) on the next turn or below; never unhandled meanwhile.
      inFlight.done.catch(() => undefined);
    }
    if (inFlight) {
      await inFlight.done;
      giveBack(inFlight.buffer);
    }
  } finally {
    await file.close();
  }
}
