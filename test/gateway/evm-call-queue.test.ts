/** The EVM call queue: turns between clients, one call at a time per client, bounds on waiting calls, the time cap, the chain-time budget. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeClock } from '../../src/core/clock.ts';
import type { JsonRpcError } from '../../src/gateway/errors.ts';
import { EvmCallQueue, type EvmCallQueueOptions } from '../../src/gateway/evm/evm-call-queue.ts';
import type { RpcAnswer } from '../../src/gateway/json-rpc/response.ts';

function queue(options: Partial<EvmCallQueueOptions> = {}): EvmCallQueue {
  return new EvmCallQueue({
    concurrency: 1,
    maxQueuedPerClient: 100,
    maxQueued: 1_000,
    timeoutMs: 60_000,
    budget: { msPerSecond: 1_000, burstMs: 1_000_000 },
    clock: new FakeClock(),
    ...options,
  });
}

/** Work that ends when told to, recording the order in which it started. */
function gate(started: string[], name: string): { work: () => Promise<RpcAnswer>; finish: () => void } {
  let finish!: () => void;
  const done = new Promise<RpcAnswer>((resolve) => {
    finish = () => resolve({ result: `"${name}"` });
  });
  return {
    work: () => {
      started.push(name);
      return done;
    },
    finish: () => finish(),
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

test("clients take turns: a client with many calls waiting delays another client's one call by one turn at most", { timeout: 10_000 }, async () => {
  const q = queue();
  const started: string[] = [];
  const a = Array.from({ length: 5 }, (_, i) => gate(started, `a${i}`));
  const b = gate(started, 'b0');
  const answers = a.map((g) => q.run('a', g.work));
  const bAnswer = q.run('b', b.work);
  await tick();
  assert.deepEqual(started, ['a0'], 'one call at a time');
  a[0]!.finish();
  await tick();
  assert.deepEqual(started, ['a0', 'b0'], "b goes next, before a's other four");
  b.finish();
  assert.deepEqual(await bAnswer, { result: '"b0"' });
  for (const g of a.slice(1)) {
    await tick();
    g.finish();
  }
  assert.deepEqual(
    (await Promise.all(answers)).map((x) => x.result),
    ['"a0"', '"a1"', '"a2"', '"a3"', '"a4"'],
  );
  assert.deepEqual(started, ['a0', 'b0', 'a1', 'a2', 'a3', 'a4']);
});

test(
  "calls past a client's waiting bound get -32005 at once, past the queue's bound GATEWAY_OVERLOADED; nothing of theirs runs",
  { timeout: 10_000 },
  async () => {
    const q = queue({ maxQueuedPerClient: 2, maxQueued: 3 });
    const started: string[] = [];
    const gates = ['a0', 'a1', 'a2', 'b0'].map((name) => gate(started, name));
    const accepted = [q.run('a', gates[0]!.work), q.run('a', gates[1]!.work), q.run('a', gates[2]!.work)];
    await assert.rejects(
      q.run('a', gate(started, 'a3').work),
      (error: JsonRpcError) => error.code === 'GATEWAY_RATE_LIMITED' && error.rpcCode === -32005 && /2 calls that run EVM code .* waiting/.test(error.message),
    );
    accepted.push(q.run('b', gates[3]!.work));
    await assert.rejects(
      q.run('c', gate(started, 'c0').work),
      (error: JsonRpcError) => error.code === 'GATEWAY_OVERLOADED' && error.rpcCode === -32005 && error.status === 503,
    );
    assert.equal(q.waiting, 3);
    for (const g of gates) g.finish();
    assert.equal((await Promise.all(accepted)).length, 4);
    assert.deepEqual(started, ['a0', 'b0', 'a1', 'a2'], 'the refused calls never ran');
  },
);

test("a call past the time cap is answered with geth's timeout error; the next starts only when the chain is done with it", { timeout: 10_000 }, async () => {
  const q = queue({ timeoutMs: 20 });
  const started: string[] = [];
  const slow = gate(started, 'slow');
  const answer = await q.run('a', slow.work);
  assert.deepEqual(answer, { error: { code: -32000, message: 'execution aborted (timeout = 20ms)' } });
  const next = q.run('b', async () => {
    started.push('next');
    return { result: '1' };
  });
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.deepEqual(started, ['slow'], 'the slot is held while the chain still runs the call');
  slow.finish();
  assert.deepEqual(await next, { result: '1' });
});

test('a client whose calls used its chain time is refused until the clock refills it; its waiting calls are refused too', { timeout: 10_000 }, async () => {
  const clock = new FakeClock();
  const q = queue({ clock, budget: { msPerSecond: 10, burstMs: 5 } });
  const started: string[] = [];
  // Work that takes real time on the chain: 30 ms against a 5 ms bucket.
  const heavy = () =>
    new Promise<RpcAnswer>((resolve) => {
      started.push('heavy');
      setTimeout(() => resolve({ result: '1' }), 30);
    });
  const first = q.run('a', heavy);
  const second = q.run('a', heavy);
  assert.deepEqual(await first, { result: '1' });
  await assert.rejects(
    second,
    (error: JsonRpcError) =>
      error.code === 'GATEWAY_RATE_LIMITED' && /used its share of the chain's time \(10 ms per second\)\. Retry in \d+ s\./.test(error.message),
  );
  await assert.rejects(q.run('a', heavy), /used its share/);
  assert.deepEqual(await q.run('b', async () => ({ result: '2' })), { result: '2' }, 'another client has its own bucket');
  clock.advance(10_000);
  assert.deepEqual(await q.run('a', async () => ({ result: '3' })), { result: '3' });
  assert.deepEqual(started, ['heavy']);
});

test("work that throws is the caller's rejection, and the queue goes on", { timeout: 10_000 }, async () => {
  const q = queue();
  await assert.rejects(
    q.run('a', () => {
      throw new Error('boom');
    }),
    /boom/,
  );
  await assert.rejects(
    q.run('a', () => Promise.reject(new Error('later'))),
    /later/,
  );
  assert.deepEqual(await q.run('a', async () => ({ result: '1' })), { result: '1' });
});
