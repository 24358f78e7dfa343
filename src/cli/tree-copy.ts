/**
 * Copies a folder tree for backup and restore: regular files and folders, nested to any depth up to
 * MAX_DEPTH, through NoFollowDir (no link is followed, nothing is written through one). Everything
 * else (symbolic links, fifos, sockets, devices) is skipped and listed with where it was, so the
 * command can say what it left out.
 */
import { type EntryKind, type NoFollowDir } from './no-follow-dir.ts';

/** Folders nested deeper than this are skipped (each level holds one open descriptor while it is copied). */
export const MAX_DEPTH = 64;
/** How many skipped entries a command names on its output (the manifest keeps up to MAX_SKIPPED_LISTED). */
const SKIPPED_NAMED = 10;
export const MAX_SKIPPED_LISTED = 1000;

/** An entry not copied, by its path relative to what was copied (e.g. `blobs/evil`). */
export interface SkippedEntry {
  path: string;
  kind: EntryKind | 'folder nested too deep' | 'folder (bodies are files)';
}

/** What copies report into: entries skipped (each path once) and what was copied. */
export class CopyReport {
  readonly #skipped = new Map<string, SkippedEntry>();
  files = 0;
  bytes = 0;

  skip(path: string, kind: SkippedEntry['kind']): void {
    if (!this.#skipped.has(path)) this.#skipped.set(path, { path, kind });
  }

  get skipped(): SkippedEntry[] {
    return [...this.#skipped.values()];
  }
}

export interface CopyTreeOptions {
  /** Prefix of the paths reported (`blobs`). */
  prefix: string;
  report: CopyReport;
  /** fsync each file and folder written (restore: they must be on disk before they replace data). */
  sync: boolean;
  /** Paths (relative to `from`) already copied: skipped, and every path copied is added. */
  copied?: Set<string>;
  /** Entries that vanish between the listing and the copy are passed over (a live data dir), instead of failing. */
  live?: boolean;
}

/** Copies what `from` holds into `to` (an existing folder; folders in it are made as needed). */
export function copyTree(from: NoFollowDir, to: NoFollowDir, options: CopyTreeOptions): void {
  copyLevel(from, to, '', 1, options);
}

function copyLevel(from: NoFollowDir, to: NoFollowDir, relative: string, depth: number, options: CopyTreeOptions): void {
  for (const name of from.names()) {
    const path = relative === '' ? name : `${relative}/${name}`;
    const reported = `${options.prefix}/${path}`;
    if (options.copied?.has(path)) continue;
    try {
      const kind = from.kind(name);
      if (kind === null) continue;
      if (kind === 'folder') {
        if (depth >= MAX_DEPTH) {
          options.report.skip(reported, 'folder nested too deep');
          continue;
        }
        copyFolder(from, to, name, path, depth, options);
        continue;
      }
      if (kind !== 'file') {
        options.report.skip(reported, kind);
        continue;
      }
      const copied = from.copyFile(name, to, name, options.sync);
      if (typeof copied !== 'number') {
        options.report.skip(reported, copied);
        continue;
      }
      options.report.files += 1;
      options.report.bytes += copied;
      options.copied?.add(path);
    } catch (error) {
      if (!(options.live === true && (error as NodeJS.ErrnoException).code === 'ENOENT')) throw error;
    }
  }
  if (options.sync) to.sync();
}

function copyFolder(from: NoFollowDir, to: NoFollowDir, name: string, path: string, depth: number, options: CopyTreeOptions): void {
  const source = from.sub(name);
  if (source === null) {
    // Replaced by a link (or removed) since it was listed.
    const now = from.kind(name);
    if (now !== null) options.report.skip(`${options.prefix}/${path}`, now);
    return;
  }
  try {
    const target = to.ensureSub(name);
    if (target === null) throw new Error(`${to.path}/${name} is not a folder`);
    try {
      copyLevel(source, target, path, depth + 1, options);
    } finally {
      target.close();
    }
  } finally {
    source.close();
  }
}

/** `: blobs/evil (symbolic link), gateway/pipe (fifo), and 3 more` for a command's output line. */
export function describeSkipped(skipped: readonly SkippedEntry[]): string {
  const named = skipped
    .slice(0, SKIPPED_NAMED)
    .map((entry) => `${printable(entry.path)} (${entry.kind})`)
    .join(', ');
  return skipped.length > SKIPPED_NAMED ? `${named}, and ${skipped.length - SKIPPED_NAMED} more` : named;
}

/** A path as it may be printed: quoted (JSON) when it holds control characters, which a terminal would act on. */
export function printable(path: string): string {
  // eslint-disable-next-line no-control-regex
  return /[\u0000-\u001f\u007f-\u009f]/.test(path) ? JSON.stringify(path) : path;
}
