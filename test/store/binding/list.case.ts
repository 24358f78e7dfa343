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
  'startAfter with a limit: the next page goes on from the cursor, whether or not startAfter names a key': async ({ bucket: b }) => {
    for (const key of ['key1', 'key2', 'key3', 'key4']) await b.put(key, key);
    const pages = async (options: StoreListOptions) => {
      const out: Array<[string[], boolean]> = [];
      let cursor: string | undefined;
      do {
        const page = await b.list({ ...options, ...(cursor ? { cursor } : {}) });
        out.push([page.objects.map((o) => o.key), page.truncated]);
        cursor = page.cursor;
        assert.ok(out.length <= 4, 'the listing ends');
      } while (cursor);
      return out;
    };
    assert.deepEqual(await pages({ startAfter: 'key1', limit: 2 }), [
      [['key2', 'key3'], true],
      [['key4'], false],
    ]);
    assert.deepEqual(await pages({ startAfter: 'key', limit: 2 }), [
      [['key1', 'key2'], true],
      [['key3', 'key4'], false],
    ]);
    assert.deepEqual(await pages({ startAfter: 'key4' }), [[[], false]]);
  },
  'a cursor is a position, not a snapshot: keys added behind it are not listed, keys ahead of it are; each page may ask for another limit': async ({
    bucket: b,
  }) => {
    for (const key of ['key1', 'key3', 'key5']) await b.put(key, key);
    const first = await b.list({ limit: 2 });
    assert.deepEqual(
      first.objects.map((o) => o.key),
      ['key1', 'key3'],
    );
    assert.equal(first.truncated, true);
    await b.put('key2', 'behind the cursor');
    await b.put('key4', 'ahead of the cursor');
    const second = await b.list({ limit: 2, cursor: first.cursor! });
    assert.deepEqual(
      second.objects.map((o) => o.key),
      ['key4', 'key5'],
    );
    assert.equal(second.truncated, false);
    const one = await b.list({ limit: 1 });
    const wider = await b.list({ limit: 3, cursor: one.cursor! });
    assert.deepEqual(
      wider.objects.map((o) => o.key),
      ['key2', 'key3', 'key4'],
    );
    assert.equal(wider.truncated, true);
  },
  'a cursor that no list call gave is refused with 10029, as production does': async ({ bucket: b }) => {
    await b.put('k', 'x');
    for (const cursor of ['bad', 'not-a-cursor', '%%%']) {
      await rejectsWith(b.list({ cursor }), Error, 'list: The provided cursor is not valid: pass the cursor of a previous list call unchanged. (10029)');
    }
    assert.deepEqual(
      (await b.list({ cursor: '' })).objects.map((o) => o.key),
      ['k'],
      'an empty cursor is no cursor',
    );
  },
  'with a delimiter the limit counts objects and delimitedPrefixes together; an empty delimiter is no delimiter': async ({ bucket: b }) => {
    for (const key of ['dir/file0', 'dir/file1', 'dir/sub0/a', 'dir/sub0/b', 'dir/sub1/c', 'file2']) await b.put(key, 'v');
    const all = await b.list({ delimiter: '' });
    assert.deepEqual(all.delimitedPrefixes, []);
    assert.equal(all.objects.length, 6);
    const first = await b.list({ prefix: 'dir/', delimiter: '/', limit: 2 });
    assert.deepEqual(
      first.objects.map((o) => o.key),
      ['dir/file0', 'dir/file1'],
    );
    assert.deepEqual(first.delimitedPrefixes, []);
    assert.equal(first.truncated, true);
    const second = await b.list({ prefix: 'dir/', delimiter: '/', limit: 2, cursor: first.cursor! });
    assert.deepEqual(second.objects, []);
    assert.deepEqual(second.delimitedPrefixes, ['dir/sub0', 'dir/sub1']);
    assert.equal(second.truncated, false, 'no cursor when the groups exactly fill the limit');
    const mixed = await b.list({ prefix: 'dir/', delimiter: '/', limit: 3 });
    assert.deepEqual([mixed.objects.map((o) => o.key), mixed.delimitedPrefixes, mixed.truncated], [['dir/file0', 'dir/file1'], ['dir/sub0'], true]);
    const rest = await b.list({ prefix: 'dir/', delimiter: '/', limit: 3, cursor: mixed.cursor! });
    assert.deepEqual([rest.objects.map((o) => o.key), rest.delimitedPrefixes, rest.truncated], [[], ['dir/sub1'], false], 'a group is listed once');
    assert.deepEqual((await b.list({ prefix: 'dir', delimiter: '/' })).delimitedPrefixes, ['dir']);
  },
  'keys list in UTF-8 byte order; the empty key and a 1024-byte key list, and a 1024-byte prefix finds its key': async ({ bucket: b }) => {
    const keys = ['key3', 'key1', 'key2', ', ', '!', 'é', '\uFFFF', '😀', ''];
    for (const key of keys) await b.put(key, 'v');
    // UTF-8 bytes: é is C3 A9, U+FFFF EF BF BF, 😀 F0 9F 98 80 (UTF-16 would put 😀 before U+FFFF).
    assert.deepEqual(
      (await b.list()).objects.map((o) => o.key),
      ['', '!', ', ', 'key1', 'key2', 'key3', 'é', '\uFFFF', '😀'],
    );
    await b.delete('');
    assert.equal(await b.head(''), null);
    assert.equal((await b.list()).objects[0]!.key, '!');
    const long = 'x'.repeat(1024);
    await b.put(long, 'long');
    const found = await b.list({ prefix: long });
    assert.deepEqual(
      found.objects.map((o) => o.key),
      [long],
    );
    assert.deepEqual((await b.list({ prefix: `${long}x` })).objects, [], 'a longer prefix matches nothing and is no error');
  },
};
