/**
 * The SQLite write queue (src/db/sqlite/write-queue.ts) on a real database file: writes resolve
 * once committed and fsynced, a failing write leaves the others of its batch alone, and writes that
 * arrive while the previous batch is being fsynced commit together once it ends. Transactions are
 * told apart by a second connection: inside one transaction every write sees the same committed
 * row count there; the next transaction sees the last one's rows.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { openSqlite, openSqliteConnection } from '../../src/db/sqlite/open-sqlite.ts';

function openQueue(t: { after: (fn: () => unknown) => void }) {
  const dir = mkdtempSync(join(tmpdir(), 'edgeport-write-queue-'));
  const file = join(dir, 'metadata.sqlite');
  const { db, writes } = openSqliteConnection(file, { autoCheckpoint: true, now: 0 });
  db.exec('CREATE TABLE t (n INTEGER)');
  const reader = openSqlite(file);
  const insert = db.prepare('INSERT INTO t (n) VALUES (?)');
  const committed = reader.prepare('SELECT count(*) AS c FROM t');
  t.after(async () => {
    await writes.close();
    db.close();
    reader.close();
    rmSync(dir, { recursive: true, force: true });
  });
  /** Queues an insert; resolves to the row count other connections saw when it ran (its transaction's start). */
  const write = (n: number) =>
    writes.run(() => {
      insert.run(n);
      return (committed.get() as { c: number }).c;
    });
  return { writes, write, committedRows: () => (committed.get() as { c: number }).c };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

test('a write resolves with its value once committed; a failing write is refused alone', { timeout: 10_000 }, async (t) => {
  const { writes, write, committedRows } = openQueue(t);
  const failing = writes.run(() => {
    throw new Error('refused');
  });
  const [first, second] = await Promise.all([write(1), write(2), assert.rejects(failing, /refused/)]);
  assert.equal(first, 0);
  assert.equal(second, 0, 'both ran in the same transaction');
  assert.equal(committedRows(), 2, 'the failed write undid nothing of the others');
});

test('writes that arrive while a batch is fsynced commit together after it, not one transaction per turn', { timeout: 10_000 }, async (t) => {
  const { write } = openQueue(t);
  const WRITES = 40;
  const seen: Array<Promise<number>> = [];
  // One write per turn of the event loop: committing each turn would make 40 transactions.
  for (let i = 0; i < WRITES; i++) {
    seen.push(write(i));
    await turn();
  }
  const counts = await Promise.all(seen);
  const transactions = new Set(counts).size;
  // An fsync goes through the thread pool and the disk: it spans several turns.
  assert.ok(transactions <= WRITES / 2, `${transactions} transactions for ${WRITES} writes`);
  assert.deepEqual(
    counts,
    [...counts].sort((a, b) => a - b),
    'batches commit in order',
  );
});
