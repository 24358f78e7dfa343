import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test, type TestContext } from 'node:test';
import { FakeClock } from '../../src/core/clock.ts';
import { SqliteMetadataStore } from '../../src/db/sqlite/sqlite-metadata-store.ts';
import type { Logger } from '../../src/core/log.ts';
import { startWalCheckpointer, walRestartLogger, type WalRestart } from '../../src/db/sqlite/wal-checkpointer.ts';
import { openStoreEngine } from '../../src/store/engine/open-store-engine.ts';
import { objectMeta } from '../helpers/engine.ts';
import { tempDir } from '../helpers/temp-dir.ts';

async function fill(dataDir: string, background: boolean): Promise<number> {
  const engine = await openStoreEngine({ dataDir, maintenance: background, backgroundCheckpoints: true });
  await engine.ensureBucket('wal-test');
  const body = new Uint8Array(4096).fill(7);
  await Promise.all(Array.from({ length: 1500 }, (_, i) => engine.put('wal-test', `k${i}`, body)));
  await sleep(600);
  const size = statSync(join(dataDir, 'metadata.sqlite')).size;
  await engine.close();
  return size;
}

test('with background checkpoints, commits leave checkpointing to the checkpointer thread', { timeout: 30_000 }, async (t) => {
  const withoutThread = await fill(tempDir(t), false);
  const withThread = await fill(tempDir(t), true);
  assert.ok(withoutThread < 1024 * 1024, `no checkpoint ran during commits (db file ${withoutThread} bytes)`);
  assert.ok(withThread > 5 * 1024 * 1024, `the checkpointer copied the WAL into the db file (${withThread} bytes)`);
});

/** The WAL header's checkpoint sequence number: SQLite adds one each time it starts the WAL over. */
function walSequence(file: string): number {
  const fd = openSync(`${file}-wal`, 'r');
  try {
    const header = Buffer.alloc(32);
    readSync(fd, header, 0, 32, 0);
    return header.readUInt32BE(12);
  } finally {
    closeSync(fd);
  }
}

/** A metadata store of its own (bucket `b`, checkpoints left to a checkpointer thread), closed when the test ends. */
async function storeWithBucket(t: TestContext): Promise<{ file: string; meta: SqliteMetadataStore }> {
  const file = join(tempDir(t), 'metadata.sqlite');
  const meta = new SqliteMetadataStore({ file, clock: new FakeClock(0), reclaimGraceMs: 0, autoCheckpoint: false });
  t.after(() => meta.close());
  await meta.insertBucket({ name: 'b', created: 0, storageClass: 'Standard' });
  return { file, meta };
}

/** `count` writers putting 1 KiB objects `k0`, `k1`, ... into bucket `b`, each pausing `pauseMs` between puts (0: none). */
function startWriters(meta: SqliteMetadataStore, count: number, pauseMs: number): { puts(): number; stop(): Promise<void> } {
  const body = new Uint8Array(1024).fill(7);
  let puts = 0;
  let writing = true;
  const writers = Array.from({ length: count }, async () => {
    while (writing) {
      const key = `k${puts++}`;
      await meta.putObject('b', objectMeta(key, key, 1024), { kind: 'inline', bytes: body });
      if (pauseMs > 0) await sleep(pauseMs);
    }
  });
  return {
    puts: () => puts,
    async stop() {
      writing = false;
      await Promise.all(writers);
    },
  };
}

/** Puts under steady writes for 40 rounds of a checkpointer making `passes` passes a round: how often the WAL started over. */
async function steadyWrites(t: TestContext, passes: number): Promise<{ restarts: number; rounds: number; puts: number }> {
  const { file, meta } = await storeWithBucket(t);
  const checkpointer = startWalCheckpointer(file, { intervalMs: 50, passes });
  // Four writers, each pausing a millisecond between puts: a commit about every one to two ms.
  const writers = startWriters(meta, 4, 1);
  try {
    await sleep(200);
    const before = walSequence(file);
    const roundsBefore = checkpointer.rounds();
    // 2 s at 50 ms a round; longer when the machine is busy and the thread runs late (at most 10 s).
    for (const deadline = Date.now() + 10_000; checkpointer.rounds() - roundsBefore < 40 && Date.now() < deadline;) await sleep(50);
    return { restarts: walSequence(file) - before, rounds: checkpointer.rounds() - roundsBefore, puts: writers.puts() };
  } finally {
    await writers.stop();
    await checkpointer.stop();
  }
}

test('under steady writes the WAL starts over far more often than with one checkpoint pass a round, instead of growing', { timeout: 60_000 }, async (t) => {
  // Both under the same load: how often a round catches up falls as the machine gets busier
  // (measured: 30-36 restarts in 40 rounds against 0-5 with one pass; while a full test suite ran
  // beside it, 10-19 against 0-2).
  const several = await steadyWrites(t, 5);
  const single = await steadyWrites(t, 1);
  const report = `${several.restarts} restarts in ${several.rounds} rounds (${several.puts} puts), with one pass ${single.restarts} in ${single.rounds} (${single.puts} puts)`;
  assert.ok(several.rounds >= 10 && single.rounds >= 10, `the checkpointer ran too few rounds: ${report}`);
  t.diagnostic(report);
  assert.ok(several.restarts >= 5 && several.restarts >= 1.5 * single.restarts, report);
});

test('past its bound the WAL is started over by a blocking checkpoint, and no write is lost', { timeout: 30_000 }, async (t) => {
  const { file, meta } = await storeWithBucket(t);
  const maxWalBytes = 64 * 1024;
  const restarts: WalRestart[] = [];
  const checkpointer = startWalCheckpointer(file, { intervalMs: 100, maxWalBytes, onRestart: (restart) => restarts.push(restart) });
  t.after(() => checkpointer.stop());
  // Sixteen writers without pause: commits as fast as the queue makes them.
  const writers = startWriters(meta, 16, 0);
  await sleep(200);
  const before = walSequence(file);
  await sleep(1_500);
  await writers.stop();
  const n = writers.puts();
  assert.ok(restarts.length > 0, `no round restarted the WAL in 1.5 s of ${n} puts`);
  for (const restart of restarts) assert.ok(restart.frames * 4096 > maxWalBytes, `a restart at ${restart.frames} frames, within the bound`);
  assert.ok(walSequence(file) - before >= 1, 'the WAL started over');
  // Every put is there: a restart only moves frames into the database.
  for (const i of [0, Math.floor(n / 2), n - 1]) assert.ok(await meta.headObject('b', `k${i}`), `k${i} is readable`);
  const check = new Database(file, { readonly: true });
  t.after(() => check.close());
  assert.equal(check.prepare("SELECT count(*) FROM objects WHERE bucket = 'b'").pluck().get(), n);
  assert.equal(check.pragma('integrity_check', { simple: true }), 'ok');
});

test('WAL restarts are logged at most once a minute, with how many came and the longest hold', { timeout: 10_000 }, () => {
  const lines: Array<Record<string, unknown>> = [];
  const logger = { info: (fields: Record<string, unknown>) => lines.push(fields) } as unknown as Logger;
  let now = 0;
  const report = walRestartLogger(logger, () => now);
  report({ frames: 20_000, busy: false, ms: 1.5 });
  now = 30_000;
  report({ frames: 21_000, busy: false, ms: 9.25 });
  now = 59_000;
  report({ frames: 22_000, busy: true, ms: 2 });
  assert.equal(lines.length, 1);
  now = 61_000;
  report({ frames: 23_000, busy: false, ms: 3 });
  assert.equal(lines.length, 2);
  assert.deepEqual(lines[1], { restarts: 3, longestHoldMs: 9.3, frames: 23_000, readersKeptIt: false });
});
