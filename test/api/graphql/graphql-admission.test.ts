/**
 * Which GraphQL queries may start (graphql-admission.ts), on a fake clock: an account's queries in
 * progress, the server's, and an account's budget per window, each refused with its code, message
 * and Retry-After; one account's refusals never touch another's; a query's end frees its place
 * (once, however often its release is called).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeClock } from '../../../src/core/clock.ts';
import { ADMISSION_LIMITS, GraphQLAdmission } from '../../../src/api/graphql/graphql-admission.ts';
import { GraphQLRequestError } from '../../../src/api/graphql/graphql-errors.ts';

function refused(code: string, message: RegExp, retryAfter: number) {
  return (error: unknown) => {
    assert.ok(error instanceof GraphQLRequestError, String(error));
    assert.equal(error.code, code);
    assert.match(error.message, message);
    assert.equal(error.retryAfter, retryAfter);
    return true;
  };
}

test('queries in progress: per account and on the server', { timeout: 10_000 }, () => {
  const admission = new GraphQLAdmission(new FakeClock(0), { perAccount: 2, total: 3, budget: 100, windowMs: 60_000 });
  const a1 = admission.admit('a');
  const a2 = admission.admit('a');
  assert.throws(() => admission.admit('a'), refused('GRAPHQL_RATE_LIMITED', /^too many queries in progress for this account \(at most 2 at once\)/, 1));
  const b1 = admission.admit('b');
  assert.throws(() => admission.admit('c'), refused('GRAPHQL_BUSY', /^too many queries in progress, please try again later$/, 1));
  a1();
  a1(); // twice is once
  const a3 = admission.admit('a');
  assert.throws(() => admission.admit('c'), refused('GRAPHQL_BUSY', /too many queries in progress/, 1));
  for (const release of [a2, a3, b1]) release();
  const done = [admission.admit('c'), admission.admit('c'), admission.admit('d')];
  for (const release of done) release();
});

test("an account's budget per window: spent by each query, back as the window moves", { timeout: 10_000 }, () => {
  const clock = new FakeClock(1_000_000);
  const admission = new GraphQLAdmission(clock, { perAccount: 2, total: 16, budget: 3, windowMs: 300_000 });
  admission.admit('a')();
  clock.advance(100_000);
  admission.admit('a')();
  admission.admit('a')();
  assert.throws(
    () => admission.admit('a'),
    refused('GRAPHQL_RATE_LIMITED', /^rate limiter budget depleted, try again after 200 seconds: an account may run 3 queries every 5 minutes$/, 200),
  );
  admission.admit('b')(); // another account's budget is its own
  clock.advance(200_000);
  admission.admit('a')(); // the first query left the window
  assert.throws(() => admission.admit('a'), refused('GRAPHQL_RATE_LIMITED', /try again after 100 seconds/, 100));
  assert.deepEqual(ADMISSION_LIMITS, { perAccount: 2, total: 16, budget: 300, windowMs: 300_000 });
});
