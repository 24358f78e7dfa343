/**
 * Durable small-file replacement: the new bytes go to a temporary file that is fsynced, renamed
 * over the old file, and the directory is fsynced, so after a crash or a power loss the file holds
 * the old bytes or the new ones, whole, and the rename itself is on disk once the call resolves.
 */
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeFileSync } from 'node:fs';
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

/**
 * replaceFileDurably for a caller that must not yield (the edge's request path, a start): the same
 * steps with synchronous calls, so no other code of the process runs between them. `mode`: the
 * new file's permissions (before the umask).
 */
export function replaceFileDurablySync(path: string, data: string | Uint8Array, options: { mode?: number } = {}): void {
  const tmp = `${path}.tmp`;
  // A temporary file a crash left keeps its mode when reopened: it goes first, so `mode` holds.
  rmSync(tmp, { force: true });
  const fd = openSync(tmp, 'w', options.mode ?? 0o666);
  try {
    writeFileSync(fd, data);
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw error;
  }
  closeSync(fd);
  try {
    renameSync(tmp, path);
  } catch (error) {
    rmSync(tmp, { force: true });
    throw error;
  }
  syncDirectorySync(dirname(path));
}

/** syncDirectory, synchronously. */
export function syncDirectorySync(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
