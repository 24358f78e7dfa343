/**
 * Group commit for SQLite: queued writes run in ONE transaction, each inside its own savepoint so
 * a failing write does not undo the others. The database runs with synchronous=NORMAL, so the
 * commit itself does not fsync; instead the WAL file is fsynced off the event loop, and only then
 * do the writes resolve. A write therefore resolves only once durable, while the thread goes on
 * serving reads and gathering the next batch during the fsync.
 *
 * A batch commits at the end of the event loop's turn, unless this queue's previous batch is still
 * being fsynced: then it waits for that fsync to end. Its writes could not resolve sooner (they
 * need an fsync that starts after their commit, which is the next one either way), and everything
 * that arrived meanwhile commits together: one lock, one commit and one fsync for the lot, where
 * committing every turn paid the lock and the commit (WAL writes, file locks: each a system call)
 * once per turn for the same fsync.
 */
import type { Database, Statement } from 'better-sqlite3';
import type { CoalescedFsync } from '../../core/fs/coalesced-fsync.ts';

/** How long a write waits for another connection's write lock before failing with SQLITE_BUSY. */
export const LOCK_TIMEOUT_MS = 10_000;
/** Never notified: Atomics.wait on it is a precise sleep. */
const PAUSE = new Int32Array(new SharedArrayBuffer(4));

interface QueuedWrite {
  run: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export class WriteQueue {
  readonly #db: Database;
  readonly #wal: CoalescedFsync;
  readonly #savepoint: Statement;
  readonly #release: Statement;
  readonly #rollbackTo: Statement;
  readonly #begin: Statement;
  readonly #commit: Statement;
  readonly #rollback: Statement;
  #pending: QueuedWrite[] = [];
  #scheduled = false;
  /** This queue's last commit is being fsynced: the next batch waits for it. */
  #syncing = false;

  constructor(db: Database, wal: CoalescedFsync) {
    this.#db = db;
    this.#wal = wal;
    this.#savepoint = db.prepare('SAVEPOINT write');
    this.#release = db.prepare('RELEASE write');
    this.#rollbackTo = db.prepare('ROLLBACK TO write');
    this.#begin = db.prepare('BEGIN IMMEDIATE');
    this.#commit = db.prepare('COMMIT');
    this.#rollback = db.prepare('ROLLBACK');
  }

  /** Runs `write` inside the next group transaction; resolves after that transaction committed. */
  run<T>(write: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#pending.push({ run: write, resolve: resolve as (value: unknown) => void, reject });
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#scheduled || this.#syncing || this.#pending.length === 0) return;
    this.#scheduled = true;
    setImmediate(() => this.#flush());
  }

  /** Lets the WAL file go, once the writes already queued are durable (call after the last write). */
  close(): Promise<void> {
    return this.#wal.close();
  }

  /**
   * Takes the write lock. Another connection (a script worker's) may hold it for a commit's
   * duration, well under a millisecond; SQLite's own busy handler would sleep 1, 2, 5, 10 ms and
   * more between tries, so the lock is polled here every 100 µs instead (up to LOCK_TIMEOUT_MS).
   */
  #beginImmediate(): void {
    const deadline = Date.now() + LOCK_TIMEOUT_MS;
    this.#db.exec('PRAGMA busy_timeout = 0');
    try {
      for (;;) {
        try {
          this.#begin.run();
          return;
        } catch (error) {
          if ((error as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() > deadline) throw error;
          Atomics.wait(PAUSE, 0, 0, 0.1);
        }
      }
    } finally {
      this.#db.exec(`PRAGMA busy_timeout = ${LOCK_TIMEOUT_MS}`);
    }
  }

  #flush(): void {
    this.#scheduled = false;
    const batch = this.#pending;
    this.#pending = [];
    const outcomes: Array<{ ok: boolean; value: unknown }> = [];
    try {
      this.#beginImmediate();
      try {
        for (const write of batch) {
          this.#savepoint.run();
          try {
            outcomes.push({ ok: true, value: write.run() });
            this.#release.run();
          } catch (error) {
            this.#rollbackTo.run();
            this.#release.run();
            outcomes.push({ ok: false, value: error });
          }
        }
        this.#commit.run();
      } catch (error) {
        if (this.#db.inTransaction) this.#rollback.run();
        throw error;
      }
    } catch (error) {
      for (const write of batch) write.reject(error);
      return;
    }
    this.#syncing = true;
    this.#wal
      .sync()
      .then(
        () => {
          batch.forEach((write, i) => {
            const outcome = outcomes[i]!;
            if (outcome.ok) write.resolve(outcome.value);
            else write.reject(outcome.value);
          });
        },
        (error: unknown) => {
          for (const write of batch) write.reject(error);
        },
      )
      .finally(() => {
        this.#syncing = false;
        this.#schedule();
      });
  }
}
