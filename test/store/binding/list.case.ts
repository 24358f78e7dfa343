/**
 * list(): option conversion, include under the compatibility rule the case runs with (each rule
 * is run: 2022-01-01 does not honour include, later dates do), pagination.
 */
import { listHonorsInclude, type StoreBucket, type StoreListOptions } from '../../../src/store/binding/index.ts';
import { assert, rejectsWith, type BindingCases } from './case-kit.ts';

async function seed(b: StoreBucket, count = 5): Promise<StoreBucket> {
  for (let i = 0; i < count; i++) {
    await b.put(`k${i}`, 'x', { httpMetadata: { contentType: 't/x' }, customMetadata: { i: String(i) } });
  }
  return b;
}

export const CASES: BindingCases = {
  'listHonorsInclude: compatibility date 2022-08-04 or the flag': () => {
    assert.equal(listHonorsInclude('2022-08-03', []), false);
    assert.equal(listHonorsInclude('2022-07-01', ['other_flag']), false);
    assert.equal(listHonorsInclude('2021-01-01', ['store_list_honor_include']), true);
    assert.equal(listHonorsInclude('2022-08-04', []), true);
    assert.equal(listHonorsInclude('2025-05-01', []), true);
  },
  'include under the compatibility rule': async ({ bucket, listHonorsInclude: honors }) => {
    const b = await seed(bucket, 1);
    const kinds = async (options?: StoreListOptions | null) => {
      const item = (await b.list(options)).objects[0]!;
      return [item.httpMetadata, item.customMetadata];
    };
    const http = { contentType: 't/x' };
    const custom = { i: '0' };
    if (!honors) {
      // Old dates without the flag: both kinds, whatever include says.
      for (const options of [undefined, null, {}, { include: [] }, { include: ['httpMetadata'] }] as Array<StoreListOptions | null | undefined>) {
        assert.deepEqual(await kinds(options), [http, custom], JSON.stringify(options));
      }
      return;
    }
    // New dates or the flag: exactly what include names; a kind not named is `{}` (as under wrangler).
    assert.deepEqual(await kinds(), [{}, {}]);
    assert.deepEqual(await kinds({}), [{}, {}]);
    assert.deepEqual(await kinds({ include: [] }), [{}, {}]);
    assert.deepEqual(await kinds({ include: ['httpMetadata'] }), [http, {}]);
    assert.deepEqual(await kinds({ include: ['customMetadata'] }), [{}, custom]);
    assert.deepEqual(await kinds({ include: ['customMetadata', 'httpMetadata', 'customMetadata'] }), [http, custom]);
  },
  'include values are validated under every rule': async ({ bucket: b }) => {
    await rejectsWith(b.list({ include: ['bogus' as never] }), RangeError, 'Unsupported include value bogus');
    await rejectsWith(b.list({ include: ['httpMetadata', 'HTTPMETADATA' as never] }), RangeError, 'Unsupported include value HTTPMETADATA');
    await rejectsWith(
      b.list({ include: 'httpMetadata' as never }),
      TypeError,
      "Incorrect type for the 'include' field on 'ListOptions': the provided value is not of type 'Array'.",
    );
  },
  'option types: strings are not coerced; limit is converted like an integer': async ({ bucket }) => {
    const b = await seed(bucket);
    for (const field of ['prefix', 'cursor', 'delimiter', 'startAfter']) {
      await rejectsWith(
        b.list({ [field]: 5 } as never),
        TypeError,
        `Incorrect type for the '${field}' field on 'ListOptions': the provided value is not of type 'string'.`,
      );
    }
    const count = async (limit: unknown) => (await b.list({ limit } as never)).objects.length;
    assert.equal(await count('2'), 2);
    assert.equal(await count(1.5), 1);
    assert.equal(await count(-1), 5, '-1 is the unset sentinel');
    assert.equal(await count(0), 5, '0 is accepted as the default (production accepts it)');
    assert.equal(await count(1000), 5);
    await rejectsWith(b.list({ limit: 1001 }), Error, 'list: MaxKeys params must be positive integer <= 1000. (10022)');
  },
  'pagination: cursor only while truncated, startAfter, prefix': async ({ bucket }) => {
    const b = await seed(bucket);
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
    assert.deepEqual(
      (await b.list({ startAfter: 'k2' })).objects.map((o) => o.key),
      ['k3', 'k4'],
    );
    assert.deepEqual(
      (await b.list({ prefix: 'k4' })).objects.map((o) => o.key),
      ['k4'],
    );
    assert.deepEqual(await b.list({ prefix: 'none' }), { objects: [], truncated: false, delimitedPrefixes: [] });
    const item = (await b.list({ limit: 1 })).objects[0]!;
    assert.equal(item.constructor.name, 'HeadResult');
    assert.equal(item.range, undefined);
    assert.equal(typeof item.checksums.toJSON().md5, 'string');
  },
  'delimitedPrefixes leave out the delimiter, and appending it lists every key a group holds, the group "" included': async ({ bucket: b }) => {
    for (const key of ['file8', 'file8/x', 'xfile8y', 'xfile8z', 'plain', 'a/b/c', 'a/d']) await b.put(key, 'v');
    const byFile8 = await b.list({ delimiter: 'file8' });
    // `file8` and `file8/x` are the group before the first `file8`: the empty prefix; `xfile8y/z` the group `x`.
    assert.deepEqual(byFile8.delimitedPrefixes, ['', 'x']);
    assert.deepEqual(
      byFile8.objects.map((o) => o.key),
      ['a/b/c', 'a/d', 'plain'],
    );
    // A script that lists again appends the delimiter to the prefix it was given: nothing is lost.
    const regroup = async (group: string) => (await b.list({ prefix: `${group}file8` })).objects.map((o) => o.key);
    assert.deepEqual(await regroup(''), ['file8', 'file8/x']);
    assert.deepEqual(await regroup('x'), ['xfile8y', 'xfile8z']);
    assert.deepEqual((await b.list({ delimiter: '/' })).delimitedPrefixes, ['a', 'file8']);
    assert.deepEqual((await b.list({ prefix: 'a/', delimiter: '/' })).delimitedPrefixes, ['a/b']);
    assert.deepEqual(
      (await b.list({ prefix: 'a/b/', delimiter: '/' })).objects.map((o) => o.key),
      ['a/b/c'],
    );
  },
};
