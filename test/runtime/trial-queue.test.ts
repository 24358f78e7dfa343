import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { TrialQueue, type TrialQueueLimits } from '../../src/runtime/trial-queue.ts';

/** A trial the test ends by hand. */
function gate(): { promise: Promise<string>; open: (value: string) => void } {
  let open!: (value: string) => void;
  const promise = new Promise<string>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

test('an account flooding trials holds one place; another account takes the other at once', { timeout: 10_000 }, async () => {
  const queue = new TrialQueue({ running: 2, runningPerAccount: 1, waitingPerAccount: 3, waiting: 16 });
  const hog = Array.from({ length: 6 }, () => gate());
  const started: string[] = [];
  const hogRuns = hog.map((g, i) =>
    queue.run('hog', () => {
      started.push(`hog${i}`);
      return g.promise;
    }),
  );
  await flush();
  assert.deepEqual(started, ['hog0']);
  assert.deepEqual(queue.counts, { running: 1, waiting: 3 });
  // Past its three waiting, the hog's uploads are refused at once.
  assert.deepEqual(await hogRuns[4], { refused: 'account' });
  assert.deepEqual(await hogRuns[5], { refused: 'account' });
  const calm = await queue.run('calm', async () => {
    started.push('calm');
    return 'calm started';
  });
  assert.equal(calm, 'calm started');
  // The hog's next trial starts only when its own one ends.
  hog[0]!.open('hog0 done');
  assert.equal(await hogRuns[0], 'hog0 done');
  await flush();
  assert.deepEqual(started, ['hog0', 'calm', 'hog1']);
  for (const [i, g] of hog.slice(1, 4).entries()) {
    g.open(`hog${i + 1} done`);
    await flush();
  }
  assert.deepEqual(await Promise.all(hogRuns.slice(1, 4)), ['hog1 done', 'hog2 done', 'hog3 done']);
  assert.deepEqual(queue.counts, { running: 0, waiting: 0 });
});

test('a place freed goes to the longest-waiting upload of an account below its share', { timeout: 10_000 }, async () => {
  const queue = new TrialQueue({ running: 1, runningPerAccount: 1, waitingPerAccount: 3, waiting: 16 });
  const first = gate();
  const order: string[] = [];
  const run = (account: string, g?: ReturnType<typeof gate>) =>
    queue.run(account, async () => {
      order.push(account);
      return g ? g.promise : account;
    });
  const a = run('a', first);
  const b = run('b');
  const c = run('c');
  await flush();
  first.open('a');
  await Promise.all([a, b, c]);
  assert.deepEqual(order, ['a', 'b', 'c']);
});

test('the server refuses past its waiting bound, whatever the account', { timeout: 10_000 }, async () => {
  const queue = new TrialQueue({ running: 1, runningPerAccount: 1, waitingPerAccount: 2, waiting: 2 });
  const held = gate();
  const running = queue.run('x', () => held.promise);
  const waiting = [queue.run('y', async () => 'y'), queue.run('z', async () => 'z')];
  assert.deepEqual(await queue.run('w', async () => 'w'), { refused: 'server' });
  held.open('x');
  assert.deepEqual(await Promise.all([running, ...waiting]), ['x', 'y', 'z']);
});

test('a trial that throws frees its place', { timeout: 10_000 }, async () => {
  const queue = new TrialQueue({ running: 1, runningPerAccount: 1, waitingPerAccount: 1, waiting: 1 });
  await assert.rejects(
    queue.run('a', async () => {
      throw new Error('workerd failed');
    }),
    /workerd failed/,
  );
  assert.equal(await queue.run('a', async () => 'again'), 'again');
});

test('property: never more trials than the limits allow, and every admitted trial runs', { timeout: 60_000 }, async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.record({
        running: fc.integer({ min: 1, max: 3 }),
        runningPerAccount: fc.integer({ min: 1, max: 2 }),
        waitingPerAccount: fc.integer({ min: 0, max: 3 }),
        waiting: fc.integer({ min: 0, max: 6 }),
      }),
      fc.array(fc.record({ account: fc.constantFrom('a', 'b', 'c'), turns: fc.integer({ min: 0, max: 3 }) }), { maxLength: 20 }),
      async (limits: TrialQueueLimits, uploads) => {
        const queue = new TrialQueue(limits);
        const live = new Map<string, number>();
        let total = 0;
        let ran = 0;
        const outcomes = await Promise.all(
          uploads.map(async ({ account, turns }) =>
            queue.run(account, async () => {
              total++;
              live.set(account, (live.get(account) ?? 0) + 1);
              assert.ok(total <= limits.running, `${total} running`);
              assert.ok(live.get(account)! <= limits.runningPerAccount, `${live.get(account)} of ${account} running`);
              for (let i = 0; i < turns; i++) await flush();
              total--;
              live.set(account, live.get(account)! - 1);
              ran++;
              return 'ran';
            }),
          ),
        );
        assert.equal(outcomes.filter((o) => o === 'ran').length, ran);
        assert.deepEqual(queue.counts, { running: 0, waiting: 0 });
      },
    ),
    { numRuns: 200 },
  );
});
