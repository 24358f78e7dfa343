/**
 * CredentialGuard: per address and per identity, attempts counted before verification, trusted
 * addresses, expiry by FakeClock; attempts waiting for checks under way rather than refused.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { FakeClock } from '../../src/core/clock.ts';
import { CredentialGuard, type Admission, type CredentialAttempt } from '../../src/core/auth/credential-guard.ts';

const LIMITS = { windowMs: 60_000, maxPerAddress: 6, maxPerIdentity: 3 };

function attemptOf(admission: Admission): CredentialAttempt {
  assert.ok(admission.admitted, `refused: ${JSON.stringify(admission)}`);
  return admission.attempt;
}

function refusal(admission: Admission): { retryAfterMs: number; scope: string } {
  assert.ok(!admission.admitted, 'let through');
  return { retryAfterMs: admission.retryAfterMs, scope: admission.scope };
}

test('per identity: the 4th failure for one e-mail is refused from any address, with the wait until the next', { timeout: 10_000 }, () => {
  const clock = new FakeClock();
  const guard = new CredentialGuard(LIMITS, clock);
  for (const address of ['10.0.0.1', '10.0.0.2', '10.0.0.3']) attemptOf(guard.admit(address, 'victim@example.com')).failed();
  assert.deepEqual(refusal(guard.admit('10.0.0.4', 'victim@example.com')), { retryAfterMs: 20_000, scope: 'identity' });
  attemptOf(guard.admit('10.0.0.4', 'other@example.com')).failed();
  clock.advance(20_000);
  attemptOf(guard.admit('10.0.0.5', 'victim@example.com')).failed();
  assert.equal(refusal(guard.admit('10.0.0.5', 'victim@example.com')).retryAfterMs, 20_000);
});

test('per address: the 7th failure from one address is refused whatever the identity; IPv6 counts per /64', { timeout: 10_000 }, () => {
  const clock = new FakeClock();
  const guard = new CredentialGuard(LIMITS, clock);
  for (let i = 0; i < 6; i++) attemptOf(guard.admit(`2001:db8:0:1::${i + 1}`, `user${i}@example.com`)).failed();
  assert.deepEqual(refusal(guard.admit('2001:db8:0:1:ffff::9', 'fresh@example.com')), { retryAfterMs: 10_000, scope: 'address' });
  attemptOf(guard.admit('2001:db8:0:2::1', 'fresh@example.com')).failed();
});

test('attempts are counted before the verdict: concurrent guesses cannot all slip in', { timeout: 10_000 }, () => {
  const guard = new CredentialGuard(LIMITS, new FakeClock());
  const running = [1, 2, 3].map(() => attemptOf(guard.admit('10.0.0.1', 'victim@example.com')));
  assert.equal(
    refusal(guard.admit('10.0.0.2', 'victim@example.com')).scope,
    'pending',
    'three in flight hold the identity: no failure, so no 429, but no place either',
  );
  running[0]!.succeeded();
  running[1]!.abandoned();
  running[2]!.failed();
  running[2]!.succeeded();
  attemptOf(guard.admit('10.0.0.2', 'victim@example.com')).failed();
  attemptOf(guard.admit('10.0.0.2', 'victim@example.com')).failed();
  assert.equal(refusal(guard.admit('10.0.0.3', 'victim@example.com')).scope, 'identity', 'only the one failure (settled once) plus two more count');
});

test('an address the identity verified from lately is exempt from the identity count, not from its own; trust expires', { timeout: 10_000 }, () => {
  const clock = new FakeClock();
  const guard = new CredentialGuard(LIMITS, clock, { trustMs: 3_600_000 });
  attemptOf(guard.admit('192.0.2.10', 'victim@example.com')).succeeded();
  for (const address of ['10.0.0.1', '10.0.0.2', '10.0.0.3']) attemptOf(guard.admit(address, 'victim@example.com')).failed();
  refusal(guard.admit('10.0.0.9', 'victim@example.com'));
  attemptOf(guard.admit('192.0.2.10', 'victim@example.com')).succeeded();
  for (let i = 0; i < 6; i++) attemptOf(guard.admit('192.0.2.10', 'victim@example.com')).failed();
  assert.equal(refusal(guard.admit('192.0.2.10', 'victim@example.com')).scope, 'address', 'its own address count still applies');
  clock.advance(3_600_000);
  for (const address of ['10.0.0.1', '10.0.0.2', '10.0.0.3']) attemptOf(guard.admit(address, 'victim@example.com')).failed();
  assert.equal(refusal(guard.admit('192.0.2.10', 'victim@example.com')).scope, 'identity', 'trust ended after trustMs');
});

test('memory stays bounded under a spray of addresses and identities', { timeout: 10_000 }, () => {
  const clock = new FakeClock();
  const guard = new CredentialGuard(LIMITS, clock, { maxKeys: 50 });
  for (let i = 0; i < 5_000; i++) {
    const admission = guard.admit(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, `spray${i}@example.com`);
    if (!admission.admitted) continue;
    if (i % 2 === 0) admission.attempt.failed();
    else admission.attempt.succeeded();
  }
  const { addresses, identities, trusted } = guard.tracked;
  assert.ok(addresses <= 50 && identities <= 50 && trusted <= 50, JSON.stringify(guard.tracked));
});

test('from a trusted address, attempts being verified are not held against it; those that fail count once known', { timeout: 10_000 }, () => {
  const guard = new CredentialGuard(LIMITS, new FakeClock());
  attemptOf(guard.admit('192.0.2.10', 'owner@example.com')).succeeded();
  const running = Array.from({ length: 100 }, () => attemptOf(guard.admit('192.0.2.10', 'owner@example.com')));
  for (const attempt of running.slice(0, 94)) attempt.succeeded();
  for (const attempt of running.slice(94)) attempt.failed();
  running[99]!.failed();
  assert.equal(refusal(guard.admit('192.0.2.10', 'owner@example.com')).scope, 'address', 'six failures, counted once each');
  assert.equal(refusal(guard.admit('192.0.2.10', 'anyone@example.com')).scope, 'address');
  attemptOf(guard.admit('192.0.2.11', 'owner@example.com')).failed();
});

test('limitIdentity false (cheap checks): only addresses are limited; an identity failing from everywhere refuses no new address', { timeout: 10_000 }, () => {
  const guard = new CredentialGuard(LIMITS, new FakeClock(), { limitIdentity: false });
  for (let i = 0; i < 30; i++) attemptOf(guard.admit(`10.0.0.${i % 5}`, 'KEYID0001')).failed();
  attemptOf(guard.admit('10.0.1.1', 'KEYID0001')).succeeded();
  attemptOf(guard.admit('10.0.1.2', 'KEYID0001')).failed();
  assert.equal(guard.tracked.identities, 0, 'no identity is counted');
  assert.equal(refusal(guard.admit('10.0.0.1', 'KEYID0001')).scope, 'address', 'six failures from 10.0.0.1');
  assert.equal(refusal(guard.admit('10.0.0.1', 'OTHERKEY')).scope, 'address');
});

test(
  'places held by checks under way make an attempt wait, not fail: admitted once they verify, refused once they fail, busy after decideWithinMs',
  { timeout: 10_000 },
  async () => {
    const guard = new CredentialGuard(LIMITS, new FakeClock(), { decideWithinMs: 5_000 });
    // A client not trusted yet (every client after a start) sends 40 requests at once with its correct key.
    // The first three hold the identity's places (3), the others wait.
    const first = Array.from({ length: 3 }, () => attemptOf(guard.admit('192.0.2.10', 'owner@example.com')));
    const waiting = Array.from({ length: 37 }, () => guard.admitWhenDecided('192.0.2.10', 'owner@example.com'));
    await Promise.resolve();
    assert.deepEqual(guard.underWay, { pending: 3, waiting: 37 });
    first[0]!.succeeded();
    const admitted = await Promise.all(waiting);
    assert.ok(
      admitted.every((admission) => admission.admitted),
      'the first verified: the address is trusted, every waiting one gets through',
    );
    for (const admission of admitted) attemptOf(admission).succeeded();
    for (const attempt of first.slice(1)) attempt.succeeded();
    assert.deepEqual(guard.underWay, { pending: 0, waiting: 0 });

    // Guesses: the ones under way fail, and those waiting on them are refused as failures (429), never let through.
    const guesses = Array.from({ length: 3 }, (_, i) => attemptOf(guard.admit(`10.0.0.${i + 1}`, 'victim@example.com')));
    const behind = guard.admitWhenDecided('10.0.0.9', 'victim@example.com');
    for (const guess of guesses) guess.failed();
    assert.deepEqual(refusal(await behind), { retryAfterMs: 20_000, scope: 'identity' });

    // Checks that stay undecided (uploads whose signature is checked at their end): busy after decideWithinMs, not 429.
    const slow = new CredentialGuard(LIMITS, new FakeClock(), { decideWithinMs: 50, limitIdentity: false });
    const uploads = Array.from({ length: 6 }, (_, i) => attemptOf(slow.admit('10.1.0.1', `KEY${i}`)));
    assert.deepEqual(refusal(await slow.admitWhenDecided('10.1.0.1', 'KEY9')), { retryAfterMs: 1_000, scope: 'pending' });
    assert.deepEqual(slow.underWay, { pending: 6, waiting: 0 }, 'the waiter left when it gave up');
    uploads[0]!.abandoned();
    attemptOf(await slow.admitWhenDecided('10.1.0.1', 'KEY9')).succeeded();
  },
);

test(
  'with failures already counted, the places left are shared by checks under way: a correct key waits, guesses beside it never exceed the limit',
  { timeout: 10_000 },
  async () => {
    fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 6 }),
        fc.integer({ min: 1, max: 60 }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 60 }),
        async (failuresBefore, honest, guessPattern) => {
          const guard = new CredentialGuard(LIMITS, new FakeClock(), { limitIdentity: false, decideWithinMs: 1_000 });
          for (let i = 0; i < failuresBefore; i++) attemptOf(guard.admit('192.0.2.10', 'WRONG')).failed();
          // Honest requests (key OWNER, correct) and guesses (key WRONG) from one address, all at once; each is decided a turn later.
          let failures = failuresBefore;
          const run = async (correct: boolean): Promise<'ok' | 'failed' | 'refused'> => {
            const admission = await guard.admitWhenDecided('192.0.2.10', correct ? 'OWNER' : 'WRONG');
            if (!admission.admitted) return 'refused';
            await new Promise((resolve) => setImmediate(resolve));
            if (correct) admission.attempt.succeeded();
            else {
              failures++;
              admission.attempt.failed();
            }
            return correct ? 'ok' : 'failed';
          };
          const outcomes = await Promise.all([...Array.from({ length: honest }, () => run(true)), ...guessPattern.map((correct) => run(correct))]);
          const honestOutcomes = [...outcomes.slice(0, honest), ...outcomes.slice(honest).filter((_, i) => guessPattern[i])];
          assert.ok(failures <= LIMITS.maxPerAddress, `${failures} failures counted: no guess slipped past the limit`);
          // Refused only once failures, not checks under way, filled the address: never before the 6th failure.
          if (failures < LIMITS.maxPerAddress)
            assert.ok(
              honestOutcomes.every((outcome) => outcome === 'ok'),
              JSON.stringify(outcomes),
            );
          assert.deepEqual(guard.underWay, { pending: 0, waiting: 0 });
        },
      ),
      { numRuns: 200 },
    );
  },
);
