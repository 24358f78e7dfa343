/** Filter evaluation over parsed filters (every operator, nesting, missing fields) and sampling. */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import fc from 'fast-check';
import { evaluateFilter } from '../../src/logs/filter/evaluate-filter.ts';
import { parseFilter, type FilterExpression } from '../../src/logs/filter/parse-filter.ts';
import { isSampled, rayFraction } from '../../src/logs/sampling.ts';

function where(filter: unknown): FilterExpression {
  const parsed = parseFilter(JSON.stringify(filter));
  assert.ok(parsed.ok, JSON.stringify(parsed));
  return parsed.filter.where;
}

const record = {
  ClientRequestHost: 'shop.example.test',
  ClientRequestPath: '/api/items',
  EdgeResponseStatus: 404,
  ClientRequestMethod: 'GET',
  EdgeStartTimestamp: Date.parse('2026-11-23T02:00:00Z'),
};

test('every operator compares numbers as numbers and strings as strings', { timeout: 10_000 }, () => {
  const cases: Array<[string, string, unknown, boolean]> = [
    ['EdgeResponseStatus', 'eq', 404, true],
    ['EdgeResponseStatus', 'eq', '404', true],
    ['EdgeResponseStatus', '!eq', 404, false],
    ['EdgeResponseStatus', 'lt', 500, true],
    ['EdgeResponseStatus', 'leq', 404, true],
    ['EdgeResponseStatus', 'gt', 99, true],
    ['EdgeResponseStatus', 'geq', 405, false],
    ['EdgeResponseStatus', 'in', [200, 404], true],
    ['EdgeResponseStatus', '!in', [200, 404], false],
    ['ClientRequestPath', 'startsWith', '/api', true],
    ['ClientRequestPath', 'endsWith', 'items', true],
    ['ClientRequestPath', '!startsWith', '/api', false],
    ['ClientRequestPath', '!endsWith', '/x', true],
    ['ClientRequestHost', 'contains', 'example', true],
    ['ClientRequestHost', '!contains', 'example', false],
    ['ClientRequestMethod', 'in', ['GET', 'HEAD'], true],
    ['ClientRequestMethod', 'eq', 'get', false],
    ['EdgeStartTimestamp', 'geq', '2026-11-23T00:00:00Z', true],
    ['EdgeStartTimestamp', 'lt', '2026-11-23T00:00:00Z', false],
  ];
  for (const [key, operator, value, expected] of cases) {
    assert.equal(evaluateFilter(where({ where: { key, operator, value } }), record), expected, `${key} ${operator} ${JSON.stringify(value)}`);
  }
});

test('a field the record lacks never matches a positive operator', { timeout: 10_000 }, () => {
  assert.equal(evaluateFilter(where({ where: { key: 'ClientRequestReferer', operator: 'eq', value: '' } }), record), false);
  assert.equal(evaluateFilter(where({ where: { key: 'ClientRequestReferer', operator: '!eq', value: 'x' } }), record), true);
  assert.equal(evaluateFilter(where({ where: { key: 'OriginResponseStatus', operator: 'lt', value: 1 } }), record), false);
});

test('X AND (Y OR Z) nests as the spec shows', { timeout: 10_000 }, () => {
  const filter = where({
    where: {
      and: [
        { key: 'ClientRequestHost', operator: 'eq', value: 'shop.example.test' },
        {
          or: [
            { key: 'EdgeResponseStatus', operator: 'eq', value: 500 },
            { key: 'ClientRequestPath', operator: 'startsWith', value: '/api' },
          ],
        },
      ],
    },
  });
  assert.equal(evaluateFilter(filter, record), true);
  assert.equal(evaluateFilter(filter, { ...record, ClientRequestPath: '/home' }), false);
  assert.equal(evaluateFilter(filter, { ...record, ClientRequestPath: '/home', EdgeResponseStatus: 500 }), true);
  assert.equal(evaluateFilter(filter, { ...record, ClientRequestHost: 'other.test' }), false);
});

type Node = { status: number; op: 'eq' | '!eq' | 'lt' | 'geq' } | { kind: 'and' | 'or'; children: Node[] };

test('property: and/or evaluate as boolean conjunction/disjunction of their criteria', { timeout: 10_000 }, () => {
  const leaf = fc.record({ status: fc.constantFrom(200, 404, 500), op: fc.constantFrom('eq', '!eq', 'lt', 'geq') });
  const tree = fc.letrec((tie) => ({
    node: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      leaf,
      fc.record({ kind: fc.constantFrom('and', 'or'), children: fc.array(tie('node'), { minLength: 1, maxLength: 3 }) }),
    ),
  })).node as fc.Arbitrary<Node>;
  const toFilter = (node: Node): unknown =>
    'status' in node ? { key: 'EdgeResponseStatus', operator: node.op, value: node.status } : { [node.kind]: node.children.map(toFilter) };
  const truth = (node: Node, status: number): boolean => {
    if ('status' in node) {
      return { eq: status === node.status, '!eq': status !== node.status, lt: status < node.status, geq: status >= node.status }[node.op];
    }
    return node.kind === 'and' ? node.children.every((c) => truth(c, status)) : node.children.some((c) => truth(c, status));
  };
  fc.assert(
    fc.property(tree, fc.constantFrom(200, 301, 404, 500, 503), (node, status) => {
      const parsed = parseFilter(JSON.stringify({ where: toFilter(node) }));
      fc.pre(parsed.ok);
      assert.equal(
        evaluateFilter((parsed as { ok: true; filter: { where: FilterExpression } }).filter.where, { EdgeResponseStatus: status }),
        truth(node, status),
      );
    }),
  );
});

test('sampling keeps the rate within 1.5 points over 20,000 rays and decides the same way every time', { timeout: 10_000 }, () => {
  const rays = Array.from({ length: 20_000 }, () => randomBytes(8).toString('hex'));
  for (const rate of [0.1, 0.5, 0.01]) {
    const kept = rays.filter((ray) => isSampled(ray, rate)).length / rays.length;
    assert.ok(Math.abs(kept - rate) <= 0.015, `rate ${rate}: kept ${kept}`);
  }
  assert.deepEqual(
    rays.map((ray) => isSampled(ray, 0.3)),
    rays.map((ray) => isSampled(ray, 0.3)),
  );
  assert.ok(rays.every((ray) => isSampled(ray, 1)));
  fc.assert(fc.property(fc.string(), (ray) => rayFraction(ray) >= 0 && rayFraction(ray) < 1));
});
