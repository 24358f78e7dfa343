/** The answer cache (LRU by entries and bytes), the rules of what may be cached, in-flight sharing. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AnswerCache } from '../../src/gateway/cache/answer-cache.ts';
import { isFinalAnswer } from '../../src/gateway/cache/cache-policy.ts';
import { FinalityTracker } from '../../src/gateway/cache/finality-tracker.ts';
import { InFlight } from '../../src/gateway/cache/in-flight.ts';
import { FakeClock } from '../../src/core/clock.ts';
import { silentLogger } from '../../src/core/log.ts';

test('the cache evicts the least recently used entry past its entry limit', { timeout: 10_000 }, () => {
  const cache = new AnswerCache({ maxEntries: 2, maxBytes: 1_000_000 });
  cache.set('a', '1');
  cache.set('b', '2');
  assert.equal(cache.get('a'), '1');
  cache.set('c', '3');
  assert.equal(cache.get('b'), undefined, 'b was the least recently used');
  assert.equal(cache.get('a'), '1');
  assert.equal(cache.get('c'), '3');
  assert.equal(cache.size, 2);
});

test('the cache stays under its byte limit and skips values larger than all of it', { timeout: 10_000 }, () => {
  const cache = new AnswerCache({ maxEntries: 100, maxBytes: 100 });
  cache.set('k1', 'x'.repeat(20));
  cache.set('k2', 'y'.repeat(20));
  assert.equal(cache.size, 2);
  cache.set('k3', 'z'.repeat(20));
  assert.ok(cache.bytes <= 100);
  assert.equal(cache.get('k1'), undefined);
  cache.set('huge', 'h'.repeat(200));
  assert.equal(cache.get('huge'), undefined);
  cache.set('k3', 'short');
  assert.equal(cache.get('k3'), 'short', 'replacing a key updates its size');
  assert.equal(new AnswerCache({ maxEntries: 0, maxBytes: 100 }).size, 0);
});

test('the cache keeps an entry in use through any number of insertions, and never holds more than its limits', { timeout: 10_000 }, () => {
  const cache = new AnswerCache({ maxEntries: 100, maxBytes: 10_000 });
  cache.set('hot', '"0x1"');
  for (let i = 0; i < 10_000; i++) {
    cache.set(`key ${i}`, `"${i}"`);
    if (i % 40 === 0) assert.equal(cache.get('hot'), '"0x1"', `after ${i} insertions`);
    assert.ok(cache.size <= 100 && cache.bytes <= 10_000, `size ${cache.size}, bytes ${cache.bytes}`);
  }
  assert.equal(cache.get('key 0'), undefined, 'unused entries go');
  assert.equal(cache.get('key 9999'), '"9999"');
  const big = new AnswerCache({ maxEntries: 100, maxBytes: 100 });
  big.set('a', 'x'.repeat(20));
  big.set('b', 'y'.repeat(40));
  assert.ok(big.bytes <= 100, 'an entry over half the bytes still fits under the limit');
  assert.equal(big.get('b'), 'y'.repeat(40));
});

test('final answers: constants and by-hash always; by number only at or below the finalized head; never tags or null', { timeout: 10_000 }, () => {
  const finalized = 100n;
  const cases: Array<[string, unknown[], string, boolean]> = [
    ['eth_chainId', [], '"0xaa36a7"', true],
    ['eth_blockNumber', [], '"0x5"', false],
    ['eth_getBlockByHash', ['0xab', false], '{"number":"0x999"}', true],
    ['eth_getBlockByHash', ['0xab', false], 'null', false],
    ['eth_getBlockByNumber', ['0x64', false], '{}', true],
    ['eth_getBlockByNumber', ['0x65', false], '{}', false],
    ['eth_getBlockByNumber', ['latest', false], '{}', false],
    ['eth_getBlockByNumber', ['finalized', false], '{}', false],
    ['eth_getBlockByNumber', ['earliest', false], '{}', true],
    ['eth_getBalance', ['0x1', '0x10'], '"0x0"', true],
    ['eth_getBalance', ['0x1', 'latest'], '"0x0"', false],
    ['eth_getBalance', ['0x1', { blockHash: '0xab' }], '"0x0"', true],
    ['eth_call', [{}, { blockNumber: '0x200' }], '"0x"', false],
    ['eth_getStorageAt', ['0x1', '0x0', '0x1'], '"0x0"', true],
    ['eth_getTransactionReceipt', ['0xab'], '{"blockNumber":"0x64"}', true],
    ['eth_getTransactionReceipt', ['0xab'], '{"blockNumber":"0x65"}', false],
    ['eth_getTransactionReceipt', ['0xab'], 'null', false],
    ['eth_getTransactionByHash', ['0xab'], '{"blockNumber":null}', false],
    ['eth_getLogs', [{ blockHash: '0xab' }], '[]', true],
    ['eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x64' }], '[]', true],
    ['eth_getLogs', [{ fromBlock: '0x1' }], '[]', false],
    ['eth_sendRawTransaction', ['0x02'], '"0xab"', false],
    ['eth_gasPrice', [], '"0x1"', false],
  ];
  for (const [method, params, result, final] of cases)
    assert.equal(isFinalAnswer(method, params, result, finalized), final, `${method} ${JSON.stringify(params)} ${result}`);
  assert.equal(isFinalAnswer('eth_getBlockByNumber', ['0x0', false], '{}', -1n), false, 'nothing is final before the head is known');
});

test('in-flight: concurrent runs of one key share one call; a finished key runs again', { timeout: 10_000 }, async () => {
  const inFlight = new InFlight<number>();
  let calls = 0;
  const work = async () => {
    calls++;
    await new Promise((resolve) => setTimeout(resolve, 10));
    return calls;
  };
  assert.deepEqual(await Promise.all([inFlight.run('k', work), inFlight.run('k', work), inFlight.run('other', work)]), [2, 2, 2]);
  assert.equal(inFlight.size, 0);
  assert.equal(await inFlight.run('k', work), 3);
  await assert.rejects(
    inFlight.run('bad', async () => {
      throw new Error('boom');
    }),
    /boom/,
  );
  assert.equal(inFlight.size, 0, 'failures are not kept');
});

test('the finality tracker refreshes in the background when stale, never goes back, survives failures', { timeout: 10_000 }, async () => {
  const clock = new FakeClock();
  const answers: Array<bigint | Error> = [10n, 5n, new Error('down'), 20n];
  let asked = 0;
  const tracker = new FinalityTracker({
    clock,
    logger: silentLogger,
    refreshMs: 1_000,
    fetch: async () => {
      const next = answers[asked++]!;
      if (next instanceof Error) throw next;
      return next;
    },
  });
  assert.equal(tracker.current(), -1n);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(tracker.current(), 10n);
  assert.equal(asked, 1, 'fresh: not asked again');
  for (const expected of [10n, 10n, 20n]) {
    clock.advance(1_000);
    tracker.current();
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(tracker.current(), expected);
  }
});
