/**
 * Durable small-file replacement: the new bytes go to a temporary file that is fsynced, renamed
 * over the old file, and the directory is fsynced, so after a crash or a power loss the file holds
 * the old bytes or the new ones, whole, and the rename itself is on disk once the call resolves.
 */
import { open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';

/** Replaces `path` with `data` durably (through `<path>.tmp`, left over from a crash at most until the next call). */
export async function replaceFileDurably(path: string, data: string | Uint8Array): Promise<void> {
  const tmp = `${path}.tmp`;
  const file = await open(tmp, 'w');
  try {
    await file.writeFile(data);
    await file.sync();
  } finally {
    await file.close();
  }
  try {
    await rename(tmp, path);
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
  await syncDirectory(dirname(path));
}

/** fsyncs a directory: the entries created, renamed or removed in it before the call are on disk once it resolves. */
export async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
