/**
 * Lifecycle rules (src/store/engine/lifecycle.ts) and their sweeper (lifecycle-sweeper.ts) on a
 * real engine and the injected clock: due objects expire or move, due uploads are aborted, each
 * once, account usage stays exact; a sweep cut short resumes where it stopped under a new holder;
 * on PostgreSQL two instances sweeping at once delete every due object exactly once.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeClock } from '../../../src/core/clock.ts';
import { silentLogger } from '../../../src/core/log.ts';
import { PgDatabase } from '../../../src/db/postgres/pg-database.ts';
import { StoreError } from '../../../src/store/engine/errors.ts';
import { assertLifecycleRules, dueAction, dueAt, expiryOf, scanPrefixes, uploadDue, type LifecycleRule } from '../../../src/store/engine/lifecycle.ts';
import { LifecycleSweeper } from '../../../src/store/engine/lifecycle-sweeper.ts';
import { openStoreEngine } from '../../../src/store/engine/open-store-engine.ts';
import { openTestEngine } from '../../helpers/engine.ts';
import { pgTestUrl } from '../../helpers/postgres.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

const DAY = 86_400_000;
const rule = (over: Partial<LifecycleRule>): LifecycleRule => ({ id: 'r', enabled: true, prefix: '', ...over });

test('rules are validated: ids unique and bounded, an action each, ages whole and positive, a transition before its expiration', { timeout: 10_000 }, () => {
  const refused = (rules: LifecycleRule[], message: RegExp) =>
    assert.throws(
      () => assertLifecycleRules(rules),
      (error: unknown) => error instanceof StoreError && error.code === 'STORE_INVALID_LIFECYCLE' && message.test(error.message),
    );
  refused([rule({})], /has no action/);
  refused([rule({ expiration: { afterSeconds: 0 } })], /at least 1/);
  refused([rule({ expiration: { afterSeconds: 1.5 } })], /whole number/);
  refused([rule({ id: 'x', expiration: { afterSeconds: 60 } }), rule({ id: 'x', abortUploadsAfterSeconds: 60 })], /two rules have the id "x"/);
  refused([rule({ id: '', expiration: { afterSeconds: 60 } })], /1 to 255 characters/);
  refused([rule({ prefix: 'p'.repeat(1025), expiration: { afterSeconds: 60 } })], /at most 1024 bytes/);
  refused([rule({ expiration: { afterSeconds: 60 }, transition: { afterSeconds: 60 } })], /must come before its expiration/);
  refused(
    Array.from({ length: 1001 }, (_, i) => rule({ id: `r${i}`, expiration: { afterSeconds: 60 } })),
    /at most 1000 rules/,
  );
  assertLifecycleRules([rule({ expiration: { date: Date.UTC(2030, 0, 1) }, transition: { afterSeconds: 60 }, abortUploadsAfterSeconds: 86_400 })]);
});

test(
  'what is due: expiration before transition, by age or date; disabled rules and other prefixes never; scan prefixes are the fewest that cover',
  { timeout: 10_000 },
  () => {
    const now = Date.UTC(2026, 0, 10);
    const rules = [
      rule({ id: 'logs', prefix: 'logs/', expiration: { afterSeconds: 86_400 } }),
      rule({ id: 'archive', prefix: 'archive/', transition: { afterSeconds: 86_400 } }),
      rule({ id: 'tmp', prefix: 'tmp/', expiration: { date: now } }),
      rule({ id: 'off', prefix: 'off/', enabled: false, expiration: { afterSeconds: 1 } }),
      rule({ id: 'nested', prefix: 'logs/old/', abortUploadsAfterSeconds: 60 }),
    ];
    const object = (key: string, age: number, storageClass: 'Standard' | 'InfrequentAccess' = 'Standard') => ({ key, uploaded: now - age, storageClass });
    assert.equal(dueAction(rules, object('logs/a', DAY), now), 'expire');
    assert.equal(dueAction(rules, object('logs/a', DAY - 1), now), undefined);
    assert.equal(dueAction(rules, object('archive/a', DAY), now), 'transition');
    assert.equal(dueAction(rules, object('archive/a', DAY, 'InfrequentAccess'), now), undefined, 'already moved');
    assert.equal(dueAction(rules, object('tmp/new', 0), now), 'expire', 'a date expires every object, new ones too');
    assert.equal(dueAction(rules, object('tmp/x', 0), now - 1), undefined);
    assert.equal(dueAction(rules, object('off/x', DAY), now), undefined);
    assert.equal(dueAction(rules, object('other', 10 * DAY), now), undefined);
    assert.deepEqual(scanPrefixes(rules), ['archive/', 'logs/', 'tmp/']);
    assert.deepEqual(scanPrefixes([...rules, rule({ id: 'all', expiration: { afterSeconds: 1 } })]), ['']);
    assert.deepEqual(scanPrefixes(rules, true), ['logs/old/']);
    assert.equal(uploadDue(rules, 'logs/old/u', now - 60_000, now), true);
    assert.equal(uploadDue(rules, 'logs/new/u', now - 60_000, now), false);
  },
);

test(
  'when an action falls due: whole days to the next midnight UTC (S3), other ages exactly, dates as given; the earliest expiry names its rule',
  { timeout: 10_000 },
  () => {
    const noon = Date.UTC(2026, 0, 10, 12);
    assert.equal(dueAt({ afterSeconds: 86_400 }, noon), Date.UTC(2026, 0, 12));
    assert.equal(dueAt({ afterSeconds: 86_400 }, Date.UTC(2026, 0, 10)), Date.UTC(2026, 0, 11), 'a midnight stays');
    assert.equal(dueAt({ afterSeconds: 3 * 86_400 }, Date.UTC(2026, 0, 10) + 1), Date.UTC(2026, 0, 14));
    assert.equal(dueAt({ afterSeconds: 3600 }, noon), noon + 3600_000);
    assert.equal(dueAt({ date: Date.UTC(2027, 0, 1) }, noon), Date.UTC(2027, 0, 1));
    const rules = [
      rule({ id: 'month', expiration: { afterSeconds: 30 * 86_400 } }),
      rule({ id: 'tmp', prefix: 'tmp/', expiration: { afterSeconds: 86_400 } }),
      rule({ id: 'off', prefix: 'tmp/', enabled: false, expiration: { afterSeconds: 60 } }),
      rule({ id: 'move', prefix: 'tmp/', transition: { afterSeconds: 60 } }),
    ];
    assert.deepEqual(expiryOf(rules, 'tmp/x', noon), { at: Date.UTC(2026, 0, 12), ruleId: 'tmp' });
    assert.deepEqual(expiryOf(rules, 'other', noon), { at: Date.UTC(2026, 1, 10), ruleId: 'month' });
    assert.equal(expiryOf(rules.slice(1), 'other', noon), undefined);
  },
);

test("a sweep expires, moves and aborts what is due, each once, and keeps the account's usage exact", { timeout: 30_000 }, async (t) => {
  const { engine, clock, bucket } = await openTestEngine(t);
  await engine.putBucketLifecycle(bucket, [
    rule({ id: 'logs', prefix: 'logs/', expiration: { afterSeconds: 86_400 } }),
    rule({ id: 'archive', prefix: 'archive/', transition: { afterSeconds: 3600 } }),
    rule({ id: 'uploads', prefix: 'up/', abortUploadsAfterSeconds: 86_400 }),
  ]);
  assert.equal((await engine.getBucketLifecycle(bucket))?.length, 3);
  for (let i = 0; i < 25; i++) await engine.put(bucket, `logs/${String(i).padStart(2, '0')}`, new Uint8Array(10));
  await engine.put(bucket, 'archive/a', new Uint8Array(7));
  await engine.put(bucket, 'keep', new Uint8Array(3));
  const stale = await engine.createMultipartUpload(bucket, 'up/stale');
  await engine.uploadPart(bucket, 'up/stale', stale, 1, new Uint8Array(100));
  const sweeper = new LifecycleSweeper({ meta: engine.metadata, clock, logger: silentLogger, pageSize: 4, pagesPerPass: 3 });

  assert.equal(await sweeper.runCycle(), 'done');
  assert.deepEqual([sweeper.stats.expiredObjects, sweeper.stats.transitionedObjects, sweeper.stats.abortedUploads], [0, 0, 0], 'nothing due yet');
  clock.advance(3600_000);
  await engine.put(bucket, 'logs/late', new Uint8Array(5));
  await sweeper.runCycle();
  assert.equal((await engine.head(bucket, 'archive/a'))?.storageClass, 'InfrequentAccess');
  assert.equal(sweeper.stats.transitionedObjects, 1);
  // The upload's age counts exactly; the objects' whole day is rounded up to the next midnight UTC, as S3 counts it.
  clock.advance(DAY - 3600_000);
  const fresh = await engine.createMultipartUpload(bucket, 'up/fresh');
  await engine.put(bucket, 'logs/later', new Uint8Array(5));
  assert.equal(await sweeper.runCycle(), 'done');
  assert.deepEqual([sweeper.stats.expiredObjects, sweeper.stats.abortedUploads], [0, 1], 'a day later, not yet midnight: only the upload');
  clock.set(Date.UTC(2026, 10, 24) - 1);
  await sweeper.runCycle();
  assert.equal(sweeper.stats.expiredObjects, 0, 'one millisecond before the midnight');
  clock.set(Date.UTC(2026, 10, 24));
  assert.equal(await sweeper.runCycle(), 'done');
  assert.deepEqual([sweeper.stats.expiredObjects, sweeper.stats.abortedUploads, sweeper.stats.cycles], [26, 1, 5]);
  assert.deepEqual(
    (await engine.list(bucket)).objects.map((o) => o.key),
    ['archive/a', 'keep', 'logs/later'],
    'the one put a day later is not due yet',
  );
  assert.deepEqual(
    (await engine.listUploads(bucket)).map((u) => u.uploadId),
    [fresh],
  );
  const usage = await engine.accountUsage(null);
  assert.deepEqual([usage.objectBytes, usage.objectCount], [15, 3], 'every deletion and abort gave its space back');
  // Again: nothing more is due, nothing is counted twice.
  await sweeper.runCycle();
  assert.deepEqual([sweeper.stats.expiredObjects, sweeper.stats.abortedUploads], [26, 1]);
});

test('an object written again after the sweep saw it is another object: not deleted until it is due itself', { timeout: 10_000 }, async (t) => {
  const { engine, clock, bucket } = await openTestEngine(t);
  await engine.putBucketLifecycle(bucket, [rule({ expiration: { afterSeconds: 60 } })]);
  await engine.put(bucket, 'k', new Uint8Array(1));
  clock.advance(60_000);
  const meta = engine.metadata;
  // The sweep reads a page, then the key is rewritten before its deletion runs.
  const listObjects = meta.listObjects.bind(meta);
  meta.listObjects = async (...args) => {
    const page = await listObjects(...args);
    await engine.put(bucket, 'k', new Uint8Array(2));
    return page;
  };
  const sweeper = new LifecycleSweeper({ meta, clock, logger: silentLogger });
  await sweeper.runCycle();
  meta.listObjects = listObjects;
  assert.equal((await engine.head(bucket, 'k'))?.size, 2, 'the new object stays');
  assert.equal(sweeper.stats.expiredObjects, 0);
});

test(
  'a second sweeper finds the lease held; after the holder stops mid-cycle and its lease runs out, another resumes where it stopped',
  { timeout: 30_000 },
  async (t) => {
    const { engine, clock, bucket } = await openTestEngine(t);
    await engine.putBucketLifecycle(bucket, [rule({ expiration: { afterSeconds: 60 } })]);
    for (let i = 0; i < 30; i++) await engine.put(bucket, `k${String(i).padStart(2, '0')}`, new Uint8Array(1));
    clock.advance(60_000);
    const first = new LifecycleSweeper({ meta: engine.metadata, clock, logger: silentLogger, holder: 'first', pageSize: 5, pagesPerPass: 3, leaseMs: 30_000 });
    const second = new LifecycleSweeper({
      meta: engine.metadata,
      clock,
      logger: silentLogger,
      holder: 'second',
      pageSize: 5,
      pagesPerPass: 100,
      leaseMs: 30_000,
    });
    // Three steps: finding the bucket, then two pages of five.
    assert.equal(await first.runPass(), 'more');
    assert.equal(first.stats.expiredObjects, 10);
    assert.equal(await second.runPass(), 'busy', 'one instance sweeps at a time');
    assert.equal(second.stats.holdsLease, false);
    // The first "crashes": it never runs again. Its lease runs out; the second resumes after k09.
    clock.advance(30_000);
    const listed: Array<string | undefined> = [];
    const listObjects = engine.metadata.listObjects.bind(engine.metadata);
    engine.metadata.listObjects = async (b, query) => {
      listed.push(query.after);
      return listObjects(b, query);
    };
    assert.equal(await second.runPass(), 'done');
    assert.equal(listed[0], 'k09', 'resumed after the last key the first holder finished');
    assert.equal(first.stats.expiredObjects + second.stats.expiredObjects, 30);
    assert.deepEqual((await engine.list(bucket)).objects, []);
  },
);

test('PostgreSQL: two instances sweeping at once delete every due object exactly once, one holding the lease at a time', { timeout: 120_000 }, async (t) => {
  const url = await pgTestUrl(t, { pool: 4 });
  const clock = new FakeClock(Date.UTC(2026, 10, 22, 12, 0, 0));
  const open = async (name: string) => {
    const database = await PgDatabase.open({ url, now: clock.now() });
    const engine = await openStoreEngine({ dataDir: tempDir(t, `lifecycle-${name}-`), clock, database, blobsUrl: undefined });
    t.after(async () => {
      await engine.close();
      await database.close();
    });
    return engine;
  };
  const a = await open('a');
  const b = await open('b');
  await a.createBucket('shared');
  await a.putBucketLifecycle('shared', [rule({ prefix: 'due/', expiration: { afterSeconds: 3600 } })]);
  const total = 120;
  for (let i = 0; i < total; i++) await (i % 2 ? a : b).put('shared', `due/${String(i).padStart(3, '0')}`, new Uint8Array(4));
  await a.put('shared', 'kept', new Uint8Array(4));
  clock.advance(3600_000);
  const sweepers = [a, b].map(
    (engine, i) =>
      new LifecycleSweeper({
        meta: engine.metadata,
        clock,
        logger: silentLogger,
        holder: `instance-${i}`,
        pageSize: 10,
        pagesPerPass: 2,
        leaseMs: 5_000,
      }),
  );
  // Both run passes concurrently, over and over; the lease runs out between rounds, so the work changes hands.
  let holders = 0;
  for (let round = 0; round < 100; round++) {
    const outcomes = await Promise.all(sweepers.map((sweeper) => sweeper.runPass()));
    assert.ok(outcomes.filter((outcome) => outcome !== 'busy').length <= 1, `one holder at a time, not ${outcomes.join(', ')}`);
    holders += outcomes.filter((outcome) => outcome !== 'busy').length;
    if (outcomes.includes('done')) break;
    if (round % 3 === 2) clock.advance(5_000);
  }
  assert.ok(holders > 0);
  assert.equal(sweepers[0]!.stats.expiredObjects + sweepers[1]!.stats.expiredObjects, total, 'each due object deleted exactly once');
  assert.deepEqual(
    (await a.list('shared')).objects.map((o) => o.key),
    ['kept'],
  );
  const usage = await a.accountUsage(null);
  assert.deepEqual([usage.objectBytes, usage.objectCount], [4, 1]);
});
