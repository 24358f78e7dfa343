/**
 * The bucket binding's conformance cases: each of put, head, get, delete, list and multipart once
 * through the binding, with the shapes and errors a script sees.
 */
import type { GetResult } from '../../../src/store/binding/index.ts';
import { assert, rejectsWith, type BindingCases } from './case-kit.ts';

export const CASES: BindingCases = {
  'put accepts every value type and returns the metadata it was sent': async ({ bucket: b, digest }) => {
    const values: Array<[string, unknown, string]> = [
      ['string', 'hello', 'hello'],
      ['null', null, ''],
      ['ArrayBuffer', new TextEncoder().encode('ab').buffer, 'ab'],
      ['view', new TextEncoder().encode('xyz').subarray(1), 'yz'],
      ['Blob', new Blob(['blob!']), 'blob!'],
      ['ReadableStream', new Response('streamed').body, 'streamed'],
    ];
    for (const [name, value, text] of values) {
      const put = await b.put(name, value as never, {
        httpMetadata: new Headers({ 'content-type': 'text/plain', 'x-other': 'ignored' }),
        customMetadata: { n: 1 as never },
      });
      assert.equal(put?.constructor.name, 'HeadResult');
      const md5 = await digest('md5', text);
      assert.equal(put.etag, md5, name);
      assert.equal(put.httpEtag, `"${md5}"`);
      assert.deepEqual(put.httpMetadata, { contentType: 'text/plain' });
      assert.deepEqual(put.customMetadata, { n: '1' });
      assert.equal(await ((await b.get(name)) as GetResult).text(), text);
    }
    await rejectsWith(
      b.put('bad', undefined as never),
      TypeError,
      "Failed to execute 'put' on 'StoreBucket': parameter 2 is not of type 'ReadableStream or ArrayBuffer or ArrayBufferView or string or Blob'.",
    );
    await rejectsWith(b.put('bad', 5 as never), TypeError, /parameter 2 is not of type/);
  },
  'head, get, and their shapes': async ({ bucket: b, digest }) => {
    const sha256 = await digest('sha256', '{"a":1}');
    await b.put('k', '{"a":1}', { httpMetadata: { contentType: 'application/json', cacheExpiry: new Date(5000) }, sha256 });
    const head = await b.head('k');
    assert.equal(head?.constructor.name, 'HeadResult');
    assert.equal(head?.size, 7);
    assert.ok(head?.uploaded instanceof Date);
    assert.equal(head?.storageClass, 'Standard');
    assert.deepEqual(head?.checksums.toJSON(), { md5: await digest('md5', '{"a":1}'), sha256 });
    assert.ok(head?.checksums.md5 instanceof ArrayBuffer);
    assert.equal(head?.checksums.sha1, undefined);
    assert.equal('body' in head!, false);
    const got = (await b.get('k')) as GetResult;
    assert.equal(got.constructor.name, 'GetResult');
    assert.deepEqual(got.range, { offset: 0, length: 7 });
    assert.equal(got.bodyUsed, false);
    assert.deepEqual(await got.json(), { a: 1 });
    assert.equal(got.bodyUsed, true);
    await rejectsWith(got.text(), TypeError, 'Body has already been used. It can only be used once. Use tee() first if you need to read it twice.');
    const blob = await ((await b.get('k')) as GetResult).blob();
    assert.equal(blob.type, 'application/json');
    const headers = new Headers({ etag: 'kept' });
    got.writeHttpMetadata(headers);
    assert.equal(headers.get('content-type'), 'application/json');
    assert.equal(headers.get('expires'), 'Thu, 01 Jan 1970 00:00:05 GMT');
    assert.equal(headers.get('etag'), 'kept');
    assert.equal(await b.head('missing'), null);
    assert.equal(await b.get('missing'), null);
    assert.equal(await b.head(123 as never), null, 'keys are coerced to strings');
  },
  'get ranges and conditions through the binding': async ({ bucket: b }) => {
    const put = await b.put('k', 'hello world');
    const ranged = (await b.get('k', { range: { offset: 6 } })) as GetResult;
    assert.equal(await ranged.text(), 'world');
    assert.deepEqual(ranged.range, { offset: 6, length: 5 });
    const suffix = (await b.get('k', { range: new Headers({ range: 'bytes=-5' }) })) as GetResult;
    assert.equal(await suffix.text(), 'world');
    const whole = (await b.get('k', { range: new Headers({ range: 'bytes=9-2' }) })) as GetResult;
    assert.equal(await whole.text(), 'hello world');
    await rejectsWith(b.get('k', { range: { offset: 11 } }), Error, 'get: The requested range is not satisfiable (10039)');
    const failed = await b.get('k', { onlyIf: { etagDoesNotMatch: put!.etag } });
    assert.ok(failed && !('body' in failed));
    const failedHeaders = await b.get('k', { onlyIf: new Headers({ 'if-none-match': `W/"${put!.etag}"` }) });
    assert.ok(failedHeaders && !('body' in failedHeaders));
    assert.ok('body' in (await b.get('k', { onlyIf: new Headers({ 'if-match': `"x", "${put!.etag}"` }) }))!);
    assert.equal(await b.put('k', 'new', { onlyIf: new Headers({ 'if-match': `W/"${put!.etag}"` }) }), null, 'weak etags never satisfy If-Match');
    assert.equal(await b.put('k', 'new', { onlyIf: { etagDoesNotMatch: '*' } }), null);
    assert.ok(await b.put('k', 'new', { onlyIf: { etagMatches: put!.etag } }));
    await rejectsWith(b.get('k', { onlyIf: new Headers({ 'if-match': 'unquoted' }) }), Error, 'Invalid ETag in if-match header');
  },
  'engine errors reach scripts as plain Errors with the action and code': async ({ bucket: b, digest }) => {
    await rejectsWith(
      b.put('k', 'data', { md5: '0'.repeat(32) }),
      Error,
      `put: The MD5 checksum you specified did not match what we received.\nYou provided a MD5 checksum with value: ${'0'.repeat(32)}\nActual MD5 was: ${await digest('md5', 'data')} (10037)`,
    );
    await rejectsWith(b.head('é'.repeat(513)), Error, 'head: The specified object name is not valid. (10020)');
    await rejectsWith(
      b.put('k', 'x', { customMetadata: { k: 'x'.repeat(8192) } }),
      Error,
      'put: Your metadata headers exceed the maximum allowed metadata size. (10012)',
    );
    await rejectsWith(
      b.delete(Array.from({ length: 1001 }, (_, i) => `k${i}`)),
      Error,
      'delete: The number of keys in the request must be between 1 and 1000 inclusive. (10027)',
    );
    await rejectsWith(b.list({ limit: 1001 }), Error, 'list: MaxKeys params must be positive integer <= 1000. (10022)');
    await rejectsWith(b.list({ include: ['bogus' as never] }), RangeError, 'Unsupported include value bogus');
    await rejectsWith(
      b.list({ include: 'httpMetadata' as never }),
      TypeError,
      "Incorrect type for the 'include' field on 'ListOptions': the provided value is not of type 'Array'.",
    );
    await rejectsWith(
      b.list({ prefix: 5 as never }),
      TypeError,
      "Incorrect type for the 'prefix' field on 'ListOptions': the provided value is not of type 'string'.",
    );
    const thrown = await b.head('é'.repeat(513)).catch((e: unknown) => e as Error);
    assert.equal((thrown as Error).name, 'Error');
    assert.equal('code' in (thrown as object), false);
  },
  'delete of one key or many; list with a delimiter (delimitedPrefixes as object-store.md gives them)': async ({ bucket: b }) => {
    await b.put('a/b/c', 'x');
    await b.put('top', 'x');
    const root = await b.list({ delimiter: '/' });
    assert.deepEqual(root.delimitedPrefixes, ['a']);
    assert.deepEqual(
      root.objects.map((o) => o.key),
      ['top'],
    );
    assert.equal(root.truncated, false);
    assert.equal('cursor' in root, false);
    assert.deepEqual((await b.list({ prefix: 'a/', delimiter: '/' })).delimitedPrefixes, ['a/b']);
    await b.delete('top');
    await b.delete(['a/b/c', 'missing']);
    assert.deepEqual((await b.list()).objects, []);
  },
  'list pagination by cursor, and include when the rules honour it': async ({ bucket: b, listHonorsInclude }) => {
    for (let i = 0; i < 5; i++) await b.put(`k${i}`, 'x', { httpMetadata: { contentType: 't/x' }, customMetadata: { i: String(i) } });
    const first = await b.list({ limit: 2 });
    assert.equal(first.truncated, true);
    const second = await b.list({ limit: 2, cursor: first.cursor! });
    assert.deepEqual(
      second.objects.map((o) => o.key),
      ['k2', 'k3'],
    );
    const plain = (await b.list()).objects[0]!;
    assert.deepEqual(plain.httpMetadata, listHonorsInclude ? {} : { contentType: 't/x' });
    assert.deepEqual(plain.customMetadata, listHonorsInclude ? {} : { i: '0' });
    const headers = new Headers();
    plain.writeHttpMetadata(headers);
    assert.deepEqual([...headers], listHonorsInclude ? [] : [['content-type', 't/x']]);
    const custom = (await b.list({ include: ['customMetadata'] })).objects[0]!;
    assert.deepEqual(custom.customMetadata, { i: '0' });
    assert.deepEqual(custom.httpMetadata, listHonorsInclude ? {} : { contentType: 't/x' });
  },
  'multipart through the binding, resume, and part number checks': async ({ bucket: b }) => {
    const upload = await b.createMultipartUpload('mpu', { httpMetadata: { contentType: 'a/b' } });
    assert.equal(typeof upload.uploadId, 'string');
    const resumed = b.resumeMultipartUpload('mpu', upload.uploadId);
    assert.ok(!(resumed instanceof Promise));
    const p1 = await resumed.uploadPart(1, new Uint8Array(5 * 1024 * 1024));
    const p2 = await upload.uploadPart(2, 'tail');
    await rejectsWith(upload.uploadPart(0, 'x'), TypeError, 'Part number must be between 1 and 10000 (inclusive). Actual value was: 0');
    await rejectsWith(upload.uploadPart(1, null as never), TypeError, /parameter 2 is not of type/);
    await rejectsWith(
      upload.complete([p1, { partNumber: 2, etag: 'wrong' }]),
      Error,
      'completeMultipartUpload: One or more of the specified parts could not be found. (10025)',
    );
    const done = await upload.complete([p1, p2]);
    assert.match(done.etag, /-2$/);
    assert.equal((await b.head('mpu'))?.httpMetadata?.contentType, 'a/b');
    await rejectsWith(upload.uploadPart(3, 'x'), Error, 'uploadPart: The specified multipart upload does not exist. (10024)');
    assert.throws(() => b.resumeMultipartUpload('mpu', undefined as never), {
      name: 'TypeError',
      message: "Failed to execute 'resumeMultipartUpload' on 'StoreBucket': parameter 2 is not of type 'string'.",
    });
    const aborted = await b.createMultipartUpload('other');
    await aborted.abort();
    await rejectsWith(aborted.complete([]), Error, 'completeMultipartUpload: The specified multipart upload does not exist. (10024)');
  },
  'list() with `include: []`: the metadata is left out when the compatibility rules honour `include`, and sent anyway when they do not': async ({
    bucket: b,
    listHonorsInclude,
  }) => {
    await b.put('with-metadata', 'x', { httpMetadata: { contentType: 't/x' }, customMetadata: { i: '0' } });
    const listed = (await b.list({ include: [] })).objects[0]!;
    assert.equal(listed.key, 'with-metadata');
    assert.deepEqual(listed.httpMetadata, listHonorsInclude ? {} : { contentType: 't/x' });
    assert.deepEqual(listed.customMetadata, listHonorsInclude ? {} : { i: '0' });
  },
};
