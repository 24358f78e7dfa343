/**
 * FairQueue: the least-used client's oldest job goes next; a full queue gives a place to a client
 * worse off than its worst holder, else refuses; usage decays by the FakeClock; memory is bounded;
 * and (fast-check) whatever the offers and takes, every job is accounted for exactly once.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { FakeClock } from '../../src/core/clock.ts';
import { FairQueue } from '../../src/core/crypto/fair-queue.ts';

const queue = (capacity: number, clock = new FakeClock(), maxClients = 100) => new FairQueue<string>({ capacity, halfLifeMs: 60_000, maxClients }, clock);

test('a client that asked least lately goes first, whatever the others keep queued; ties go in arrival order', { timeout: 10_000 }, () => {
  const q = queue(16);
  for (let i = 0; i < 3; i++) q.charge('flooder');
  q.charge('other');
  for (let i = 0; i < 5; i++) assert.deepEqual(q.offer('flooder', `f${i}`), { admitted: true });
  q.offer('other', 'o0');
  q.offer('fresh', 'n0');
  q.offer('fresh2', 'm0');
  assert.equal(q.take(), 'n0', 'never served: first');
  assert.equal(q.take(), 'm0', "never served, later: second (n0's client now has a use)");
  assert.equal(q.take(), 'o0');
  assert.equal(q.take(), 'f0');
  assert.equal(q.usageOf('flooder'), 8, 'three uses, and five asks');
  assert.equal(q.size, 4);
});

test(
  'full: a newcomer takes the newest place of the client holding the most (then: asking the most), never one of a client as well off',
  { timeout: 10_000 },
  () => {
    const q = queue(4);
    for (let i = 0; i < 3; i++) q.offer('a', `a${i}`);
    q.offer('b', 'b0');
    assert.deepEqual(q.offer('a', 'a3'), { admitted: false }, 'a holds the most already');
    assert.deepEqual(q.offer('c', 'c0'), { admitted: true, evicted: 'a2' });
    assert.deepEqual(q.offer('d', 'd0'), { admitted: true, evicted: 'a1' });
    // a, b, c, d hold one place each: only a client that asked less (beyond the jobs it has waiting)
    // than one of them gets in, in the place of the one that asked most (a: twice, its refusal and
    // its evicted jobs included).
    assert.deepEqual(q.offer('e', 'e0'), { admitted: true, evicted: 'a0' });
    assert.deepEqual(q.offer('f', 'f0'), { admitted: false }, 'b, c, d and e asked once, for the job they have waiting: level with f, first come');
    assert.deepEqual(q.offer('c', 'c1'), { admitted: false }, 'c would hold more than anyone');
    assert.equal(q.usageOf('c'), 2, 'the refusal cost c one use');
    assert.deepEqual(q.offer('g', 'g0'), { admitted: true, evicted: 'c0' }, 'c asked beyond its waiting job, g never did');
    assert.deepEqual(q.drain(), ['b0', 'd0', 'e0', 'g0']);
    assert.equal(q.size, 0);
  },
);

test('usage halves every half-life and is forgotten once negligible; memory stays bounded', { timeout: 10_000 }, () => {
  const clock = new FakeClock();
  const q = queue(4, clock, 50);
  for (let i = 0; i < 8; i++) q.charge('a');
  clock.advance(60_000);
  assert.equal(q.usageOf('a'), 4);
  clock.advance(60_000 * 10);
  assert.equal(q.usageOf('a'), 0);
  assert.equal(q.trackedClients, 0);
  for (let i = 0; i < 1_000; i++) q.charge(`10.0.${i >> 8}.${i & 255}`);
  assert.equal(q.trackedClients, 50);
});

test(
  'property: at most capacity wait; every job is taken, evicted, refused or drained exactly once; a take is never of a client of higher standing',
  { timeout: 30_000 },
  () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('offer' as const), client: fc.integer({ min: 0, max: 5 }) }),
      fc.record({ kind: fc.constant('take' as const) }),
      fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 120_000 }) }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 6 }), fc.array(op, { maxLength: 80 }), (capacity, ops) => {
        const clock = new FakeClock();
        const q = queue(capacity, clock);
        const seen = new Map<string, string>();
        /** What the test knows to be waiting. */
        const waiting = new Set<string>();
        let n = 0;
        for (const step of ops) {
          if (step.kind === 'advance') clock.advance(step.ms);
          else if (step.kind === 'offer') {
            const job = `${step.client}:${n++}`;
            const offer = q.offer(String(step.client), job);
            if (!offer.admitted) seen.set(job, 'refused');
            else {
              waiting.add(job);
              if (offer.evicted !== undefined) {
                assert.ok(waiting.delete(offer.evicted), `${offer.evicted} was not waiting`);
                seen.set(offer.evicted, 'evicted');
              }
            }
          } else {
            // Standing: usage less the client's jobs waiting (never below 0).
            const standings = [0, 1, 2, 3, 4, 5].map((client) =>
              Math.max(0, q.usageOf(String(client)) - [...waiting].filter((job) => job.startsWith(`${client}:`)).length),
            );
            const job = q.take();
            if (job === undefined) {
              assert.equal(q.size, 0);
              continue;
            }
            assert.ok(waiting.delete(job), `${job} was not waiting`);
            seen.set(job, 'taken');
            const client = Number(job.split(':')[0]);
            // Every client still waiting was at least as used as the one taken.
            for (const other of waiting) assert.ok(standings[Number(other.split(':')[0])]! >= standings[client]! - 0.02, `${job} before ${other}`);
          }
          assert.ok(q.size <= capacity);
          assert.equal(q.size, waiting.size);
        }
        for (const job of q.drain()) {
          assert.ok(waiting.delete(job), `${job} was not waiting`);
          seen.set(job, 'drained');
        }
        assert.equal(seen.size, n, 'every job accounted for');
      }),
      { numRuns: 300 },
    );
  },
);
