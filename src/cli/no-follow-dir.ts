/**
 * A directory opened once and then used only through its open descriptor, never through a
 * symbolic link: what backup and restore copy with, so a link planted in a data dir, a shared blobs
 * dir or a backup is neither followed nor written through.
 *
 * Node has no openat(2), so on Linux every name inside is reached as `/proc/self/fd/<fd>/<name>`:
 * the kernel resolves that prefix to the directory this descriptor holds, whatever has been renamed
 * or replaced at its path since, so an entry checked here is the one opened (no window between a
 * check and the use). The last component is never followed either: entries are described with
 * lstat, files opened with O_NOFOLLOW (and their fstat checked), directories with
 * O_DIRECTORY | O_NOFOLLOW, and new files created with O_EXCL, which fails on any existing name,
 * a link included. Without /proc (macOS, BSD) names go through the directory's path, checked to
 * still be the directory opened; only a rename of a parent folder in between can misdirect it there.
 */
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  rmSync,
  fsyncSync,
  unlinkSync,
  writeSync,
  type Stats,
} from 'node:fs';
import { join } from 'node:path';

/** What an entry is; only `file` and `folder` are ever copied. */
export type EntryKind = 'file' | 'folder' | 'symbolic link' | 'fifo' | 'socket' | 'device' | 'unknown';

const PROC_FDS = existsSync('/proc/self/fd');
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
const CREATE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
const COPY_BUFFER = Buffer.allocUnsafe(1024 * 1024);

export function kindOf(stats: Stats): EntryKind {
  if (stats.isFile()) return 'file';
  if (stats.isDirectory()) return 'folder';
  if (stats.isSymbolicLink()) return 'symbolic link';
  if (stats.isFIFO()) return 'fifo';
  if (stats.isSocket()) return 'socket';
  if (stats.isBlockDevice() || stats.isCharacterDevice()) return 'device';
  return 'unknown';
}

export class NoFollowDir {
  /** The path it was opened at, for messages. */
  readonly path: string;
  readonly #fd: number;
  /** What names inside are joined to: `/proc/self/fd/<fd>`, or `path` without /proc. */
  readonly #base: string;
  readonly #ino: number;

  private constructor(path: string, fd: number) {
    this.path = path;
    this.#fd = fd;
    this.#base = PROC_FDS ? `/proc/self/fd/${fd}` : path;
    this.#ino = fstatSync(fd).ino;
  }

  /** Opens a directory the user named (a link there is the user's choice and is followed). */
  static openRoot(path: string): NoFollowDir {
    return new NoFollowDir(path, openSync(path, constants.O_RDONLY | constants.O_DIRECTORY));
  }

  /** The kind of entry `name` is (not following a link), or null when there is none. */
  kind(name: string): EntryKind | null {
    try {
      return kindOf(lstatSync(this.#at(name)));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  /** The names inside, sorted (so copies and reports come out in one order). */
  names(): string[] {
    return readdirSync(this.#at(null)).sort();
  }

  /** The folder `name`, or null when it is not a folder (a link to one included). */
  sub(name: string): NoFollowDir | null {
    let fd: number;
    try {
      fd = openSync(this.#at(name), DIR_FLAGS);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOTDIR' || code === 'ELOOP' || code === 'ENOENT') return null;
      throw error;
    }
    return new NoFollowDir(join(this.path, name), fd);
  }

  /** The folder `name`, made (with `mode`) when missing; null when something else is there. */
  ensureSub(name: string, mode = 0o777): NoFollowDir | null {
    try {
      mkdirSync(this.#at(name), { mode });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    return this.sub(name);
  }

  /**
   * Copies the regular file `name` into `to` as the new file `toName` (fsynced when `sync`), with
   * its permission bits; answers its size, or the kind of entry it is when that is not a regular
   * file (nothing is read or written then). The new name must not exist: nothing is overwritten.
   */
  copyFile(name: string, to: NoFollowDir, toName: string, sync: boolean): number | EntryKind {
    let source: number;
    try {
      source = openSync(this.#at(name), READ_FLAGS);
    } catch (error) {
      // A link (ELOOP) or a socket (ENXIO): what lstat says it is now.
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ELOOP' || code === 'ENXIO') return this.kind(name) ?? 'unknown';
      throw error;
    }
    try {
      const stats = fstatSync(source);
      if (!stats.isFile()) return kindOf(stats);
      const target = openSync(to.#at(toName), CREATE_FLAGS, stats.mode & 0o777);
      let size = 0;
      try {
        for (;;) {
          const read = readSync(source, COPY_BUFFER, 0, COPY_BUFFER.length, size);
          if (read === 0) break;
          let written = 0;
          while (written < read) written += writeSync(target, COPY_BUFFER, written, read - written, size + written);
          size += read;
        }
        if (sync) fsyncSync(target);
      } catch (error) {
        closeSync(target);
        rmSync(to.#at(toName), { force: true });
        throw error;
      }
      closeSync(target);
      return size;
    } finally {
      closeSync(source);
    }
  }

  /** The text of the regular file `name`, of at most `limit` bytes (a link or any other entry is refused). */
  readSmallFile(name: string, limit: number): string {
    let fd: number;
    try {
      fd = openSync(this.#at(name), READ_FLAGS);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ELOOP' || code === 'ENXIO') throw new Error(`a ${this.kind(name) ?? 'missing entry'}, not a file`, { cause: error });
      throw error;
    }
    try {
      const stats = fstatSync(fd);
      if (!stats.isFile()) throw new Error(`a ${kindOf(stats)}, not a file`);
      if (stats.size > limit) throw new Error(`${stats.size} bytes, over the ${limit} a file of this kind may have`);
      const buffer = Buffer.alloc(stats.size);
      let read = 0;
      while (read < stats.size) {
        const got = readSync(fd, buffer, read, stats.size - read, read);
        if (got === 0) break;
        read += got;
      }
      return buffer.subarray(0, read).toString('utf8');
    } finally {
      closeSync(fd);
    }
  }

  /** Creates the new file `name` holding `data`, fsynced (fails if the name exists, a link included). */
  writeNewFile(name: string, data: string): void {
    const fd = openSync(this.#at(name), CREATE_FLAGS, 0o644);
    try {
      writeSync(fd, data);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }

  /** Renames `name` to `toName` in `to` (a link at `toName` is replaced, never followed). */
  rename(name: string, to: NoFollowDir, toName: string): void {
    renameSync(this.#at(name), to.#at(toName));
  }

  /** Adds `name` to `to` as `toName` without replacing anything there (EEXIST when the name is taken). */
  link(name: string, to: NoFollowDir, toName: string): void {
    linkSync(this.#at(name), to.#at(toName));
  }

  unlink(name: string): void {
    unlinkSync(this.#at(name));
  }

  /** Removes `name` (a folder with what it holds; a link itself, never its target), if there. */
  remove(name: string): void {
    rmSync(this.#at(name), { recursive: true, force: true });
  }

  /** fsyncs the directory: entries made, renamed or removed in it are on disk. */
  sync(): void {
    fsyncSync(this.#fd);
  }

  close(): void {
    closeSync(this.#fd);
  }

  /** `name` inside (or the directory itself, for null), reached through the descriptor. */
  #at(name: string | null): string {
    if (name !== null && (name === '' || name === '.' || name === '..' || name.includes('/')))
      throw new Error(`not a name inside a folder: ${JSON.stringify(name)}`);
    if (!PROC_FDS && lstatSync(this.path).ino !== this.#ino) throw new Error(`${this.path} was replaced while it was being copied`);
    return name === null ? this.#base : join(this.#base, name);
  }
}
