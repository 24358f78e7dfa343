/**
 * HeadResult / GetResult shapes and body reads. Classes are checked by name: in
 * workerd the script's copy of the binding's modules is not the binding's own.
 */
import type { GetResult } from '../../../src/store/binding/index.ts';
import { assert, rejectsWith, text, utf8, type BindingCases } from './case-kit.ts';

const USED = 'Body has already been used. It can only be used once. Use tee() first if you need to read it twice.';

/** The name of the class `object`'s class extends. */
const superclassName = (object: object) => (Object.getPrototypeOf(Object.getPrototypeOf(object)) as object).constructor.name;

export const CASES: BindingCases = {
  'HeadResult: classes, own properties, JSON shape': async ({ bucket: b, digest }) => {
    const before = Date.now();
    const put = (await b.put('k', 'value', { customMetadata: { a: 'b' }, httpMetadata: { contentType: 't/x' } }))!;
    const head = (await b.head('k'))!;
    const md5 = await digest('md5', 'value');
    for (const object of [put, head]) {
      assert.equal(object.constructor.name, 'HeadResult');
      assert.equal('body' in object, false);
      assert.equal(object.etag, md5);
      assert.equal(object.httpEtag, `"${md5}"`);
      assert.equal(object.size, 5);
      assert.ok(object.uploaded instanceof Date);
      assert.equal(object.uploaded.getTime(), put.uploaded.getTime(), 'put and head give the same instant, to the millisecond');
      // The server's clock and the script's agree: within ten minutes is all a loaded machine is asked.
      assert.ok(Math.abs(object.uploaded.getTime() - before) < 600_000, `uploaded ${object.uploaded.toISOString()}`);
      assert.equal(object.storageClass, 'Standard');
      assert.match(object.version, /^[0-9a-f]{32}$/);
      assert.equal(Object.prototype.hasOwnProperty.call(object, 'writeHttpMetadata'), false, 'a prototype method');
    }
    for (const key of ['key', 'version', 'size', 'etag', 'httpEtag', 'checksums', 'uploaded', 'httpMetadata', 'customMetadata', 'range', 'storageClass']) {
      assert.ok(Object.keys(head).includes(key), key);
    }
    assert.equal(put.range, undefined, 'put results carry no range');
    assert.deepEqual(head.range, { offset: 0, length: 5 });
    assert.deepEqual(JSON.parse(JSON.stringify(put)), {
      key: 'k',
      version: put.version,
      size: 5,
      etag: md5,
      httpEtag: `"${md5}"`,
      checksums: { md5 },
      uploaded: put.uploaded.toISOString(),
      httpMetadata: { contentType: 't/x' },
      customMetadata: { a: 'b' },
      storageClass: 'Standard',
    });
    assert.equal(put.version, head.version);
  },
  'GetResult: body and bodyUsed are prototype getters; every read method once': async ({ bucket: b }) => {
    await b.put('k', '{"n":1}', { httpMetadata: { contentType: 'application/json' } });
    const get = async () => (await b.get('k')) as GetResult;
    const got = await get();
    assert.equal(got.constructor.name, 'GetResult');
    assert.equal(superclassName(got), 'HeadResult');
    assert.equal(Object.keys(got).includes('body'), false);
    assert.ok('body' in got && 'bodyUsed' in got);
    const reads: Record<string, (r: GetResult) => Promise<unknown>> = {
      text: (r) => r.text(),
      json: (r) => r.json(),
      arrayBuffer: (r) => r.arrayBuffer(),
      bytes: (r) => r.bytes(),
      blob: (r) => r.blob(),
    };
    const expected: Record<string, (value: unknown) => void> = {
      text: (v) => assert.equal(v, '{"n":1}'),
      json: (v) => assert.deepEqual(v, { n: 1 }),
      arrayBuffer: (v) => assert.ok(v instanceof ArrayBuffer && text(v) === '{"n":1}'),
      bytes: (v) => assert.ok(v instanceof Uint8Array && text(v) === '{"n":1}'),
      blob: (v) => assert.ok(v instanceof Blob && v.type === 'application/json' && v.size === 7),
    };
    for (const [first, read] of Object.entries(reads)) {
      for (const second of Object.keys(reads)) {
        const result = await get();
        assert.equal(result.bodyUsed, false);
        expected[first]!(await read(result));
        assert.equal(result.bodyUsed, true);
        await rejectsWith(reads[second]!(result), TypeError, USED);
      }
    }
  },
  'GetResult: the stream, bodyUsed, and reads after the stream': async ({ bucket: b, runtime }) => {
    await b.put('k', 'streamed');
    const viaStream = (await b.get('k')) as GetResult;
    assert.equal(viaStream.body, viaStream.body, 'one stream per result');
    assert.equal(viaStream.bodyUsed, false);
    assert.equal(await new Response(viaStream.body).text(), 'streamed');
    assert.equal(viaStream.bodyUsed, true);
    await rejectsWith(viaStream.text(), TypeError, USED);

    const locked = (await b.get('k')) as GetResult;
    const reader = locked.body.getReader();
    assert.equal(locked.bodyUsed, true, 'a locked body counts as used');
    await rejectsWith(locked.arrayBuffer(), TypeError, USED);
    assert.equal(text((await reader.read()).value!), 'streamed');

    const textFirst = (await b.get('k')) as GetResult;
    const stream = textFirst.body;
    assert.equal(await textFirst.text(), 'streamed');
    // In workerd the stream is the runtime's own, which the read left locked or disturbed: the runtime's TypeError.
    const readElsewhere = runtime === 'workerd' ? /locked|disturbed/ : USED;
    await assert.rejects(
      async () => new Response(stream).text(),
      { name: 'TypeError', message: readElsewhere },
      'the stream does not replay bytes read elsewhere',
    );
  },
  'GetResult: large and multipart bodies stream intact': async ({ bucket: b }) => {
    const big = new Uint8Array(300 * 1024).map((_, i) => (i * 7) & 255);
    await b.put('big', big);
    const got = (await b.get('big')) as GetResult;
    assert.deepEqual(await got.bytes(), big);
    const ranged = (await b.get('big', { range: { offset: 70_000, length: 100_000 } })) as GetResult;
    assert.deepEqual(new Uint8Array(await ranged.arrayBuffer()), big.slice(70_000, 170_000));

    const part = new Uint8Array(5 * 1024 * 1024).fill(1);
    const upload = await b.createMultipartUpload('mpu');
    const parts = [await upload.uploadPart(1, part), await upload.uploadPart(2, 'tail')];
    await upload.complete(parts);
    const across = (await b.get('mpu', { range: { suffix: 6 } })) as GetResult;
    assert.deepEqual(new Uint8Array(await new Response(across.body).arrayBuffer()), Uint8Array.of(1, 1, ...utf8('tail')));
  },
  'an empty object reads as empty, by every read method and as a stream': async ({ bucket: b }) => {
    await b.put('empty', '');
    assert.equal(await ((await b.get('empty')) as GetResult).text(), '');
    assert.equal((await ((await b.get('empty')) as GetResult).bytes()).byteLength, 0);
    assert.equal(await new Response(((await b.get('empty')) as GetResult).body).text(), '');
    const reader = ((await b.get('empty')) as GetResult).body.getReader();
    for (;;) {
      const next = await reader.read();
      if (next.done) break;
      assert.equal(next.value.byteLength, 0, 'an empty object yields no bytes');
    }
  },
  'an object whose metadata is too large for one header line still comes back whole, body and metadata': async ({ bucket: b }) => {
    // 4,000 'é' are 8,000 bytes of metadata (under the 8,192 limit), and 24,000 characters as escaped JSON.
    const customMetadata = { k: 'é'.repeat(4000) };
    await b.put('big-meta', 'the body', { customMetadata });
    const got = (await b.get('big-meta')) as GetResult;
    assert.deepEqual(got.customMetadata, customMetadata);
    assert.equal(await got.text(), 'the body');
    const streamed = (await b.get('big-meta')) as GetResult;
    assert.equal(await new Response(streamed.body).text(), 'the body');
    const cancelled = (await b.get('big-meta')) as GetResult;
    await cancelled.body.cancel();
    assert.deepEqual((await b.head('big-meta'))!.customMetadata, customMetadata, 'a cancelled body leaves the binding working');
    const listed = (await b.list({ include: ['customMetadata'] })).objects[0]!;
    assert.deepEqual(listed.customMetadata, customMetadata);
  },
};
