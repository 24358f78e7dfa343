/** The job spool: appends survive reopening, batches respect limits, a torn tail is cut, in-flight ranges repeat exactly, the cursor is durable, the caps hold. */
import assert from 'node:assert/strict';
import { appendFileSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { JobSpool } from '../../src/logs/spool/job-spool.ts';
import { SpoolBudget } from '../../src/logs/spool/spool-budget.ts';
import { traceFs } from '../helpers/fs-trace.ts';
import { tempDir } from '../helpers/temp-dir.ts';

test('appended records come back in order, in batches within the limits, across reopening', { timeout: 10_000 }, async (t) => {
  const dir = join(tempDir(t), 'job');
  const spool = JobSpool.open(dir);
  for (let i = 0; i < 250; i++) spool.append(`{"n":${i}}\n`, 1000 + i);
  spool.close();

  const reopened = JobSpool.open(dir);
  const first = reopened.readBatch(100, 1_000_000)!;
  assert.equal(first.texts.length, 100);
  assert.equal(first.texts[0], '{"n":0}\n');
  assert.equal(first.firstTime, 1000);
  assert.equal(first.lastTime, 1099);
  await reopened.markInflight(first);
  await reopened.commit(first);
  const second = reopened.readBatch(1000, 20 * 10)!;
  assert.equal(second.texts.length, 20, 'the byte limit cuts the batch');
  assert.equal(second.texts[0], '{"n":100}\n');
  await reopened.commit(second);
  const rest = reopened.readBatch(1000, 1_000_000)!;
  assert.equal(rest.texts.length, 130);
  await reopened.commit(rest);
  assert.equal(reopened.readBatch(1000, 1_000_000), null);
  assert.equal(reopened.pendingBytes, 0);
});

test('a batch marked in flight is read again exactly, even after more records arrive', { timeout: 10_000 }, async (t) => {
  const dir = join(tempDir(t), 'job');
  const spool = JobSpool.open(dir);
  for (let i = 0; i < 10; i++) spool.append(`r${i}`, i);
  const batch = spool.readBatch(5, 1_000_000)!;
  await spool.markInflight(batch);
  spool.close();

  const after = JobSpool.open(dir);
  after.append('late', 99);
  assert.deepEqual(after.inflight, { start: batch.start, end: batch.end });
  const again = after.readBatch(1000, 1_000_000)!;
  assert.deepEqual(again.texts, ['r0', 'r1', 'r2', 'r3', 'r4']);
  await after.commit(again);
  assert.deepEqual(after.readBatch(1000, 1_000_000)!.texts, ['r5', 'r6', 'r7', 'r8', 'r9', 'late']);
});

test('a torn entry at the end (killed mid-write) is cut off when the spool opens', { timeout: 10_000 }, (t) => {
  const dir = join(tempDir(t), 'job');
  const spool = JobSpool.open(dir);
  spool.append('whole', 1);
  spool.close();
  const segment = readdirSync(dir).find((name) => name.endsWith('.spool'))!;
  appendFileSync(join(dir, segment), Buffer.from([200, 0, 0, 0, 1, 2, 3]));
  const reopened = JobSpool.open(dir);
  reopened.append('next', 2);
  assert.deepEqual(reopened.readBatch(10, 1_000_000)!.texts, ['whole', 'next']);
});

test('property: any texts round-trip through any batch sizes, each exactly once', { timeout: 10_000 }, async (t) => {
  const root = tempDir(t);
  let run = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.string({ unit: 'grapheme', maxLength: 40 }), { maxLength: 60 }),
      fc.integer({ min: 1, max: 20 }),
      fc.integer({ min: 1, max: 400 }),
      async (texts, maxRecords, maxBytes) => {
        const spool = JobSpool.open(join(root, String(run++)));
        texts.forEach((text, i) => spool.append(text, i));
        const seen: string[] = [];
        for (let batch = spool.readBatch(maxRecords, maxBytes); batch; batch = spool.readBatch(maxRecords, maxBytes)) {
          assert.ok(batch.texts.length <= maxRecords);
          seen.push(...batch.texts);
          await spool.commit(batch);
        }
        spool.remove();
        assert.deepEqual(seen, texts);
      },
    ),
    { numRuns: 60 },
  );
});

test('property: texts staged in groups (one write per group, some larger than the stage buffer) round-trip in order', { timeout: 30_000 }, async (t) => {
  const root = tempDir(t);
  let run = 0;
  const text = fc.oneof(fc.string({ unit: 'grapheme', maxLength: 40 }), fc.string({ unit: 'grapheme', minLength: 30_000, maxLength: 40_000 }));
  await fc.assert(
    fc.asyncProperty(fc.array(fc.tuple(text, fc.boolean()), { maxLength: 30 }), async (entries) => {
      const spool = JobSpool.open(join(root, String(run++)));
      entries.forEach(([value, flushAfter], i) => {
        spool.stage(value, i);
        if (flushAfter) spool.flush();
      });
      spool.close();
      const reopened = JobSpool.open(join(root, String(run - 1)));
      const seen: string[] = [];
      for (let batch = reopened.readBatch(1000, 100_000_000); batch; batch = reopened.readBatch(1000, 100_000_000)) {
        seen.push(...batch.texts);
        await reopened.commit(batch);
      }
      reopened.remove();
      assert.deepEqual(
        seen,
        entries.map(([value]) => value),
      );
    }),
    { numRuns: 40 },
  );
});

test(
  'the cursor is written durably: fsynced before its rename, its directory fsynced after, for in-flight marks and commits',
  { timeout: 20_000 },
  async (t) => {
    const dir = join(tempDir(t), 'job');
    const spool = JobSpool.open(dir);
    for (let i = 0; i < 10; i++) spool.append(`r${i}`, i);
    const batch = spool.readBatch(5, 1_000_000)!;
    const trace = await traceFs(t, dir);
    const cursor = join(dir, 'cursor.json');
    const durableWrite = [
      { op: 'open', path: `${cursor}.tmp` },
      { op: 'sync', path: `${cursor}.tmp` },
      { op: 'rename', path: `${cursor}.tmp`, to: cursor },
      { op: 'open', path: dir },
      { op: 'sync', path: dir },
    ];
    await spool.markInflight(batch);
    assert.deepEqual(trace.calls, durableWrite);
    assert.deepEqual(JSON.parse(readFileSync(cursor, 'utf8')).inflight, { start: batch.start, end: batch.end });
    await spool.commit(batch);
    assert.deepEqual(trace.calls, [...durableWrite, ...durableWrite]);
    assert.deepEqual(JSON.parse(readFileSync(cursor, 'utf8')), { committed: batch.end, inflight: null });
    spool.close();
  },
);

test(
  'a capped spool: a record that does not fit is dropped and counted, the segment files never pass the cap, room comes back as batches are delivered; a shared budget bounds spools together',
  { timeout: 10_000 },
  async (t) => {
    const root = tempDir(t);
    const onDisk = (dir: string) =>
      readdirSync(dir)
        .filter((name) => name.endsWith('.spool'))
        .reduce((sum, name) => sum + statSync(join(dir, name)).size, 0);
    const cap = 64 * 1024;
    const budget = new SpoolBudget(96 * 1024);
    const [a, b] = [JobSpool.open(join(root, 'a'), { maxBytes: cap, budget }), JobSpool.open(join(root, 'b'), { maxBytes: cap, budget })];
    const line = 'x'.repeat(1000);
    let accepted = 0;
    for (let i = 0; i < 100; i++) if (a.append(line, i)) accepted += 1;
    assert.equal(accepted, Math.floor(cap / (line.length + 12)));
    assert.equal(a.dropped, 100 - accepted);
    assert.ok(onDisk(a.dir) <= cap && onDisk(a.dir) === a.diskBytes);
    // b gets only what is left of the budget.
    let acceptedB = 0;
    for (let i = 0; i < 100; i++) if (b.append(line, i)) acceptedB += 1;
    assert.equal(acceptedB, Math.floor((96 * 1024 - a.diskBytes) / (line.length + 12)));
    assert.ok(budget.usedBytes <= 96 * 1024 && budget.usedBytes === a.diskBytes + b.diskBytes);
    // Delivering a's spool frees its segments (all but the newest): room again, for a and for b.
    for (let batch = a.readBatch(10, 1_000_000); batch; batch = a.readBatch(10, 1_000_000)) {
      await a.markInflight(batch);
      await a.commit(batch);
    }
    assert.ok(a.diskBytes < cap / 4, `the delivered segments are gone: ${a.diskBytes}`);
    assert.equal(a.append(line, 1), true);
    assert.equal(b.append(line, 1), true);
    // Removing a spool gives its bytes back.
    const before = budget.usedBytes;
    const held = a.diskBytes;
    a.remove();
    assert.equal(budget.usedBytes, before - held);
    b.close();
  },
);
