/**
 * The GraphQL parser: what analytics clients send parses to the fields and values they meant
 * (properties: any operation printed back parses to itself, whatever the spacing, commas and
 * comments), every other text is refused with a GraphQLSyntaxError, never another exception, and
 * its limits hold: the text's length, its tokens, and how deeply selections, values and types nest
 * (a text past one is refused, one within them is not refused for it); a 64 KiB text parses fast.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  GraphQLSyntaxError,
  MAX_DEPTH,
  MAX_QUERY_LENGTH,
  MAX_TOKENS,
  parseGraphQL,
  type GraphQLField,
  type GraphQLValue,
} from '../../../src/api/graphql/graphql-parser.ts';

const nameArb = fc
  .stringMatching(/^[_A-Za-z][_0-9A-Za-z]{0,8}$/)
  .filter((n) => !['true', 'false', 'null', 'query', 'fragment', 'mutation', 'subscription'].includes(n));

const valueArb: fc.Arbitrary<GraphQLValue> = fc.letrec<{ value: GraphQLValue }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    nameArb.map((name) => ({ kind: 'variable' as const, name })),
    fc.integer({ min: -1e9, max: 1e9 }).map((value) => ({ kind: 'int' as const, value })),
    fc
      .double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 })
      .filter((v) => !Number.isInteger(v))
      .map((value) => ({ kind: 'float' as const, value })),
    fc.string({ maxLength: 12, unit: 'grapheme' }).map((value) => ({ kind: 'string' as const, value })),
    fc.boolean().map((value) => ({ kind: 'boolean' as const, value })),
    fc.constant({ kind: 'null' as const }),
    nameArb.map((value) => ({ kind: 'enum' as const, value })),
    fc.array(tie('value'), { maxLength: 3 }).map((values) => ({ kind: 'list' as const, values })),
    fc.uniqueArray(fc.tuple(nameArb, tie('value')), { maxLength: 3, selector: ([k]) => k }).map((fields) => ({ kind: 'object' as const, fields })),
  ),
})).value;

const fieldArb: fc.Arbitrary<GraphQLField> = fc.letrec<{ field: GraphQLField }>((tie) => ({
  field: fc.record({
    alias: fc.option(nameArb, { nil: undefined }),
    name: nameArb,
    arguments: fc.uniqueArray(fc.tuple(nameArb, valueArb), { maxLength: 3, selector: ([k]) => k }),
    selections: fc.oneof({ depthSize: 'small' }, fc.constant<GraphQLField[]>([]), fc.array(tie('field'), { minLength: 1, maxLength: 3 })),
  }),
})).field;

/** Ignored tokens: white space, commas, comments (each ends its line). */
const gapArb = fc.constantFrom(' ', '\n', ', ', '\t', ' # a comment\n', ',,\r\n');

function printValue(value: GraphQLValue, gap: string): string {
  switch (value.kind) {
    case 'variable':
      return `$${value.name}`;
    case 'int':
    case 'float':
      return String(value.value);
    case 'string':
      return JSON.stringify(value.value);
    case 'boolean':
      return String(value.value);
    case 'null':
      return 'null';
    case 'enum':
      return value.value;
    case 'list':
      return `[${value.values.map((v) => printValue(v, gap)).join(gap)}]`;
    case 'object':
      return `{${value.fields.map(([k, v]) => `${k}:${gap}${printValue(v, gap)}`).join(gap)}}`;
  }
}

function printField(field: GraphQLField, gap: string): string {
  const args = field.arguments.length === 0 ? '' : `(${field.arguments.map(([k, v]) => `${k}: ${printValue(v, gap)}`).join(gap)})`;
  const selections = field.selections.length === 0 ? '' : `${gap}{${gap}${field.selections.map((f) => printField(f, gap)).join(gap)}${gap}}`;
  return `${field.alias === undefined ? '' : `${field.alias}:${gap}`}${field.name}${args}${selections}`;
}

test('any query printed back parses to the same fields and values, however it is spaced', { timeout: 60_000 }, () => {
  fc.assert(
    fc.property(fc.array(fieldArb, { minLength: 1, maxLength: 3 }), fc.option(nameArb, { nil: undefined }), gapArb, (fields, name, gap) => {
      const text = `${name === undefined ? '' : `query ${name}($a: String!, $b: [Int!] = [1, 2])`}${gap}{${gap}${fields.map((f) => printField(f, gap)).join(gap)}${gap}}${gap}`;
      const parsed = parseGraphQL(text);
      assert.deepEqual(parsed.selections, structuredClone(fields));
      assert.equal(parsed.name, name);
    }),
    { numRuns: 300 },
  );
});

/** Texts that break a parser: runs of one opening token (deep nesting), of names (many tokens), and of both mixed with anything. */
const hostileArb = fc.oneof(
  fc.string({ maxLength: 80 }),
  fc.stringMatching(/^[{}()[\]:$!=@"#,. a-z0-9\\-]{0,60}$/),
  fc
    .tuple(
      fc.constantFrom('{', '{ a ', '[', '{ a(b: ', '{ a(b: {c: ', 'query($a: ', 'query($a: [', '"', '\\', 'a ', '# x\n', '$'),
      fc.integer({ min: 1, max: 70_000 }),
      fc.string({ maxLength: 20 }),
    )
    .map(([unit, times, tail]) => unit.repeat(Math.ceil(times / unit.length)) + tail),
);

test('any other text is refused with a GraphQLSyntaxError, never another exception', { timeout: 60_000 }, () => {
  fc.assert(
    fc.property(hostileArb, (text) => {
      try {
        parseGraphQL(text);
      } catch (error) {
        assert.ok(error instanceof GraphQLSyntaxError, String(error));
      }
    }),
    { numRuns: 2000 },
  );
});

test('its limits hold: nesting, tokens and length past a limit are refused, within them they are not', { timeout: 60_000 }, () => {
  const refusedFor = (text: string, reason: RegExp): boolean => {
    try {
      parseGraphQL(text);
      return false;
    } catch (error) {
      assert.ok(error instanceof GraphQLSyntaxError, String(error));
      return reason.test(error.message);
    }
  };
  // Selection sets, list values, object values and variable types nested n times, and the level of
  // the deepest thing in each (the operation's selection set is level 0, a field's argument level 1).
  const nested: Array<{ text: (n: number) => string; deepest: (n: number) => number }> = [
    { text: (n) => `${'{ a '.repeat(n)}${'}'.repeat(n)}`, deepest: (n) => n - 1 },
    { text: (n) => `{ a(b: ${'['.repeat(n)}${']'.repeat(n)}) }`, deepest: (n) => n },
    { text: (n) => `{ a(b: ${'{c: '.repeat(n)}1${'}'.repeat(n)}) }`, deepest: (n) => n + 1 },
    { text: (n) => `query($v: ${'['.repeat(n)}Int${']'.repeat(n)}) { a }`, deepest: (n) => n },
  ];
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 3 * MAX_DEPTH }), fc.constantFrom(...nested), (n, shape) => {
      const text = shape.text(n);
      assert.equal(refusedFor(text, /nests more than/), shape.deepest(n) > MAX_DEPTH, text);
    }),
    { numRuns: 300 },
  );
  // `{ a a ... a }`: k names and two braces.
  fc.assert(
    fc.property(fc.integer({ min: MAX_TOKENS - 50, max: MAX_TOKENS + 50 }), (k) => {
      assert.equal(refusedFor(`{${' a'.repeat(k)} }`, /more than 20000 tokens/), k + 2 > MAX_TOKENS, `${k + 2} tokens`);
    }),
    { numRuns: 100 },
  );
  // Ignored characters cost no tokens; only the length bounds them.
  fc.assert(
    fc.property(fc.integer({ min: MAX_QUERY_LENGTH - 20, max: MAX_QUERY_LENGTH + 20 }), (length) => {
      const text = `{ a }${' '.repeat(length - 5)}`;
      assert.equal(refusedFor(text, /at most 65536 are accepted/), length > MAX_QUERY_LENGTH, `${length} characters`);
    }),
    { numRuns: 50 },
  );
});

test('a 64 KiB query parses in milliseconds, however it is made', { timeout: 60_000 }, () => {
  let aliases = '';
  for (let i = 0; aliases.length < MAX_QUERY_LENGTH - 200; i++)
    aliases += `a${i}: r2StorageAdaptiveGroups(limit: 10000, filter: {storageClass: "Standard"}) { max { objectCount } dimensions { bucketName } }\n`;
  const texts = {
    aliases: `{ viewer { accounts(filter: {accountTag: "x"}) { ${aliases} } } }`,
    'dense names': `{${' a'.repeat(MAX_QUERY_LENGTH / 2 - 2)} }`,
    'one long string': `{ a(s: "${'x'.repeat(MAX_QUERY_LENGTH - 20)}") }`,
    escapes: `{ a(s: "${'\\u0041'.repeat(Math.floor((MAX_QUERY_LENGTH - 20) / 6))}") }`,
  };
  for (const [name, text] of Object.entries(texts)) {
    assert.ok(text.length <= MAX_QUERY_LENGTH, name);
    let best = Infinity;
    for (let round = 0; round < 5; round++) {
      const started = performance.now();
      try {
        parseGraphQL(text);
      } catch (error) {
        assert.ok(error instanceof GraphQLSyntaxError);
      }
      best = Math.min(best, performance.now() - started);
    }
    console.log(`parse ${name} (${text.length} characters): ${best.toFixed(1)} ms`);
    // Generous: a few ms on a quiet machine; a busy one stretches it.
    assert.ok(best < 100, `${name}: ${best} ms`);
  }
});

test("wrangler's r2 bucket info query; refusals name what is wrong", { timeout: 10_000 }, () => {
  const query = `query getR2StorageMetrics($accountTag: string, $filter: AccountR2StorageAdaptiveGroupsFilter_InputObject) {
    viewer { accounts(filter: { accountTag: $accountTag }) {
      r2StorageAdaptiveGroups(limit: 1, filter: $filter, orderBy: [datetime_DESC]) { max { objectCount, payloadSize } dimensions { datetime } }
    } }
  }`;
  const op = parseGraphQL(query);
  assert.equal(op.name, 'getR2StorageMetrics');
  assert.deepEqual(op.variables, ['accountTag', 'filter']);
  const groups = op.selections[0]!.selections[0]!.selections[0]!;
  assert.equal(groups.name, 'r2StorageAdaptiveGroups');
  assert.deepEqual(groups.arguments, [
    ['limit', { kind: 'int', value: 1 }],
    ['filter', { kind: 'variable', name: 'filter' }],
    ['orderBy', { kind: 'list', values: [{ kind: 'enum', value: 'datetime_DESC' }] }],
  ]);
  assert.equal(parseGraphQL('{ a: b(s: "\\u0041\\n") }').selections[0]!.arguments[0]![1].kind, 'string');

  const refusals: Array<[string, RegExp]> = [
    ['', /the query is empty/],
    ['mutation { x }', /mutation operations are not supported/],
    ['{ ...F } fragment F on Q { x }', /fragments are not supported/],
    ['{ x @include(if: true) }', /directives are not supported/],
    ['{ x(a: """b""") }', /block strings/],
    ['{ x', /unexpected the end of the query, expected a name/],
    ['{ }', /at least one field/],
    ['{ a } { b }', /several operations/],
    [`${'{ a '.repeat(MAX_DEPTH + 2)}${'}'.repeat(MAX_DEPTH + 2)}`, /nests more than 32 levels/],
    [`query($a: ${'['.repeat(40)}Int${']'.repeat(40)}) { a }`, /type nests more than 32 lists deep/],
    [`{${' a'.repeat(MAX_TOKENS)} }`, /more than 20000 tokens/],
    ['x'.repeat(64 * 1024 + 1), /at most 65536 are accepted/],
  ];
  for (const [text, message] of refusals)
    assert.throws(
      () => parseGraphQL(text),
      (error: unknown) => error instanceof GraphQLSyntaxError && message.test(error.message),
      text.slice(0, 40),
    );
  assert.equal(parseGraphQL('query A { a } query B { b }', 'B').selections[0]!.name, 'b');
});
