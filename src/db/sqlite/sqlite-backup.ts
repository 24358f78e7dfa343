/**
 * A consistent copy of edgeport's SQLite database while a server writes to it, with SQLite's
 * online backup API (better-sqlite3's `backup`), and the blob ids a database refers to (to check a
 * backup's bodies). The copy is one snapshot: the backup's steps copy every page at once (a step
 * holds one read transaction; in WAL mode it never blocks the server's writers), so a write the
 * server commits meanwhile restarts nothing and is simply not in it.
 */
import BetterSqlite3 from 'better-sqlite3';
import { retainNative } from './open-sqlite.ts';

/** Pages per backup step: all of them, so a step is one snapshot. */
const ALL_PAGES = 2 ** 30;

/** Copies the database `file` into `destination` (a new file); resolves with its size in pages. */
export async function backupSqliteDatabase(file: string, destination: string): Promise<number> {
  const db = retainNative(new BetterSqlite3(file, { readonly: true, fileMustExist: true, timeout: 10_000 }));
  try {
    const { totalPages } = await db.backup(destination, { progress: () => ALL_PAGES });
    return totalPages;
  } finally {
    db.close();
  }
}

/** Every blob id the database's objects, completed parts and upload parts refer to. */
export function referencedBlobIds(file: string): string[] {
  const db = retainNative(new BetterSqlite3(file, { readonly: true, fileMustExist: true }));
  try {
    return db
      .prepare(
        `SELECT blob_id FROM objects WHERE blob_id IS NOT NULL
      UNION SELECT blob_id FROM object_parts UNION SELECT blob_id FROM upload_parts`,
      )
      .pluck()
      .all() as string[];
  } finally {
    db.close();
  }
}
