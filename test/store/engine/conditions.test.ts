import assert from 'node:assert/strict';
import { test } from 'node:test';
import { evaluateConditional } from '../../../src/store/engine/conditions.ts';
import { StoreError } from '../../../src/store/engine/errors.ts';
import { resolveRange } from '../../../src/store/engine/ranges.ts';
import type { Conditional, ObjectMeta } from '../../../src/store/engine/types.ts';
import { bytes, openTestEngine, readAll } from '../../helpers/engine.ts';

const T = Date.UTC(2026, 0, 1, 0, 0, 0, 500);
const meta: ObjectMeta = {
  key: 'k',
  version: 'v',
  size: 5,
  etag: 'abc',
  uploaded: T,
  httpMetadata: {},
  customMetadata: {},
  checksums: {},
  storageClass: 'Standard',
};
const strong = (value: string) => ({ type: 'strong' as const, value });
const weak = (value: string) => ({ type: 'weak' as const, value });
const any = { type: 'wildcard' as const };

test('conditional truth table (RFC 7232, as the real store evaluates it)', { timeout: 10_000 }, () => {
  const cases: Array<[Conditional, boolean]> = [
    [{}, true],
    [{ etagMatches: [strong('abc')] }, true],
    [{ etagMatches: [strong('x'), strong('abc')] }, true],
    [{ etagMatches: [weak('abc')] }, false],
    [{ etagMatches: [any] }, true],
    [{ etagMatches: [strong('nope')] }, false],
    [{ etagDoesNotMatch: [strong('abc')] }, false],
    [{ etagDoesNotMatch: [weak('abc')] }, false],
    [{ etagDoesNotMatch: [any] }, false],
    [{ etagDoesNotMatch: [strong('x')] }, true],
    [{ uploadedAfter: T - 1 }, true],
    [{ uploadedAfter: T }, false],
    [{ uploadedBefore: T + 1 }, true],
    [{ uploadedBefore: T }, false],
    [{ uploadedBefore: T - 1000, etagMatches: [strong('abc')] }, true],
    [{ uploadedAfter: T + 1000, etagDoesNotMatch: [strong('x')] }, true],
    [{ uploadedAfter: T + 1000, etagDoesNotMatch: [strong('abc')] }, false],
    [{ uploadedAfter: T - 100, secondsGranularity: true }, false],
    [{ uploadedBefore: T + 100, secondsGranularity: true }, false],
    [{ uploadedBefore: T + 1000, secondsGranularity: true }, true],
  ];
  for (const [cond, want] of cases) assert.equal(evaluateConditional(cond, meta), want, JSON.stringify(cond));
});

test('on a missing object only etagMatches and uploadedAfter fail', { timeout: 10_000 }, () => {
  assert.equal(evaluateConditional({ etagDoesNotMatch: [any] }, null), true);
  assert.equal(evaluateConditional({ uploadedBefore: T }, null), true);
  assert.equal(evaluateConditional({ etagMatches: [any] }, null), false);
  assert.equal(evaluateConditional({ uploadedAfter: 0 }, null), false);
});

test('ranges resolve, clamp and refuse as the real store does', { timeout: 10_000 }, () => {
  assert.deepEqual(resolveRange(undefined, 5), { offset: 0, length: 5 });
  assert.deepEqual(resolveRange({ offset: 1 }, 5), { offset: 1, length: 4 });
  assert.deepEqual(resolveRange({ offset: 1, length: 2 }, 5), { offset: 1, length: 2 });
  assert.deepEqual(resolveRange({ length: 2 }, 5), { offset: 0, length: 2 });
  assert.deepEqual(resolveRange({ offset: 3, length: 100 }, 5), { offset: 3, length: 2 });
  assert.deepEqual(resolveRange({ suffix: 2 }, 5), { offset: 3, length: 2 });
  assert.deepEqual(resolveRange({ suffix: 50 }, 5), { offset: 0, length: 5 });
  const unsatisfiable = (e: unknown) => e instanceof StoreError && e.code === 'STORE_INVALID_RANGE' && e.message === 'The requested range is not satisfiable';
  for (const range of [{ offset: 5 }, { offset: 6 }, { suffix: 0 }, { length: 0 }, { offset: 2, length: 0 }]) {
    assert.throws(() => resolveRange(range, 5), unsatisfiable, JSON.stringify(range));
  }
  for (const range of [{ offset: 0 }, { suffix: 1 }]) assert.throws(() => resolveRange(range, 0), unsatisfiable);
});

test('get with a failing condition returns metadata without body; put with one stores nothing', { timeout: 10_000 }, async (t) => {
  const { engine, bucket } = await openTestEngine(t);
  const put = await engine.put(bucket, 'k', bytes('hello'));
  const miss = await engine.get(bucket, 'k', { onlyIf: { etagMatches: [strong('other')] }, range: { offset: 99 } });
  assert.ok(miss);
  assert.equal(miss.body, undefined);
  assert.deepEqual(miss.range, { offset: 0, length: 5 });
  assert.equal(miss.meta.etag, put!.etag);
  const hit = await engine.get(bucket, 'k', { onlyIf: { etagMatches: [strong(put!.etag)] }, range: { suffix: 3 } });
  assert.equal((await readAll(hit!.body!.stream())).toString(), 'llo');
  assert.equal(await engine.put(bucket, 'k', bytes('new'), { onlyIf: { etagDoesNotMatch: [any] } }), null);
  assert.equal((await engine.head(bucket, 'k'))?.etag, put!.etag);
  assert.ok(await engine.put(bucket, 'fresh', bytes('new'), { onlyIf: { etagDoesNotMatch: [any] } }));
});

test('racing conditional puts with the same etagMatches: exactly one wins', { timeout: 10_000 }, async (t) => {
  const { engine, bucket } = await openTestEngine(t);
  const base = await engine.put(bucket, 'counter', bytes('0'));
  const racers = Array.from({ length: 20 }, (_, i) =>
    engine.put(bucket, 'counter', bytes(`from-${i}-${'x'.repeat(i * 10_000)}`), { onlyIf: { etagMatches: [strong(base!.etag)] } }),
  );
  const results = await Promise.all(racers);
  const winners = results.filter((r) => r !== null);
  assert.equal(winners.length, 1);
  assert.equal((await engine.head(bucket, 'counter'))?.etag, winners[0]!.etag);
});
