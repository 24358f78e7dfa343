/** CredentialGuard: per address and per identity, attempts counted before verification, trusted addresses, expiry by FakeClock. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
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
  assert.equal(refusal(guard.admit('10.0.0.2', 'victim@example.com')).scope, 'identity', 'three in flight use up the identity');
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
