/**
 * Where `file://` log destinations may point: only below the directories the operator lists in
 * `[logs] file_roots` (by default the data dir's `log-files` folder), never elsewhere inside the
 * server's data directory (its database, blobs and spools), even when a root contains it.
 * Paths are compared by their real path (symbolic links resolved; for a directory that does not
 * exist yet, its nearest existing ancestor's real path plus the rest), so neither `..` nor a
 * symbolic link, even one created after the job, leads a write or a read outside. The API checks
 * when a job or challenge is made, and the log pipeline and the delivered-lines route check again
 * on every write and read.
 */
import { lstat, readlink, realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { DEFAULTS } from '../../config/defaults.ts';

/** Symbolic links followed while resolving one path before it counts as a loop (Linux's MAXSYMLINKS). */
const MAX_LINKS = 40;

export interface FileRootsOptions {
  /** Absolute directories; an empty list turns file:// destinations off. */
  roots: readonly string[];
  /** The server's data directory: never a destination, nor anything below it but its `log-files` folder. */
  dataDir: string;
  /**
   * Whether a destination may be a root itself (`[logs] file_roots_claimable`). By default it may
   * not: roots are shared by every account, and one account holding a whole root would refuse every
   * other account under it.
   */
  rootsClaimable?: boolean;
}

/** `isRoot`: the directory is one of the roots itself (not strictly below one). */
export type FileCheck = { ok: true; realPath: string; isRoot: boolean } | { ok: false; reason: string };

export class FileRoots {
  /** The roots as configured (named in refusals). */
  readonly roots: readonly string[];
  readonly rootsClaimable: boolean;
  readonly #dataDir: string;

  constructor(options: FileRootsOptions) {
    this.roots = [...options.roots];
    this.rootsClaimable = options.rootsClaimable ?? false;
    this.#dataDir = resolve(options.dataDir);
  }

  /** No root at all: every file:// destination is refused. */
  static none(): FileRoots {
    return new FileRoots({ roots: [], dataDir: '/' });
  }

  /**
   * Whether `directory` may be claimed as a job's destination (an ownership challenge, a job): as
   * check, and strictly below a root unless roots are claimable.
   */
  async checkClaim(directory: string): Promise<FileCheck> {
    const check = await this.check(directory);
    if (!check.ok || !check.isRoot || this.rootsClaimable) return check;
    return refuse(
      `${check.realPath} is a file root itself ([logs] file_roots), shared by every account of this server: ` +
        `choose a directory below it, such as ${join(check.realPath, 'logs')}`,
    );
  }

  /**
   * Whether `directory` may hold log files, and its real path when it may: write and read through
   * that path, not the one given. Roots and data dir are resolved afresh on each call, so a root
   * replaced by a link later is judged by where it leads then.
   */
  async check(directory: string): Promise<FileCheck> {
    if (this.roots.length === 0) return refuse('file:// destinations are turned off on this server ([logs] file_roots is empty)');
    if (!isAbsolute(directory) || directory.split('/').some((segment) => segment === '..' || segment === '.')) {
      return refuse('a file:// destination needs an absolute path without "." or ".." segments');
    }
    let real: string;
    try {
      real = await realPathOf(directory);
    } catch (error) {
      return refuse(`its path cannot be resolved (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
    const allowed = `it must lie below one of the directories this server allows for file:// destinations ([logs] file_roots): ${this.roots.join(', ')}`;
    const dataDir = await realPathOf(this.#dataDir).catch(() => this.#dataDir);
    const logFiles = join(dataDir, DEFAULTS.logs.fileRootInDataDir);
    if (isWithin(real, dataDir) && !isWithin(real, logFiles))
      return refuse(`it lies inside the server's data directory; ${allowed}, outside the data directory but for ${logFiles}`);
    const roots = await Promise.all(this.roots.map((root) => realPathOf(root).catch(() => null)));
    if (roots.some((root) => root !== null && isWithin(real, root))) return { ok: true, realPath: real, isRoot: roots.includes(real) };
    const through = real !== resolve(directory) ? ` (it leads to ${real} through a symbolic link)` : '';
    return refuse(`${allowed}${through}`);
  }
}

/**
 * The real path of `path`: symbolic links resolved, including dangling ones (the path a mkdir or
 * an open would follow); the part that does not exist yet is appended to its nearest existing
 * ancestor's real path.
 */
export async function realPathOf(path: string): Promise<string> {
  let at = resolve(path);
  const missing: string[] = [];
  for (let links = 0; ;) {
    try {
      return join(await realpath(at), ...missing);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
    }
    const entry = await lstat(at).catch(() => null);
    if (entry?.isSymbolicLink()) {
      // A dangling link: whatever is created here is created where it points.
      if (++links > MAX_LINKS) throw Object.assign(new Error(`too many symbolic links at ${at}`), { code: 'ELOOP' });
      at = resolve(dirname(at), await readlink(at));
      continue;
    }
    const parent = dirname(at);
    if (parent === at) return join(at, ...missing);
    missing.unshift(basename(at));
    at = parent;
  }
}

/** `path` is `dir` or below it (both absolute and normalised). */
export function isWithin(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith('/') ? dir : `${dir}/`);
}

function refuse(reason: string): FileCheck {
  return { ok: false, reason };
}
