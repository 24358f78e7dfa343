/**
 * A file outside what a command may touch, with a unique marker as its content, for tests that
 * plant links to it: `unchanged()` tells whether it was written (size, inode, modification and
 * change times: no write leaves them as they were; it reads nothing, so it never counts as a read),
 * `read()` whether it was read, by its access time. The access time is set before its
 * modification time first, which makes even a `relatime` mount record the next read; on a mount
 * that records no reads (`noatime`) `readTracked` is false and `read()` always answers false.
 */
import { randomUUID } from 'node:crypto';
import { closeSync, openSync, readdirSync, readFileSync, readSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

export interface OutsideFile {
  path: string;
  marker: string;
  /** Whether this file system records reads (checked on a sibling file). */
  readTracked: boolean;
  unchanged(): boolean;
  read(): boolean;
}

const OLD = new Date('2020-01-01T00:00:00Z');

export function outsideFile(dir: string, name = 'outside-secret.txt'): OutsideFile {
  const marker = `OUTSIDE-MARKER-${randomUUID()}`;
  const path = join(dir, name);
  writeFileSync(path, `${marker}\n`);
  utimesSync(path, OLD, statSync(path).mtime);
  const before = statSync(path);
  const probe = join(dir, `${name}.read-probe`);
  writeFileSync(probe, 'probe');
  utimesSync(probe, OLD, statSync(probe).mtime);
  const fd = openSync(probe, 'r');
  readSync(fd, Buffer.alloc(5));
  closeSync(fd);
  const readTracked = statSync(probe).atimeMs !== OLD.getTime();
  return {
    path,
    marker,
    readTracked,
    unchanged: () => {
      const now = statSync(path);
      return now.size === before.size && now.ino === before.ino && now.mtimeMs === before.mtimeMs && now.ctimeMs === before.ctimeMs;
    },
    read: () => statSync(path).atimeMs !== OLD.getTime(),
  };
}

/** The files under `root` (links not followed) whose content holds `marker`, by path relative to `root`. */
export function filesHolding(root: string, marker: string): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() && readFileSync(path).includes(marker)) found.push(relative(root, path));
    }
  };
  walk(root);
  return found;
}
