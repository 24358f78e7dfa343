/**
 * Restoring bodies into a blobs directory outside the data dir (`[blobs] url = "file:///dir"`),
 * which other instances may share and keep writing to: bodies are added, never removed or
 * rewritten. Each is copied into the restoring process's own folder under `<dir>/tmp/` (the one the
 * blob store uses, so a store sweeps it away after a kill -9), fsynced, then hard-linked into
 * `<dir>/blobs/`, which adds the name only if it is free. A name already holding a file keeps it
 * (blob ids are never reused: it is the same body); one holding a link, fifo or other non-file has
 * that entry replaced by the body (a rename replaces the link itself, never what it points at).
 * `<dir>/blobs` and `<dir>/tmp` must be folders, not links. So a failure part-way leaves only
 * extra files, which the previous database does not refer to, and nothing outside is written.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { processTag } from '../core/process-identity.ts';
import { BLOBS_DIR } from './backup-layout.ts';
import { CliError } from './cli-errors.ts';
import { NoFollowDir } from './no-follow-dir.ts';
import type { CopyReport } from './tree-copy.ts';

/** What adding a backup's bodies did. */
export interface AddedBodies {
  /** Bodies added (counted in the report's files and bytes too). */
  added: number;
  /** Bodies already there, kept as they were. */
  kept: number;
  /** Entries of `<dir>/blobs` that were links or other non-files, replaced by the backup's body. */
  replaced: string[];
}

/** Link errors of file systems without hard links: the body is renamed in instead, once its name is checked free. */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);

/** Adds the files of the backup's `blobs/` (`from`) to `<root>/blobs/`, as the file header says. */
export function addBodies(from: NoFollowDir, root: string, report: CopyReport): AddedBodies {
  mkdirSync(root, { recursive: true });
  const store = NoFollowDir.openRoot(root);
  const opened: NoFollowDir[] = [];
  const folder = (parent: NoFollowDir, name: string): NoFollowDir => {
    const dir = parent.ensureSub(name);
    if (dir === null) {
      throw new CliError(
        'CLI_RESTORE_FAILED',
        `edgeport restore: ${join(parent.path, name)} is a ${parent.kind(name) ?? 'missing entry'}, not a folder, and a restore writes nothing through one: ` +
          `make it a folder (or point [blobs] url at the folder it stands for), then run the restore again. The data dir is unchanged.`,
      );
    }
    opened.push(dir);
    return dir;
  };
  const result: AddedBodies = { added: 0, kept: 0, replaced: [] };
  try {
    const blobs = folder(store, BLOBS_DIR);
    const tmp = folder(store, 'tmp');
    const own = folder(tmp, processTag());
    try {
      for (const name of from.names()) {
        const kind = from.kind(name);
        if (kind === null) continue;
        const size = kind === 'file' ? from.copyFile(name, own, name, true) : kind;
        if (typeof size !== 'number') {
          report.skip(`${BLOBS_DIR}/${name}`, size === 'folder' ? 'folder (bodies are files)' : size);
          continue;
        }
        const outcome = addWithoutReplacing(own, name, blobs);
        if (outcome === 'kept') {
          result.kept += 1;
          continue;
        }
        if (outcome === 'replaced') result.replaced.push(join(blobs.path, name));
        result.added += 1;
        report.files += 1;
        report.bytes += size;
      }
      blobs.sync();
    } finally {
      tmp.remove(processTag());
    }
  } finally {
    for (const dir of opened) dir.close();
    store.close();
  }
  return result;
}

function addWithoutReplacing(own: NoFollowDir, name: string, blobs: NoFollowDir): 'added' | 'kept' | 'replaced' {
  try {
    own.link(name, blobs, name);
    own.unlink(name);
    return 'added';
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? '';
    if (code !== 'EEXIST' && !NO_HARD_LINKS.has(code)) throw error;
  }
  const there = blobs.kind(name);
  if (there === 'file') {
    own.unlink(name);
    return 'kept';
  }
  if (there === 'folder') throw new Error(`${join(blobs.path, name)} is a folder where the backup has a body: remove it, then run the restore again`);
  own.rename(name, blobs, name);
  return there === null ? 'added' : 'replaced';
}
