/**
 * Tail filters as wrangler sends them (`wrangler tail --status error --method POST --header ...`):
 * each condition alone, `self` standing for the tail opener's address, and (a property) a list of
 * filters passing exactly when each of them passes alone.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { tailEventPasses, tailFiltersBody, type TailEventView, type TailFilter } from '../../src/edge/tail-filters.ts';

function event(
  outcome: string,
  method: string,
  headers: Record<string, string>,
  logs: unknown[] = [],
  exceptions: Array<{ name: string; message: string }> = [],
): TailEventView {
  return { outcome, event: { request: { method, headers } }, logs: logs.map((message) => ({ message })), exceptions };
}

const OK_GET = event('ok', 'GET', { 'cf-connecting-ip': '127.0.0.1', 'x-trace': 'on' }, [['serving', '/a', { n: 1 }]]);
const THROWN_POST = event('exception', 'POST', { 'cf-connecting-ip': '10.0.0.9' }, [], [{ name: 'RangeError', message: 'it broke' }]);
/** What `wrangler tail --status error` sends. */
const ERRORS: TailFilter = { outcome: ['exception', 'exceededCpu', 'exceededMemory', 'unknown'] };

test('each filter alone', { timeout: 10_000 }, () => {
  const passes = (filter: TailFilter, e: TailEventView) => tailEventPasses([filter], e, 'v1', '127.0.0.1');
  assert.deepEqual([passes(ERRORS, OK_GET), passes(ERRORS, THROWN_POST)], [false, true]);
  assert.deepEqual([passes({ method: ['post'] }, OK_GET), passes({ method: ['POST'] }, THROWN_POST)], [false, true]);
  assert.deepEqual([passes({ header: { key: 'X-Trace' } }, OK_GET), passes({ header: { key: 'x-trace' } }, THROWN_POST)], [true, false]);
  assert.deepEqual([passes({ header: { key: 'x-trace', query: 'on' } }, OK_GET), passes({ header: { key: 'x-trace', query: 'off' } }, OK_GET)], [true, false]);
  assert.deepEqual(
    [passes({ client_ip: ['self'] }, OK_GET), passes({ client_ip: ['self'] }, THROWN_POST), passes({ client_ip: ['10.0.0.9'] }, THROWN_POST)],
    [true, false, true],
  );
  assert.deepEqual([passes({ query: '/a' }, OK_GET), passes({ query: 'broke' }, THROWN_POST), passes({ query: 'RangeError' }, OK_GET)], [true, true, false]);
  assert.deepEqual([passes({ scriptVersion: 'v1' }, OK_GET), passes({ scriptVersion: 'v2' }, OK_GET)], [true, false]);
  assert.equal(
    tailEventPasses([{ sampling_rate: 0.5 }], OK_GET, 'v1', undefined, () => 0.49),
    true,
  );
  assert.equal(
    tailEventPasses([{ sampling_rate: 0.5 }], OK_GET, 'v1', undefined, () => 0.5),
    false,
  );
  assert.equal(tailEventPasses([{ client_ip: ['self'] }], OK_GET, 'v1', undefined), false, 'self with no known opener matches nothing');
});

test('the body wrangler sends is read; an unknown filter is refused', { timeout: 10_000 }, () => {
  assert.deepEqual(tailFiltersBody.parse({ filters: [] }).filters, []);
  assert.deepEqual(tailFiltersBody.parse({}).filters, []);
  assert.deepEqual(tailFiltersBody.parse({ filters: [ERRORS, { client_ip: ['self'] }] }).filters, [ERRORS, { client_ip: ['self'] }]);
  assert.equal(tailFiltersBody.safeParse({ filters: [{ colour: 'red' }] }).success, false);
  assert.equal(tailFiltersBody.safeParse({ filters: [{ sampling_rate: 0 }] }).success, false);
});

test('a list of filters passes exactly when each one alone does', { timeout: 30_000 }, () => {
  const filterArb: fc.Arbitrary<TailFilter> = fc.oneof(
    fc.constant(ERRORS),
    fc.constant<TailFilter>({ outcome: ['ok'] }),
    fc.constantFrom<TailFilter>({ method: ['GET'] }, { method: ['POST', 'PUT'] }),
    fc.constantFrom<TailFilter>({ header: { key: 'x-trace' } }, { header: { key: 'x-trace', query: 'on' } }),
    fc.constantFrom<TailFilter>({ client_ip: ['self'] }, { client_ip: ['10.0.0.9'] }),
    fc.constantFrom<TailFilter>({ query: 'serving' }, { query: 'broke' }),
    fc.constantFrom<TailFilter>({ scriptVersion: 'v1' }, { scriptVersion: 'v2' }),
  );
  fc.assert(
    fc.property(fc.array(filterArb, { maxLength: 6 }), fc.constantFrom(OK_GET, THROWN_POST), (filters, e) => {
      assert.equal(
        tailEventPasses(filters, e, 'v1', '127.0.0.1'),
        filters.every((filter) => tailEventPasses([filter], e, 'v1', '127.0.0.1')),
      );
    }),
  );
});
