/** httpMetadata and customMetadata in, writeHttpMetadata out. */
import { toCustomMetadata, toHttpMetadata, writeHttpMetadata } from '../../../src/store/binding/http-metadata.ts';
import type { GetResult, StoreHTTPMetadata } from '../../../src/store/binding/index.ts';
import { assert, rejectsWith, type BindingCases } from './case-kit.ts';

export const CASES: BindingCases = {
  'httpMetadata object: string fields coerced, cacheExpiry as Date or number, unknown fields ignored': () => {
    assert.equal(toHttpMetadata(undefined), undefined);
    assert.equal(toHttpMetadata(null), undefined);
    assert.deepEqual(toHttpMetadata({}), {});
    assert.deepEqual(
      toHttpMetadata({
        contentType: 5,
        contentLanguage: 'en',
        contentDisposition: 'inline',
        contentEncoding: 'gzip',
        cacheControl: 'no-store',
        cacheExpiry: new Date(5000),
        bogus: 'x',
      } as unknown as StoreHTTPMetadata),
      {
        contentType: '5',
        contentLanguage: 'en',
        contentDisposition: 'inline',
        contentEncoding: 'gzip',
        cacheControl: 'no-store',
        cacheExpiry: 5000,
      },
    );
    assert.deepEqual(toHttpMetadata({ cacheExpiry: 1234 } as unknown as StoreHTTPMetadata), { cacheExpiry: 1234 });
    assert.throws(() => toHttpMetadata({ cacheExpiry: '2020-01-01' } as unknown as StoreHTTPMetadata), {
      name: 'TypeError',
      message: "Incorrect type for the 'cacheExpiry' field on 'HttpMetadata': the provided value is not of type 'date'.",
    });
    assert.throws(() => toHttpMetadata({ cacheExpiry: 8e15 } as unknown as StoreHTTPMetadata), {
      name: 'TypeError',
      message: "This API doesn't support dates after 2189.",
    });
  },
  'httpMetadata Headers: exactly six headers; an unparseable Expires is epoch 0': () => {
    assert.deepEqual(toHttpMetadata(new Headers()), {});
    assert.deepEqual(
      toHttpMetadata(
        new Headers({
          'content-type': 'text/plain',
          'content-encoding': 'br',
          'content-disposition': 'attachment',
          'content-language': 'de',
          'cache-control': 'max-age=60',
          expires: 'Thu, 01 Jan 1970 00:20:34 GMT',
          etag: '"x"',
          'content-length': '3',
          'x-other': 'y',
        }),
      ),
      {
        contentType: 'text/plain',
        contentEncoding: 'br',
        contentDisposition: 'attachment',
        contentLanguage: 'de',
        cacheControl: 'max-age=60',
        cacheExpiry: 1234000,
      },
    );
    assert.deepEqual(toHttpMetadata(new Headers({ expires: 'not a date' })), { cacheExpiry: 0 });
  },
  'customMetadata: values coerced to strings, order kept; non-objects refused': () => {
    assert.equal(toCustomMetadata(undefined), undefined);
    assert.deepEqual(toCustomMetadata({ b: 1, a: true, c: 'x' }), { b: '1', a: 'true', c: 'x' });
    assert.deepEqual(Object.keys(toCustomMetadata({ z: '1', a: '2' })!), ['z', 'a']);
    for (const bad of ['x', ['a'], 5]) {
      assert.throws(() => toCustomMetadata(bad), {
        name: 'TypeError',
        message: "Incorrect type for the 'customMetadata' field on 'PutOptions': the provided value is not of type 'object'.",
      });
    }
  },
  'writeHttpMetadata: sets only present fields, overwrites them, leaves other headers alone': () => {
    const headers = new Headers({ 'content-type': 'old/type', etag: '"kept"', 'x-mine': 'kept' });
    assert.equal(writeHttpMetadata({ contentType: 'new/type', cacheExpiry: new Date(1234567) }, headers), undefined);
    assert.deepEqual(
      [...headers],
      [
        ['content-type', 'new/type'],
        ['etag', '"kept"'],
        ['expires', 'Thu, 01 Jan 1970 00:20:34 GMT'],
        ['x-mine', 'kept'],
      ],
    );
    const all = new Headers();
    writeHttpMetadata({ contentType: 'a', contentLanguage: 'b', contentDisposition: 'c', contentEncoding: 'd', cacheControl: 'e' }, all);
    assert.deepEqual(Object.fromEntries(all), {
      'content-type': 'a',
      'content-language': 'b',
      'content-disposition': 'c',
      'content-encoding': 'd',
      'cache-control': 'e',
    });
    const none = new Headers();
    writeHttpMetadata({}, none);
    assert.deepEqual([...none], []);
  },
  'writeHttpMetadata: unsafe values are TypeErrors, and nothing is written': () => {
    for (const unsafe of ['a\r\nx-injected: 1', 'a\nb', 'a\0b', 'a\rb']) {
      const headers = new Headers();
      assert.throws(() => writeHttpMetadata({ contentType: 'ok', cacheControl: unsafe }, headers), { name: 'TypeError', message: 'Invalid header value.' });
      assert.deepEqual([...headers], [], 'not even the safe field');
    }
  },
  'through the engine: stored, returned and written back': async ({ bucket: b }) => {
    await b.put('k', 'x', { httpMetadata: { contentType: 'text/html', cacheExpiry: new Date(5001) }, customMetadata: { n: 1 } as never });
    const head = (await b.head('k'))!;
    assert.deepEqual(head.httpMetadata, { contentType: 'text/html', cacheExpiry: new Date(5001) });
    assert.ok(head.httpMetadata!.cacheExpiry instanceof Date);
    assert.deepEqual(head.customMetadata, { n: '1' });
    const headers = new Headers();
    head.writeHttpMetadata(headers);
    assert.deepEqual(Object.fromEntries(headers), { 'content-type': 'text/html', expires: 'Thu, 01 Jan 1970 00:00:05 GMT' });
    await b.put('bare', 'x');
    assert.deepEqual((await b.head('bare'))!.httpMetadata, {});
    assert.deepEqual((await b.head('bare'))!.customMetadata, {});
    await b.put('evil', 'x', { httpMetadata: { contentDisposition: 'a\r\nset-cookie: x=1' } });
    const evil = (await b.get('evil')) as GetResult;
    assert.throws(() => evil.writeHttpMetadata(new Headers()), { name: 'TypeError', message: 'Invalid header value.' });
    await rejectsWith(b.put('k', 'x', { customMetadata: 'x' as never }), TypeError, /'customMetadata' field on 'PutOptions'/);
    await rejectsWith(b.createMultipartUpload('k', { customMetadata: ['x'] as never }), TypeError, /'customMetadata' field on 'MultipartOptions'/);
    // Listed without include: `{}` for both kinds, and writeHttpMetadata writes nothing (as under wrangler).
    const listed = (await b.list()).objects[0]!;
    assert.equal(listed.key, 'bare');
    assert.deepEqual(listed.httpMetadata, {});
    assert.deepEqual(listed.customMetadata, {});
    const untouched = new Headers({ 'content-type': 'kept/type' });
    assert.equal(listed.writeHttpMetadata(untouched), undefined);
    assert.deepEqual([...untouched], [['content-type', 'kept/type']]);
    // Listed with include: the stored values, written back.
    const included = (await b.list({ include: ['httpMetadata'], prefix: 'k' })).objects[0]!;
    const written = new Headers();
    included.writeHttpMetadata(written);
    assert.deepEqual(Object.fromEntries(written), { 'content-type': 'text/html', expires: 'Thu, 01 Jan 1970 00:00:05 GMT' });
  },
  'all six httpMetadata fields come back as stored from put, head, get, list and a completed multipart upload': async ({ bucket: b }) => {
    const httpMetadata = {
      contentType: 'text/plain; charset=utf-8',
      contentLanguage: 'en-GB',
      contentDisposition: 'attachment; filename="value.txt"',
      contentEncoding: 'gzip',
      cacheControl: 'max-age=3600',
      cacheExpiry: new Date('Fri, 24 Feb 2023 00:00:00 GMT'),
    };
    const customMetadata = { key: 'value', 'with space': 'and "quotes"' };
    assert.deepEqual((await b.put('k', 'value', { httpMetadata, customMetadata }))!.httpMetadata, httpMetadata);
    assert.deepEqual((await b.head('k'))!.httpMetadata, httpMetadata);
    const got = (await b.get('k')) as GetResult;
    assert.deepEqual(got.httpMetadata, httpMetadata);
    assert.deepEqual(got.customMetadata, customMetadata);
    const listed = (await b.list({ include: ['httpMetadata', 'customMetadata'] })).objects[0]!;
    assert.deepEqual(listed.httpMetadata, httpMetadata);
    assert.deepEqual(listed.customMetadata, customMetadata);
    const headers = new Headers({ 'x-key': 'value' });
    assert.equal(got.writeHttpMetadata(headers), undefined);
    assert.deepEqual(Object.fromEntries(headers), {
      'content-type': 'text/plain; charset=utf-8',
      'content-language': 'en-GB',
      'content-disposition': 'attachment; filename="value.txt"',
      'content-encoding': 'gzip',
      'cache-control': 'max-age=3600',
      expires: 'Fri, 24 Feb 2023 00:00:00 GMT',
      'x-key': 'value',
    });
    const upload = await b.createMultipartUpload('mpu', { httpMetadata, customMetadata });
    const done = await upload.complete([await upload.uploadPart(1, 'part')]);
    assert.deepEqual(done.httpMetadata, httpMetadata);
    assert.deepEqual((await b.head('mpu'))!.httpMetadata, httpMetadata);
    assert.deepEqual((await b.head('mpu'))!.customMetadata, customMetadata);
  },
};
