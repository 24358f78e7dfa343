import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OutageMemory } from '../../src/core/errors/outage-memory.ts';

test('an outage: one background read per retry period, and the first that succeeds ends it', { timeout: 5_000 }, async () => {
  let now = 1_000;
  const outage = new OutageMemory(() => now, 1_000);
  assert.equal(outage.failing, false);
  outage.failed();
  assert.equal(outage.failing, true);

  let reads = 0;
  const failingRead = () => {
    reads++;
    return Promise.reject(new Error('still away'));
  };
  outage.retry(failingRead);
  assert.equal(reads, 0, 'no retry before the period has passed');
  now += 1_000;
  outage.retry(failingRead);
  outage.retry(failingRead);
  assert.equal(reads, 1, 'one retry per period');
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(outage.failing, true, 'a failed retry leaves the outage on');

  now += 1_000;
  outage.retry(() => Promise.resolve('back'));
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(outage.failing, false, 'a retry that succeeds ends it');
});
