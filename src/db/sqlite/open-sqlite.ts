/**
 * Opens better-sqlite3 connections whose native objects are never garbage-collected.
 *
 * Node 24's `node::ObjectWrap` removes an environment cleanup hook in its destructor, and that
 * call asserts (`(env) != nullptr`, the process aborts) when V8 finalizes a better-sqlite3
 * Database or Statement during a collection that runs with no Node environment entered. Node 20
 * is unaffected; better-sqlite3 12.11 has no fix. So every Database and Statement edgeport creates
 * stays reachable until the process (or worker) ends, where Node's own cleanup hooks free them.
 * That is cheap because statements are prepared once per connection; for the same reason nothing
 * may call `db.pragma()` (a new Statement per call) or `stmt.iterate()` (a new iterator object)
 * on a hot path: use `db.exec('PRAGMA ...')` and `all()`.
 */
import BetterSqlite3 from 'better-sqlite3';
import type { Database, Statement } from 'better-sqlite3';
import { CoalescedFsync } from '../../core/fs/coalesced-fsync.ts';
import { migrateSqlite } from './migrate.ts';
import { WriteQueue } from './write-queue.ts';

const retained: object[] = [];

/** Keeps a better-sqlite3 object made elsewhere (e.g. the data dir's lock) reachable until the process ends. */
export function retainNative<T extends object>(native: T): T {
  retained.push(native);
  return native;
}

export function openSqlite(file: string): Database {
  const db = new BetterSqlite3(file);
  retained.push(db);
  const prepare = db.prepare.bind(db) as (source: string) => Statement;
  db.prepare = ((source: string) => {
    const statement = prepare(source);
    retained.push(statement);
    return statement;
  }) as Database['prepare'];
  return db;
}

/** How much of the database file a connection maps (address space; pages are shared, not copied). */
const MMAP_BYTES = 1024 * 1024 * 1024;

export interface SqliteConnection {
  db: Database;
  /** Group-committed, durable writes (see write-queue.ts). */
  writes: WriteQueue;
}

/**
 * A store's connection to edgeport's database file: WAL mode, commits without fsync (WriteQueue
 * fsyncs the WAL before any write resolves), a 10 s busy timeout, migrations applied. With
 * `autoCheckpoint: false` the connection leaves checkpoints to the checkpointer thread.
 */
export function openSqliteConnection(file: string, options: { autoCheckpoint: boolean; now: number }): SqliteConnection {
  const db = openSqlite(file);
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA synchronous = NORMAL');
  db.exec('PRAGMA busy_timeout = 10000');
  db.exec('PRAGMA foreign_keys = OFF');
  // Reads map the database file instead of copying each page in with pread (an inline body's
  // lookup: 13 -> 9 us here). SQLite still writes with write(), so durability is unchanged.
  db.exec(`PRAGMA mmap_size = ${MMAP_BYTES}`);
  if (!options.autoCheckpoint) db.exec('PRAGMA wal_autocheckpoint = 0');
  migrateSqlite(db, options.now);
  return { db, writes: new WriteQueue(db, new CoalescedFsync(`${file}-wal`, { dataOnly: true })) };
}
