/**
 * `file:///dir/path`: batches become files under the directory. Each write is checked against the
 * file roots again (a symbolic link swapped in after the job was made must not lead a write out),
 * then goes to a temporary file `<name>.<16 hex>.tmp` in the batch's real directory, noted first so
 * that a restart can remove it; the temporary file is fsynced, renamed into place, and the
 * directory (and any directory the write created) fsynced before the write resolves: a batch the
 * spool has moved past is on disk.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { syncDirectory } from '../../core/fs/durable-file.ts';
import { DestinationError, type DeliveredBatch, type LogDestination } from './destination.ts';
import type { FileRoots } from './file-roots.ts';

/** The temporary files of batch writes: `<batch>.log.gz.<16 hex>.tmp`; a restart removes only these. */
export const BATCH_TEMP_FILE = /\.log\.gz\.[0-9a-f]{16}\.tmp$/;

export function fileDestination(directory: string, roots: FileRoots): LogDestination {
  return {
    async write(batch: DeliveredBatch): Promise<void> {
      const target = join(directory, batch.name);
      const dir = await allowedDirectory(roots, dirname(target));
      const created = await mkdir(dir, { recursive: true }).catch((error: unknown) => fail(target, error));
      // The real path again once the directories exist: nothing may have been swapped in meanwhile.
      if ((await allowedDirectory(roots, dir)) !== dir)
        throw new DestinationError(`could not write ${target}: its directory changed while it was being written`);
      const final = join(dir, basename(target));
      const tmp = `${final}.${randomBytes(8).toString('hex')}.tmp`;
      await batch.tempFiles?.note(tmp);
      try {
        await writeSynced(tmp, batch.gzipped);
        await rename(tmp, final);
        await syncDirectory(dir);
        // A directory the write created exists for sure only once its parent is synced too.
        if (created !== undefined) for (let at = dir; at !== dirname(created); at = dirname(at)) await syncDirectory(dirname(at));
      } catch (error) {
        await rm(tmp, { force: true });
        fail(target, error);
      } finally {
        await batch.tempFiles?.clear();
      }
    },
  };
}

async function allowedDirectory(roots: FileRoots, dir: string): Promise<string> {
  const check = await roots.check(dir);
  if (!check.ok) throw new DestinationError(`refused to write below ${dir}: ${check.reason}`);
  return check.realPath;
}

/** Creates `path` (never through an existing file or link), writes `data` and fsyncs it. */
async function writeSynced(path: string, data: Uint8Array): Promise<void> {
  const file = await open(path, 'wx');
  try {
    await file.writeFile(data);
    await file.sync();
  } finally {
    await file.close();
  }
}

function fail(target: string, error: unknown): never {
  throw new DestinationError(`could not write ${target}: ${(error as Error).message}`);
}
