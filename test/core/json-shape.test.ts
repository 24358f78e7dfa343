/** The JSON shape scanner agrees with JSON.parse on validity, depth and item count (fast-check), and stops early. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { MAX_JSON_DEPTH, scanJsonShape } from '../../src/core/json-shape.ts';

const UNLIMITED = { maxDepth: 1_000_000 };

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Values in a parsed value (itself included), as the scanner counts them. */
function valuesOf(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 1;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + children.reduce<number>((sum, child) => sum + valuesOf(child), 0);
}

/** Nesting depth of a parsed value, as the scanner counts it. */
function depthOf(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + children.reduce<number>((max, child) => Math.max(max, depthOf(child)), 0);
}

/** JSON texts with arbitrary whitespace between tokens, as clients format them. */
const jsonTextArb = fc.tuple(fc.jsonValue({ maxDepth: 6 }), fc.constantFrom(undefined, 1, 2, '\t')).map(([value, space]) => JSON.stringify(value, null, space));

/** A JSON text with a few characters deleted, replaced or inserted: mostly invalid, sometimes not. */
const mutatedArb = fc
  .tuple(
    jsonTextArb,
    fc.array(fc.tuple(fc.nat(), fc.constantFrom('del', 'ins', 'set'), fc.constantFrom(...'{}[],:"\\ \n0123456789-+.eEtrufalsn\u0000\u001fxu'.split(''))), {
      minLength: 1,
      maxLength: 3,
    }),
  )
  .map(([text, edits]) => {
    let out = text;
    for (const [at, op, char] of edits) {
      const i = out.length === 0 ? 0 : at % out.length;
      out =
        op === 'del' ? out.slice(0, i) + out.slice(i + 1) : op === 'ins' ? out.slice(0, i) + char + out.slice(i) : out.slice(0, i) + char + out.slice(i + 1);
    }
    return out;
  });

test('property: valid JSON is accepted with the depth and top-level item count of the parsed value', { timeout: 60_000 }, () => {
  fc.assert(
    fc.property(jsonTextArb, (text) => {
      const value: unknown = JSON.parse(text);
      const shape = scanJsonShape(text, UNLIMITED);
      assert.deepEqual(shape, {
        kind: 'json',
        root: Array.isArray(value) ? 'array' : typeof value === 'object' && value !== null ? 'object' : 'scalar',
        items: Array.isArray(value) ? value.length : 0,
        depth: depthOf(value),
        values: valuesOf(value),
      });
    }),
    { numRuns: 500 },
  );
});

test('property: any text is accepted exactly when JSON.parse accepts it', { timeout: 60_000 }, () => {
  const check = (text: string) => assert.equal(scanJsonShape(text, UNLIMITED).kind === 'json', parses(text), JSON.stringify(text));
  fc.assert(fc.property(mutatedArb, check), { numRuns: 1000 });
  fc.assert(
    fc.property(fc.string({ unit: fc.constantFrom(...'{}[],:" \t\n\\/u0123456789abcdefABCDEFtrunlsE.-+x\u00e9\u2028'.split('')), maxLength: 12 }), check),
    { numRuns: 1000 },
  );
  fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 20 }), check), { numRuns: 500 });
});

test('property: the depth limit refuses exactly the texts deeper than it, at the first container too deep', { timeout: 60_000 }, () => {
  fc.assert(
    fc.property(jsonTextArb, fc.nat({ max: 8 }), (text, maxDepth) => {
      const depth = depthOf(JSON.parse(text));
      const shape = scanJsonShape(text, { maxDepth });
      if (depth <= maxDepth) {
        assert.equal(shape.kind, 'json');
      } else {
        assert.equal(shape.kind, 'too-deep');
        assert.ok(shape.kind === 'too-deep' && (text[shape.offset] === '[' || text[shape.offset] === '{'));
        // The prefix before the offending container opens exactly maxDepth levels: no deeper one came earlier.
        assert.equal(scanJsonShape(text.slice(0, shape.offset), { maxDepth }).kind, 'invalid');
      }
    }),
    { numRuns: 500 },
  );
});

test('property: batches over the item limit are refused as item limit + 1 begins; within it, counted exactly', { timeout: 60_000 }, () => {
  fc.assert(
    fc.property(fc.array(fc.jsonValue({ maxDepth: 3 }), { maxLength: 30 }), fc.nat({ max: 30 }), fc.constantFrom(undefined, 1), (items, limit, space) => {
      const text = JSON.stringify(items, null, space);
      const shape = scanJsonShape(text, { maxDepth: 64, maxArrayItems: limit });
      if (items.length <= limit) {
        assert.equal(shape.kind, 'json');
        assert.equal(shape.kind === 'json' && shape.items, items.length);
      } else {
        assert.equal(shape.kind, 'too-many-items');
        // Everything before the offset is exactly `limit` items and a separator.
        const before = text.slice(0, shape.kind === 'too-many-items' ? shape.offset : 0).replace(/[\s,]+$/, '');
        assert.deepEqual(JSON.parse(`${before}]`), JSON.parse(JSON.stringify(items.slice(0, limit))));
      }
    }),
    { numRuns: 500 },
  );
});

test('property: the value limit refuses exactly the texts with more values, as the first one too many begins', { timeout: 60_000 }, () => {
  fc.assert(
    fc.property(jsonTextArb, fc.nat({ max: 40 }), (text, maxValues) => {
      const values = valuesOf(JSON.parse(text));
      const shape = scanJsonShape(text, { maxDepth: 64, maxValues });
      if (values <= maxValues) {
        assert.equal(shape.kind, 'json');
      } else {
        assert.equal(shape.kind, 'too-many-values');
        assert.ok(shape.kind === 'too-many-values' && /["[{\-0-9tfn]/.test(text[shape.offset]!), 'the offset is where a value begins');
      }
    }),
    { numRuns: 500 },
  );
});

test('examples: the grammar edges JSON.parse draws', { timeout: 10_000 }, () => {
  const valid = [
    '0',
    '-0',
    '1.5e+10',
    '-1E-2',
    '"\\u00e9\\n\\/"',
    'true',
    ' null ',
    '[]',
    '{}',
    '[[]]',
    '{"a":{"b":[1,{"c":null}]}}',
    '"\u2028"',
    '"\ud800"',
    '\t[ 1 , 2 ]\r\n',
  ];
  const invalid = [
    '',
    ' ',
    '01',
    '1.',
    '.5',
    '+1',
    '1e',
    '-',
    '[1,]',
    '[,1]',
    '{"a":1,}',
    '{a:1}',
    "'a'",
    '"\\x"',
    '"\\u12G4"',
    '"a',
    '"\u0001"',
    '[1 2]',
    '{"a" 1}',
    'tru',
    'nul',
    'NaN',
    '[1]]',
    '{}{}',
    '\ufeff1',
    '1\u00a0',
    '[',
    '{"a":',
  ];
  for (const text of valid) assert.deepEqual([text, scanJsonShape(text, UNLIMITED).kind, parses(text)], [text, 'json', true]);
  for (const text of invalid) assert.deepEqual([text, scanJsonShape(text, UNLIMITED).kind, parses(text)], [text, 'invalid', false]);
  assert.deepEqual(scanJsonShape('[1, {"a": x}]', UNLIMITED), { kind: 'invalid', offset: 10 });
  assert.deepEqual(scanJsonShape('{"a":[[1]]}', { maxDepth: 2 }), { kind: 'too-deep', offset: 6 });
  assert.deepEqual(scanJsonShape('[1, 2, 3]', { maxDepth: 1, maxArrayItems: 2 }), { kind: 'too-many-items', offset: 7 });
  // Only the top-level array's items count.
  assert.equal(scanJsonShape('[[1,2,3,4],{"a":1,"b":2,"c":3}]', { maxDepth: 2, maxArrayItems: 2 }).kind, 'json');
  assert.equal(scanJsonShape('{"a":1,"b":2,"c":3}', { maxDepth: 2, maxArrayItems: 2 }).kind, 'json');
});

test('nothing after the first problem is looked at, and deep or long texts cost one pass', { timeout: 30_000 }, () => {
  // A body that is not JSON past the refused point is still refused for the limit it breaks first.
  assert.equal(scanJsonShape(`[1,2,3,${'x'.repeat(100)}`, { maxDepth: 4, maxArrayItems: 2 }).kind, 'too-many-items');
  assert.equal(scanJsonShape(`${'['.repeat(100)}oops`, { maxDepth: MAX_JSON_DEPTH }).kind, 'too-deep');
  // 100,000 levels (JSON.stringify of the parsed value would overflow the stack): refused at level 65.
  const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
  assert.deepEqual(scanJsonShape(deep, { maxDepth: MAX_JSON_DEPTH }), { kind: 'too-deep', offset: MAX_JSON_DEPTH });
  assert.equal(scanJsonShape(deep, { maxDepth: 100_000 }).kind, 'json');
  // 2.6M items: refused at the 1001st, whose offset is 2 * 1000 + 1.
  const batch = `[${Array(2_600_000).fill('1').join(',')}]`;
  let started = performance.now();
  assert.deepEqual(scanJsonShape(batch, { maxDepth: MAX_JSON_DEPTH, maxArrayItems: 1000 }), { kind: 'too-many-items', offset: 2001 });
  const refusedMs = performance.now() - started;
  started = performance.now();
  assert.deepEqual(scanJsonShape(batch, { maxDepth: MAX_JSON_DEPTH }), { kind: 'json', root: 'array', items: 2_600_000, depth: 1, values: 2_600_001 });
  assert.deepEqual(scanJsonShape(batch, { maxDepth: MAX_JSON_DEPTH, maxValues: 100_000 }), { kind: 'too-many-values', offset: 199_999 });
  const fullMs = performance.now() - started;
  console.log(
    `scan of a 2.6M-item batch (${batch.length} chars): refused at item 1001 in ${refusedMs.toFixed(2)} ms, scanned whole in ${fullMs.toFixed(1)} ms`,
  );
});
