/** list(): option conversion, include under each compatibility rule, pagination (reference §5). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createStoreBucket, listHonorsInclude } from '../../../src/store/binding/index.ts';
import type { StoreListOptions } from '../../../src/store/binding/index.ts';
import { openTestBucket, rejectsWith } from './helpers.ts';

test('listHonorsInclude: compatibility date 2022-08-04 or the flag', { timeout: 10_000 }, () => {
  assert.equal(listHonorsInclude('2022-08-03', []), false);
  assert.equal(listHonorsInclude('2022-07-01', ['other_flag']), false);
  assert.equal(listHonorsInclude('2021-01-01', ['store_list_honor_include']), true);
  assert.equal(listHonorsInclude('2022-08-04', []), true);
  assert.equal(listHonorsInclude('2025-05-01', []), true);
});

async function seeded(t: Parameters<typeof openTestBucket>[0], count = 5) {
  const fixture = await openTestBucket(t);
  for (let i = 0; i < count; i++) {
    await fixture.bucketBinding.put(`k${i}`, 'x', { httpMetadata: { contentType: 't/x' }, customMetadata: { i: String(i) } });
  }
  return fixture;
}

test('include under each compatibility rule', { timeout: 10_000 }, async (t) => {
  const { engine, bucket } = await seeded(t, 1);
  const kinds = async (honors: boolean, options?: StoreListOptions | null) => {
    const item = (await createStoreBucket(engine, bucket, { listHonorsInclude: honors }).list(options)).objects[0]!;
    return [item.httpMetadata, item.customMetadata];
  };
  const http = { contentType: 't/x' };
  const custom = { i: '0' };
  // Old dates without the flag: both kinds, whatever include says.
  for (const options of [undefined, null, {}, { include: [] }, { include: ['httpMetadata'] }] as Array<StoreListOptions | null | undefined>) {
    assert.deepEqual(await kinds(false, options), [http, custom], JSON.stringify(options));
  }
  // New dates or the flag: exactly what include names; a kind not named is `{}` (as under wrangler).
  assert.deepEqual(await kinds(true), [{}, {}]);
  assert.deepEqual(await kinds(true, {}), [{}, {}]);
  assert.deepEqual(await kinds(true, { include: [] }), [{}, {}]);
  assert.deepEqual(await kinds(true, { include: ['httpMetadata'] }), [http, {}]);
  assert.deepEqual(await kinds(true, { include: ['customMetadata'] }), [{}, custom]);
  assert.deepEqual(await kinds(true, { include: ['customMetadata', 'httpMetadata', 'customMetadata'] }), [http, custom]);
});

test('include values are validated under every rule', { timeout: 10_000 }, async (t) => {
  const { engine, bucket } = await openTestBucket(t);
  for (const honors of [false, true]) {
    const b = createStoreBucket(engine, bucket, { listHonorsInclude: honors });
    await rejectsWith(b.list({ include: ['bogus' as never] }), RangeError, 'Unsupported include value bogus');
    await rejectsWith(b.list({ include: ['httpMetadata', 'HTTPMETADATA' as never] }), RangeError, 'Unsupported include value HTTPMETADATA');
    await rejectsWith(b.list({ include: 'httpMetadata' as never }), TypeError,
      "Incorrect type for the 'include' field on 'ListOptions': the provided value is not of type 'Array'.");
  }
});

test('option types: strings are not coerced; limit is converted like an integer', { timeout: 10_000 }, async (t) => {
  const { bucketBinding: b } = await seeded(t);
  for (const field of ['prefix', 'cursor', 'delimiter', 'startAfter']) {
    await rejectsWith(b.list({ [field]: 5 } as never), TypeError,
      `Incorrect type for the '${field}' field on 'ListOptions': the provided value is not of type 'string'.`);
  }
  const count = async (limit: unknown) => (await b.list({ limit } as never)).objects.length;
  assert.equal(await count('2'), 2);
  assert.equal(await count(1.5), 1);
  assert.equal(await count(-1), 5, '-1 is the unset sentinel');
  assert.equal(await count(0), 5, '0 is accepted as the default (production accepts it)');
  assert.equal(await count(1000), 5);
  await rejectsWith(b.list({ limit: 1001 }), Error, 'list: MaxKeys params must be positive integer <= 1000. (10022)');
});

test('pagination: cursor only while truncated, startAfter, prefix', { timeout: 10_000 }, async (t) => {
  const { bucketBinding: b } = await seeded(t);
  const keys: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; ; page++) {
    const result = await b.list({ limit: 2, ...(cursor ? { cursor } : {}) });
    keys.push(...result.objects.map((o) => o.key));
    assert.ok(Array.isArray(result.delimitedPrefixes));
    if (!result.truncated) {
      assert.equal('cursor' in result, false);
      break;
    }
    assert.equal(typeof result.cursor, 'string');
    cursor = result.cursor;
    assert.ok(page < 5);
  }
  assert.deepEqual(keys, ['k0', 'k1', 'k2', 'k3', 'k4']);
  const exact = await b.list({ limit: 5 });
  assert.equal(exact.truncated, false, 'no cursor when the remaining keys exactly fill the limit');
  assert.equal('cursor' in exact, false);
  assert.deepEqual((await b.list({ startAfter: 'k2' })).objects.map((o) => o.key), ['k3', 'k4']);
  assert.deepEqual((await b.list({ prefix: 'k4' })).objects.map((o) => o.key), ['k4']);
  assert.deepEqual(await b.list({ prefix: 'none' }), { objects: [], truncated: false, delimitedPrefixes: [] });
  const item = (await b.list({ limit: 1 })).objects[0]!;
  assert.equal(item.constructor.name, 'HeadResult');
  assert.equal(item.range, undefined);
  assert.equal(typeof item.checksums.toJSON().md5, 'string');
});
