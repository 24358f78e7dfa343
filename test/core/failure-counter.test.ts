/** FailureCounter: token buckets per key by the injected clock, bounded memory. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeClock } from '../../src/core/clock.ts';
import { FailureCounter } from '../../src/core/auth/failure-counter.ts';

test('max attempts at once, then one every window / max; waitMs is exact and honest', { timeout: 10_000 }, () => {
  const clock = new FakeClock();
  const counter = new FailureCounter({ max: 4, windowMs: 60_000, maxKeys: 100 }, clock);
  for (let i = 0; i < 4; i++) {
    assert.equal(counter.waitMs('k'), 0);
    counter.take('k');
  }
  assert.equal(counter.waitMs('k'), 15_000, 'one attempt comes back every 60 s / 4');
  assert.equal(counter.waitMs('other'), 0, 'keys are counted apart');
  clock.advance(14_999);
  assert.equal(counter.waitMs('k'), 1);
  clock.advance(1);
  assert.equal(counter.waitMs('k'), 0, 'let through exactly when it said');
  counter.take('k');
  assert.equal(counter.waitMs('k'), 15_000);
  clock.advance(60_000);
  assert.equal(counter.waitMs('k'), 0);
  assert.equal(counter.size, 0, 'a refilled key is forgotten');
});

test('a refund gives an attempt back; a full bucket is forgotten', { timeout: 10_000 }, () => {
  const clock = new FakeClock();
  const counter = new FailureCounter({ max: 2, windowMs: 10_000, maxKeys: 100 }, clock);
  counter.take('k');
  counter.take('k');
  assert.ok(counter.waitMs('k') > 0);
  counter.refund('k');
  assert.equal(counter.waitMs('k'), 0);
  counter.refund('k');
  assert.equal(counter.size, 0);
  counter.refund('never-seen');
  assert.equal(counter.size, 0);
});

test('memory is fixed: at most maxKeys keys, the least recently used dropped first', { timeout: 10_000 }, () => {
  const clock = new FakeClock();
  const counter = new FailureCounter({ max: 1, windowMs: 60_000, maxKeys: 3 }, clock);
  for (const key of ['a', 'b', 'c']) counter.take(key);
  assert.ok(counter.waitMs('a') > 0, 'touching a makes it the most recently used');
  counter.take('d');
  assert.equal(counter.size, 3);
  assert.equal(counter.waitMs('b'), 0, 'b, the least recently used, was dropped');
  assert.ok(counter.waitMs('a') > 0 && counter.waitMs('c') > 0 && counter.waitMs('d') > 0);
  for (let i = 0; i < 10_000; i++) counter.take(`spray-${i}`);
  assert.equal(counter.size, 3);
});
