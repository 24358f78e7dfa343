import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { StoreError } from '../../../src/store/engine/errors.ts';
import type { ObjectEngine } from '../../../src/store/engine/object-engine.ts';
import type { ListOptions } from '../../../src/store/engine/types.ts';
import { bytes, openTestEngine } from '../../helpers/engine.ts';

async function listAll(engine: ObjectEngine, bucket: string, options: ListOptions) {
  const keys: string[] = [];
  const prefixes: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  for (;;) {
    const page = await engine.list(bucket, { ...options, ...(cursor ? { cursor } : {}) });
    pages += 1;
    assert.ok(page.objects.length + page.delimitedPrefixes.length <= (options.limit ?? 1000));
    keys.push(...page.objects.map((o) => o.key));
    prefixes.push(...page.delimitedPrefixes);
    if (!page.truncated) {
      assert.equal(page.cursor, undefined);
      return { keys, prefixes, pages };
    }
    assert.ok(page.cursor);
    cursor = page.cursor;
  }
}

/** The expected listing, computed naively: UTF-8 byte order, prefix, delimiter folding. */
function expected(keys: string[], prefix: string, delimiter: string | undefined) {
  const sorted = [...new Set(keys)].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  const objects: string[] = [];
  const prefixes: string[] = [];
  for (const key of sorted) {
    if (!key.startsWith(prefix)) continue;
    const cut = delimiter ? key.indexOf(delimiter, prefix.length) : -1;
    if (cut >= 0) {
      const group = key.slice(0, cut + delimiter!.length);
      if (prefixes.at(-1) !== group) prefixes.push(group);
    } else objects.push(key);
  }
  return { objects, prefixes };
}

test('pagination over 2,500 keys reaches the end with no duplicate and no gap', { timeout: 10_000 }, async (t) => {
  const { engine, bucket } = await openTestEngine(t);
  const keys = Array.from({ length: 2500 }, (_, i) => `item/${String(i).padStart(5, '0')}`);
  await Promise.all(keys.map((key) => engine.put(bucket, key, bytes(key))));
  const all = await listAll(engine, bucket, {});
  assert.equal(all.pages, 3);
  assert.deepEqual(all.keys, keys);
  const small = await listAll(engine, bucket, { limit: 7, prefix: 'item/01' });
  assert.deepEqual(
    small.keys,
    keys.filter((k) => k.startsWith('item/01')),
  );
});

test('a page that exactly fills the limit is not truncated', { timeout: 10_000 }, async (t) => {
  const { engine, bucket } = await openTestEngine(t);
  for (const key of ['a', 'b', 'c']) await engine.put(bucket, key, bytes(key));
  const page = await engine.list(bucket, { limit: 3 });
  assert.equal(page.truncated, false);
  assert.equal(page.cursor, undefined);
});

test('engine delimited prefixes keep the delimiter (S3 form; the binding trims them)', { timeout: 10_000 }, async (t) => {
  const { engine, bucket } = await openTestEngine(t);
  await engine.put(bucket, 'a/b/c', bytes('x'));
  const root = await engine.list(bucket, { delimiter: '/' });
  assert.deepEqual(root.delimitedPrefixes, ['a/']);
  assert.deepEqual(root.objects, []);
  const under = await engine.list(bucket, { prefix: 'a/', delimiter: '/' });
  assert.deepEqual(under.delimitedPrefixes, ['a/b/']);
});

test('delimited prefixes count against the limit and the cursor skips the whole group', { timeout: 10_000 }, async (t) => {
  const { engine, bucket } = await openTestEngine(t);
  for (const key of ['dir0/file0', 'dir0/file1', 'dir0/sub0/x', 'dir0/sub0/y', 'dir0/sub1/z']) await engine.put(bucket, key, bytes('x'));
  const first = await engine.list(bucket, { prefix: 'dir0/', delimiter: '/', limit: 2 });
  assert.deepEqual(
    first.objects.map((o) => o.key),
    ['dir0/file0', 'dir0/file1'],
  );
  assert.equal(first.truncated, true);
  const second = await engine.list(bucket, { prefix: 'dir0/', delimiter: '/', limit: 2, cursor: first.cursor! });
  assert.deepEqual(second.delimitedPrefixes, ['dir0/sub0/', 'dir0/sub1/']);
  assert.equal(second.truncated, false);
});

test('multi-character delimiters and keys equal to the prefix', { timeout: 10_000 }, async (t) => {
  const { engine, bucket } = await openTestEngine(t);
  for (const key of ['x--1', 'x--2--3', 'x3', 'dir', 'dir/x']) await engine.put(bucket, key, bytes('x'));
  const dashes = await engine.list(bucket, { prefix: 'x', delimiter: '--' });
  assert.deepEqual(
    dashes.objects.map((o) => o.key),
    ['x3'],
  );
  assert.deepEqual(dashes.delimitedPrefixes, ['x--']);
  const dir = await engine.list(bucket, { prefix: 'dir', delimiter: '/' });
  assert.deepEqual(
    dir.objects.map((o) => o.key),
    ['dir'],
  );
  assert.deepEqual(dir.delimitedPrefixes, ['dir/']);
});

test('order is UTF-8 byte order; startAfter is exclusive', { timeout: 10_000 }, async (t) => {
  const { engine, bucket } = await openTestEngine(t);
  for (const key of ['u\u{1F600}', 'u\uFF61', 'b', 'a']) await engine.put(bucket, key, bytes('x'));
  const page = await engine.list(bucket, {});
  assert.deepEqual(
    page.objects.map((o) => o.key),
    ['a', 'b', 'u\uFF61', 'u\u{1F600}'],
  );
  const later = await engine.list(bucket, { startAfter: 'b' });
  assert.deepEqual(
    later.objects.map((o) => o.key),
    ['u\uFF61', 'u\u{1F600}'],
  );
});

test('startAfter and cursors compare in UTF-8 byte order, past U+FFFF too', { timeout: 10_000 }, async (t) => {
  const { engine, bucket } = await openTestEngine(t);
  for (const key of ['\u{1F600}', '\u{1F600}\u{1F600}', '\uFF61x', '\u{10000}a']) await engine.put(bucket, key, bytes('x'));
  // U+1F600 is below U+FF61 in UTF-16 (a surrogate) but above it in UTF-8: the cursor must win.
  const first = await engine.list(bucket, { startAfter: '\uFF61\u{10FFFF}', limit: 1 });
  assert.deepEqual(
    first.objects.map((o) => o.key),
    ['\u{10000}a'],
  );
  const second = await engine.list(bucket, { startAfter: '\uFF61\u{10FFFF}', limit: 1, cursor: first.cursor! });
  assert.deepEqual(
    second.objects.map((o) => o.key),
    ['\u{1F600}'],
  );
  const third = await engine.list(bucket, { startAfter: '\uFF61\u{10FFFF}', limit: 1, cursor: second.cursor! });
  assert.deepEqual(
    third.objects.map((o) => o.key),
    ['\u{1F600}\u{1F600}'],
  );
  assert.equal(third.truncated, false);
  // And a startAfter below the prefix (in bytes) does not widen the listing beyond the prefix.
  const prefixed = await engine.list(bucket, { prefix: '\u{10000}', startAfter: '\uFF61' });
  assert.deepEqual(
    prefixed.objects.map((o) => o.key),
    ['\u{10000}a'],
  );
});

test('include fills in only the requested metadata', { timeout: 10_000 }, async (t) => {
  const { engine, bucket } = await openTestEngine(t);
  await engine.put(bucket, 'k', bytes('x'), { httpMetadata: { contentType: 'a/b' }, customMetadata: { c: 'd' } });
  const none = (await engine.list(bucket, {})).objects[0]!;
  assert.equal(none.httpMetadata, undefined);
  assert.equal(none.customMetadata, undefined);
  assert.deepEqual(none.checksums, { md5: none.etag });
  const both = (await engine.list(bucket, { include: { httpMetadata: true, customMetadata: true } })).objects[0]!;
  assert.deepEqual(both.httpMetadata, { contentType: 'a/b' });
  assert.deepEqual(both.customMetadata, { c: 'd' });
});

test('limits outside 1..1000 and forged cursors are refused', { timeout: 10_000 }, async (t) => {
  const { engine, bucket } = await openTestEngine(t);
  for (const limit of [0, 1001, 2.5]) {
    await assert.rejects(engine.list(bucket, { limit }), (e: unknown) => e instanceof StoreError && e.code === 'STORE_INVALID_MAX_KEYS');
  }
  await assert.rejects(engine.list(bucket, { cursor: 'not-a-cursor' }), (e: unknown) => e instanceof StoreError && e.code === 'STORE_INVALID_CURSOR');
});

test('property: paginating any key set with any prefix, delimiter and limit equals the naive listing', { timeout: 10_000 }, async (t) => {
  const { engine } = await openTestEngine(t);
  let run = 0;
  const alphabet = fc.constantFrom('a', 'b', '/', '-', 'é', '🙂');
  const key = fc.array(alphabet, { minLength: 0, maxLength: 6 }).map((chars) => chars.join(''));
  await fc.assert(
    fc.asyncProperty(
      fc.array(key, { minLength: 0, maxLength: 40 }),
      fc.array(alphabet, { maxLength: 2 }).map((c) => c.join('')),
      fc.option(fc.constantFrom('/', '-', 'a', '/-'), { nil: undefined }),
      fc.integer({ min: 1, max: 8 }),
      async (keys, prefix, delimiter, limit) => {
        const bucket = `prop-${run++}`;
        await engine.createBucket(bucket);
        await Promise.all([...new Set(keys)].map((k) => engine.put(bucket, k, bytes('v'))));
        const got = await listAll(engine, bucket, { prefix, ...(delimiter ? { delimiter } : {}), limit });
        const want = expected(keys, prefix, delimiter);
        assert.deepEqual(got.keys, want.objects);
        assert.deepEqual(got.prefixes, want.prefixes);
      },
    ),
    { numRuns: 60 },
  );
});
