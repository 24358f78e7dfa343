import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  FILTER_LIMITS,
  HTTP_REQUESTS_FIELDS,
  parseFilter,
  type FilterExpression,
  type FilterOperator,
  type FilterScalar,
  type HttpRequestsFieldName,
} from '../../../src/logs/index.ts';

const ok = (text: string) => {
  const result = parseFilter(text);
  assert.ok(result.ok, `expected ${text} to parse: ${JSON.stringify(!result.ok && result.problems)}`);
  return result.filter;
};
const problems = (text: string) => {
  const result = parseFilter(text);
  assert.ok(!result.ok, `expected ${text} to be refused`);
  return result.problems;
};
const criterion = (key: string, operator: string, value: unknown) => ({ key, operator, value });

test('a criterion directly under where, and X AND (Y OR Z) nested', { timeout: 10_000 }, () => {
  assert.deepEqual(ok('{"where":{"key":"ClientRequestHost","operator":"eq","value":"example.com"}}').where, {
    kind: 'criterion',
    key: 'ClientRequestHost',
    operator: 'eq',
    value: 'example.com',
  });
  const nested = ok(
    JSON.stringify({
      where: {
        and: [
          criterion('ClientRequestPath', 'contains', '/static'),
          { or: [criterion('ClientRequestMethod', 'eq', 'GET'), criterion('EdgeResponseStatus', 'in', [200, '201'])] },
        ],
      },
    }),
  );
  assert.equal(nested.operatorCount, 3);
  assert.deepEqual(nested.where, {
    kind: 'and',
    clauses: [
      { kind: 'criterion', key: 'ClientRequestPath', operator: 'contains', value: '/static' },
      {
        kind: 'or',
        clauses: [
          { kind: 'criterion', key: 'ClientRequestMethod', operator: 'eq', value: 'GET' },
          { kind: 'criterion', key: 'EdgeResponseStatus', operator: 'in', value: [200, 201] },
        ],
      },
    ],
  });
});

test("values take their field's type; older operator spellings are normalised", { timeout: 10_000 }, () => {
  const where = (text: string) => ok(text).where as { operator: FilterOperator; value: FilterScalar };
  assert.deepEqual(where('{"where":{"key":"BotScore","operator":"lt","value":"30"}}').value, 30, 'numeric strings, as the docs write them');
  assert.equal(where('{"where":{"key":"WorkerSubrequest","operator":"eq","value":"true"}}').value, true);
  assert.equal(where('{"where":{"key":"EdgeStartTimestamp","operator":"geq","value":"2026-01-01T00:00:00Z"}}').value, Date.UTC(2026, 0, 1));
  assert.equal(where('{"where":{"key":"EdgeStartTimestamp","operator":"geq","value":1767225600}}').value, Date.UTC(2026, 0, 1), 'seconds');
  assert.equal(where('{"where":{"key":"EdgeStartTimestamp","operator":"geq","value":1767225600000000000}}').value, Date.UTC(2026, 0, 1), 'nanoseconds');
  assert.equal(where('{"where":{"key":"SecurityActions","operator":"!contains","value":"block"}}').operator, '!contains');
  for (const [alias, operator] of [
    ['==', 'eq'],
    ['!=', '!eq'],
    ['neq', '!eq'],
    ['<', 'lt'],
    ['<=', 'leq'],
    ['lte', 'leq'],
    ['>', 'gt'],
    ['>=', 'geq'],
    ['gte', 'geq'],
  ] as const) {
    assert.equal(where(JSON.stringify({ where: criterion('BotScore', alias, 1) })).operator, operator);
  }
});

test('every mistake is reported with a pointer to it', { timeout: 10_000 }, () => {
  const cases: Array<[unknown, string, RegExp]> = [
    [{}, '', /must contain the key "where"/],
    [[], '', /JSON object/],
    [{ where: criterion('Nope', 'eq', 'x') }, '/where/key', /not a field of the http_requests dataset/],
    [{ where: criterion('ClientIP', 'equals', 'x') }, '/where/operator', /"equals" is not an operator; use one of eq, !eq, lt/],
    [{ where: criterion('ClientIP', 'lt', 'x') }, '/where/operator', /lt does not apply to ClientIP \(string\)/],
    [{ where: criterion('WorkerSubrequest', 'contains', 'x') }, '/where/operator', /does not apply/],
    [{ where: criterion('RequestHeaders', 'eq', 'x') }, '/where/key', /RequestHeaders \(object\) cannot be filtered on/],
    [{ where: criterion('BotDetectionIDs', 'contains', 1) }, '/where/key', /cannot be filtered on/],
    [{ where: criterion('ClientIP', 'in', 'x') }, '/where/value', /in needs a non-empty array/],
    [{ where: criterion('ClientIP', 'in', []) }, '/where/value', /non-empty array/],
    [{ where: criterion('EdgeResponseStatus', 'in', [200, 'x']) }, '/where/value/1', /"x" is not a valid number/],
    [{ where: criterion('EdgeResponseStatus', 'eq', 'two hundred') }, '/where/value', /not a valid number/],
    [{ where: criterion('ClientIP', 'eq', 1) }, '/where/value', /1 is not a valid string/],
    [{ where: criterion('WorkerSubrequest', 'eq', 'yes') }, '/where/value', /boolean/],
    [{ where: criterion('EdgeStartTimestamp', 'gt', 'yesterday') }, '/where/value', /timestamp/],
    [{ where: { key: 'ClientIP', operator: 'eq' } }, '/where', /needs "value"/],
    [{ where: { ...criterion('ClientIP', 'eq', 'x'), extra: 1 } }, '/where/extra', /unknown key "extra"/],
    [{ where: { and: [] } }, '/where/and', /non-empty array/],
    [{ where: { and: {} } }, '/where/and', /non-empty array/],
    [{ where: { and: [criterion('ClientIP', 'eq', 'x')], or: [] } }, '/where', /may not have other keys/],
    [{ where: { or: [criterion('ClientIP', 'eq', 'x'), 'x'] } }, '/where/or/1', /must be an object/],
    [{ where: criterion('ClientIP', 'eq', 'x'), select: [] }, '/select', /unknown key "select"/],
  ];
  for (const [document, pointer, message] of cases) {
    const found = problems(JSON.stringify(document));
    assert.ok(
      found.some((p) => p.pointer === pointer && message.test(p.message)),
      `${JSON.stringify(document)}: ${JSON.stringify(found)}`,
    );
  }
  assert.match(problems('{"where":').at(0)!.message, /not valid JSON/);
  assert.equal(
    problems(JSON.stringify({ where: { and: [criterion('Nope', 'eq', 'x'), criterion('ClientIP', 'lt', 'y')] } })).length,
    2,
    'all problems, not the first',
  );
});

/** `count` criteria on JA4 (the shortest key) inside one `and`, padded with spaces to `bytes` when given. */
function filterOf(count: number, bytes?: number): string {
  const body = JSON.stringify({ where: { and: Array.from({ length: count }, () => criterion('JA4', 'eq', '')) } });
  if (bytes === undefined) return body;
  assert.ok(body.length <= bytes);
  return body.slice(0, -1) + ' '.repeat(bytes - body.length) + '}';
}

test("the real service's limits: exactly 1000 bytes and 30 operators pass, one more of either is refused", { timeout: 10_000 }, () => {
  assert.equal(ok(filterOf(2, FILTER_LIMITS.maxBytes)).bytes, 1000);
  const overBytes = problems(filterOf(2, FILTER_LIMITS.maxBytes + 1));
  assert.deepEqual(
    overBytes.map((p) => [p.limit, p.message]),
    [['bytes', 'the filter is 1001 bytes long; at most 1000 bytes are allowed']],
  );
  // 30 criteria of JSON never fit in 1000 bytes (about 24 do), so the operator limit is shown with the byte limit raised.
  const roomy = { maxOperators: FILTER_LIMITS.maxOperators, maxBytes: 100_000 };
  const thirty = parseFilter(filterOf(30), roomy);
  assert.ok(thirty.ok && thirty.filter.operatorCount === 30);
  const thirtyOne = parseFilter(filterOf(31), roomy);
  assert.ok(!thirtyOne.ok);
  assert.deepEqual(
    thirtyOne.problems.map((p) => [p.limit, p.message]),
    [['operators', 'the filter has 31 operators; at most 30 are allowed']],
  );
  assert.deepEqual(
    problems(filterOf(31)).map((p) => p.limit),
    ['bytes'],
    'a text over the byte limit is not parsed: the byte limit is all it gets',
  );
  const multibyte = JSON.stringify({ where: criterion('ClientRequestPath', 'contains', 'é'.repeat(480)) });
  assert.equal(problems(multibyte)[0]!.limit, 'bytes', 'bytes are UTF-8 bytes, not characters');
});

test('the byte limit is checked before parsing, the depth limit before anything recursive: 400-class problems, never a throw', { timeout: 10_000 }, () => {
  const group = (levels: number, inner: string) => `${'{"and":['.repeat(levels)}${inner}${']}'.repeat(levels)}`;
  const leaf = JSON.stringify(criterion('ClientRequestHost', 'eq', 'x'));
  // 10,000 nested groups (once a stack overflow and a 500 from the API): over 1000 bytes, refused unparsed.
  const huge = `{"where":${group(10_000, leaf)}}`;
  assert.deepEqual(problems(huge), [
    { pointer: '', limit: 'bytes', message: `the filter is ${Buffer.byteLength(huge)} bytes long; at most 1000 bytes are allowed` },
  ]);
  // Not even JSON past the limit: still only the byte limit.
  assert.deepEqual(
    problems(`{"where":${'['.repeat(2000)}`).map((p) => p.limit),
    ['bytes'],
  );
  // Within 1000 bytes, depth: 1 (the document) + 1 (the criterion) + 2 per group.
  assert.ok(ok(`{"where":${group(31, leaf)}}`).operatorCount === 1, '31 groups: 64 levels');
  const deep = `{"where":${group(32, leaf)}}`;
  assert.ok(Buffer.byteLength(deep) <= 1000);
  assert.deepEqual(problems(deep), [
    {
      pointer: '',
      limit: 'depth',
      message: 'the filter nests arrays and objects more than 64 levels deep (each "and"/"or" group takes two); at most 64 are allowed',
    },
  ]);
  assert.deepEqual(
    problems(`{"where":${'['.repeat(490)}${']'.repeat(490)}}`).map((p) => p.limit),
    ['depth'],
    'arrays count too',
  );
  assert.deepEqual(
    problems(`{"where":${'['.repeat(70)}`).map((p) => p.limit),
    ['depth'],
    'deep before it is broken',
  );
  assert.match(problems(`{"where":${'['.repeat(10)}`)[0]!.message, /not valid JSON/);
  // Raised limits parse deeper texts (the evaluator's recursion is bounded by them).
  const raised = parseFilter(`{"where":${group(200, leaf)}}`, { maxOperators: 30, maxBytes: 10_000, maxDepth: 402 });
  assert.ok(raised.ok);
});

// ---- properties ----

type Built = { json: unknown; expected: FilterExpression };

const FIELDS_BY_TYPE = (type: string) =>
  (Object.entries(HTTP_REQUESTS_FIELDS) as Array<[HttpRequestsFieldName, { type: string }]>).filter(([, field]) => field.type === type).map(([name]) => name);

const stringValue = fc.string({ maxLength: 6 });
const arbitraryCriterion: fc.Arbitrary<Built> = fc.oneof(
  fc
    .tuple(
      fc.constantFrom(...FIELDS_BY_TYPE('string')),
      fc.constantFrom('eq', '!eq', 'startsWith', 'endsWith', '!startsWith', '!endsWith', 'contains', '!contains'),
      stringValue,
    )
    .map(([key, operator, value]) => ({ json: criterion(key, operator, value), expected: { kind: 'criterion', key, operator, value } as FilterExpression })),
  fc
    .tuple(
      fc.constantFrom(...FIELDS_BY_TYPE('int')),
      fc.constantFrom('eq', '!eq', 'lt', 'leq', 'gt', 'geq'),
      fc.integer({ min: -5, max: 99_999 }),
      fc.boolean(),
    )
    .map(([key, operator, value, asString]) => ({
      json: criterion(key, operator, asString ? String(value) : value),
      expected: { kind: 'criterion', key, operator, value } as FilterExpression,
    })),
  fc
    .tuple(
      fc.constantFrom(...FIELDS_BY_TYPE('int'), ...FIELDS_BY_TYPE('string')),
      fc.constantFrom('in', '!in'),
      fc.array(fc.integer({ min: 0, max: 999 }), { minLength: 1, maxLength: 3 }),
    )
    .map(([key, operator, values]) => {
      const numeric = HTTP_REQUESTS_FIELDS[key].type === 'int';
      const value = numeric ? values : values.map(String);
      return { json: criterion(key, operator, value), expected: { kind: 'criterion', key, operator, value } as FilterExpression };
    }),
  fc
    .tuple(fc.constantFrom(...FIELDS_BY_TYPE('bool')), fc.constantFrom('eq', '!eq'), fc.boolean())
    .map(([key, operator, value]) => ({ json: criterion(key, operator, value), expected: { kind: 'criterion', key, operator, value } as FilterExpression })),
  fc
    .tuple(fc.constantFrom(...FIELDS_BY_TYPE('timestamp')), fc.constantFrom('lt', 'geq'), fc.integer({ min: 0, max: 2_000_000_000 }))
    .map(([key, operator, seconds]) => ({
      json: criterion(key, operator, seconds),
      expected: { kind: 'criterion', key, operator, value: seconds * 1000 } as FilterExpression,
    })),
  fc
    .tuple(fc.constantFrom(...FIELDS_BY_TYPE('string[]')), fc.constantFrom('contains', '!contains'), stringValue)
    .map(([key, operator, value]) => ({ json: criterion(key, operator, value), expected: { kind: 'criterion', key, operator, value } as FilterExpression })),
);

const arbitraryTree: fc.Arbitrary<Built> = fc.letrec<{ node: Built }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    arbitraryCriterion,
    fc.tuple(fc.constantFrom('and' as const, 'or' as const), fc.array(tie('node'), { minLength: 1, maxLength: 3 })).map(([kind, children]) => ({
      json: { [kind]: children.map((c) => c.json) },
      expected: { kind, clauses: children.map((c) => c.expected) } as FilterExpression,
    })),
  ),
})).node;

function leaves(expression: FilterExpression): number {
  return expression.kind === 'criterion' ? 1 : expression.clauses.reduce((n, c) => n + leaves(c), 0);
}

test('property: any well-formed filter parses to its own structure, unless it passes a limit', { timeout: 10_000 }, () => {
  fc.assert(
    fc.property(arbitraryTree, (tree) => {
      const text = JSON.stringify({ where: tree.json });
      const result = parseFilter(text);
      const operators = leaves(tree.expected);
      const within = operators <= FILTER_LIMITS.maxOperators && Buffer.byteLength(text) <= FILTER_LIMITS.maxBytes;
      if (within) {
        assert.ok(result.ok, JSON.stringify(!result.ok && result.problems));
        assert.deepEqual(result.filter.where, tree.expected);
        assert.equal(result.filter.operatorCount, operators);
      } else {
        assert.ok(!result.ok);
        assert.ok(
          result.problems.every((p) => p.limit !== undefined),
          'only limits are wrong',
        );
      }
    }),
    { numRuns: 300 },
  );
});

test('property: breaking one operator is reported at that criterion and nowhere else', { timeout: 10_000 }, () => {
  fc.assert(
    fc.property(
      arbitraryTree,
      fc.nat(),
      fc
        .string({ minLength: 1, maxLength: 5 })
        .filter((s) => !/^(eq|!eq|lt|leq|gt|geq|in|!in|==|!=|<|<=|>|>=|lte|gte|neq)$/.test(s) && !/^!?(startsWith|endsWith|contains)$/.test(s)),
      (tree, pick, badOperator) => {
        type Node = { [key: string]: unknown };
        const paths: string[] = [];
        const walk = (node: Node, pointer: string) => {
          if ('key' in node) paths.push(pointer);
          else for (const kind of ['and', 'or']) if (kind in node) (node[kind] as Node[]).forEach((c, i) => walk(c, `${pointer}/${kind}/${i}`));
        };
        const json = structuredClone(tree.json) as Node;
        walk(json, '/where');
        const target = paths[pick % paths.length]!;
        const node = target
          .split('/')
          .slice(2)
          .reduce<Node>((n, part) => n[part] as Node, json);
        node.operator = badOperator;
        const result = parseFilter(JSON.stringify({ where: json }), { maxOperators: 1000, maxBytes: 1_000_000 });
        assert.ok(!result.ok);
        assert.deepEqual(
          result.problems.map((p) => p.pointer),
          [`${target}/operator`],
        );
      },
    ),
    { numRuns: 200 },
  );
});

test('property: arbitrary JSON never throws; a refusal always says why', { timeout: 10_000 }, () => {
  fc.assert(
    fc.property(fc.oneof(fc.json(), fc.string()), (text) => {
      const result = parseFilter(text);
      if (!result.ok) assert.ok(result.problems.length > 0 && result.problems.every((p) => p.message.length > 0));
    }),
    { numRuns: 500 },
  );
});
