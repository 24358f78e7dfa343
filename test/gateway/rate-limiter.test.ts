/** The token bucket, by the test clock. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeClock } from '../../src/core/clock.ts';
import { RateLimiter } from '../../src/gateway/rate-limiter.ts';

test('each client has its own bucket; refills at the rate up to the burst; a refusal takes nothing', { timeout: 10_000 }, () => {
  const clock = new FakeClock();
  const limiter = new RateLimiter({ requestsPerSecond: 10, burst: 5 }, clock);
  assert.equal(limiter.take('a', 5), 0);
  assert.equal(limiter.take('a', 1), 100, 'one token takes 100 ms');
  assert.equal(limiter.take('b', 5), 0, 'another client is not affected');
  clock.advance(100);
  assert.equal(limiter.take('a', 1), 0);
  assert.equal(limiter.take('a', 2), 200);
  clock.advance(10_000);
  assert.equal(limiter.take('a', 5), 0, 'capped at the burst');
  assert.equal(limiter.take('a', 1), 100);
});

test('a request larger than the burst needs a full bucket and takes a token per member: the debt is waited out', { timeout: 10_000 }, () => {
  const clock = new FakeClock();
  const limiter = new RateLimiter({ requestsPerSecond: 1, burst: 3 }, clock);
  assert.equal(limiter.take('a', 10), 0);
  assert.equal(limiter.take('a', 1), 8_000, '7 tokens owed, then one more');
  assert.equal(limiter.take('a', 10), 10_000, 'a full bucket again');
  clock.advance(10_000);
  assert.equal(limiter.take('a', 10), 0);
});

test('rate 0 is off; idle clients are forgotten once many are known', { timeout: 10_000 }, () => {
  const clock = new FakeClock();
  assert.equal(new RateLimiter({ requestsPerSecond: 0, burst: 1 }, clock).take('a', 1_000), 0);
  const limiter = new RateLimiter({ requestsPerSecond: 1_000, burst: 1 }, clock);
  for (let i = 0; i < 10_000; i++) limiter.take(`client-${i}`, 1);
  assert.equal(limiter.clients, 10_000);
  limiter.take('client-late', 1);
  assert.equal(limiter.clients, 10_001, 'busy buckets are kept');
  clock.advance(1);
  limiter.take('client-new', 1);
  assert.equal(limiter.clients, 1, 'full (idle) buckets are dropped when a new client comes');
});
