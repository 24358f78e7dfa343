/** HeadResult / GetResult shapes, body reads, and takeStoreBody (reference §2.1). */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { HeadResult, takeStoreBody } from '../../../src/store/binding/index.ts';
import type { GetResult } from '../../../src/store/binding/index.ts';
import { openTestBucket, rejectsWith } from './helpers.ts';
import { TEST_BINDING } from '../../helpers/store-wire-client.ts';

const USED = 'Body has already been used. It can only be used once. Use tee() first if you need to read it twice.';
const md5 = (data: string | Uint8Array) => createHash('md5').update(data).digest('hex');

test('HeadResult: classes, own properties, JSON shape', { timeout: 10_000 }, async (t) => {
  const { bucketBinding: b, clock } = await openTestBucket(t);
  const put = (await b.put('k', 'value', { customMetadata: { a: 'b' }, httpMetadata: { contentType: 't/x' } }))!;
  const head = (await b.head('k'))!;
  for (const object of [put, head]) {
    assert.equal(object.constructor.name, 'HeadResult');
    assert.ok(object instanceof HeadResult);
    assert.equal('body' in object, false);
    assert.equal(object.etag, md5('value'));
    assert.equal(object.httpEtag, `"${md5('value')}"`);
    assert.equal(object.size, 5);
    assert.equal(object.uploaded.getTime(), clock.now());
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
    key: 'k', version: put.version, size: 5, etag: md5('value'), httpEtag: `"${md5('value')}"`, checksums: { md5: md5('value') },
    uploaded: new Date(clock.now()).toISOString(), httpMetadata: { contentType: 't/x' }, customMetadata: { a: 'b' }, storageClass: 'Standard',
  });
  assert.equal(put.version, head.version);
});

test('GetResult: body and bodyUsed are prototype getters; every read method once', { timeout: 10_000 }, async (t) => {
  const { bucketBinding: b } = await openTestBucket(t);
  await b.put('k', '{"n":1}', { httpMetadata: { contentType: 'application/json' } });
  const get = async () => (await b.get('k')) as GetResult;
  const got = await get();
  assert.equal(got.constructor.name, 'GetResult');
  assert.ok(got instanceof HeadResult);
  assert.equal(Object.keys(got).includes('body'), false);
  assert.ok('body' in got && 'bodyUsed' in got);
  const reads: Record<string, (r: GetResult) => Promise<unknown>> = {
    text: (r) => r.text(), json: (r) => r.json(), arrayBuffer: (r) => r.arrayBuffer(), bytes: (r) => r.bytes(), blob: (r) => r.blob(),
  };
  const expected: Record<string, (value: unknown) => void> = {
    text: (v) => assert.equal(v, '{"n":1}'),
    json: (v) => assert.deepEqual(v, { n: 1 }),
    arrayBuffer: (v) => assert.ok(v instanceof ArrayBuffer && Buffer.from(v).toString() === '{"n":1}'),
    bytes: (v) => assert.ok(v instanceof Uint8Array && Buffer.from(v).toString() === '{"n":1}'),
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
});

test('GetResult: the stream, bodyUsed, and reads after the stream', { timeout: 10_000 }, async (t) => {
  const { bucketBinding: b } = await openTestBucket(t);
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
  assert.equal(Buffer.from((await reader.read()).value!).toString(), 'streamed');

  const textFirst = (await b.get('k')) as GetResult;
  const stream = textFirst.body;
  assert.equal(await textFirst.text(), 'streamed');
  // Over the wire the stream is the runtime's own, which the read left locked: the runtime's TypeError.
  const readElsewhere = TEST_BINDING === 'wire' ? /locked|disturbed/ : USED;
  await assert.rejects(async () => new Response(stream).text(), { name: 'TypeError', message: readElsewhere }, 'the stream does not replay bytes read elsewhere');
});

test('GetResult: large and multipart bodies stream intact', { timeout: 10_000 }, async (t) => {
  const { bucketBinding: b } = await openTestBucket(t);
  const big = new Uint8Array(300 * 1024).map((_, i) => (i * 7) & 255);
  await b.put('big', big);
  const got = (await b.get('big')) as GetResult;
  assert.equal(md5(await got.bytes()), md5(big));
  const ranged = (await b.get('big', { range: { offset: 70_000, length: 100_000 } })) as GetResult;
  assert.equal(md5(new Uint8Array(await ranged.arrayBuffer())), md5(big.subarray(70_000, 170_000)));

  const part = new Uint8Array(5 * 1024 * 1024).fill(1);
  const upload = await b.createMultipartUpload('mpu');
  const parts = [await upload.uploadPart(1, part), await upload.uploadPart(2, 'tail')];
  await upload.complete(parts);
  const across = (await b.get('mpu', { range: { suffix: 6 } })) as GetResult;
  assert.equal(Buffer.from(await new Response(across.body).arrayBuffer()).toString('latin1'), '\x01\x01tail');
});

test('takeStoreBody: hands over an untouched body once; the stream then refuses to replay it', {
  timeout: 10_000, skip: TEST_BINDING === 'wire' ? 'a remote body is its runtime\'s own stream; only in-process bodies are taken' : false,
}, async (t) => {
  const { bucketBinding: b } = await openTestBucket(t);
  await b.put('k', 'bytes');
  const got = (await b.get('k')) as GetResult;
  const stream = got.body;
  const body = takeStoreBody(stream);
  assert.equal(body?.length, 5);
  assert.equal(got.bodyUsed, true);
  assert.equal(takeStoreBody(stream), undefined, 'only once');
  await rejectsWith(got.text(), TypeError, USED);
  await assert.rejects(new Response(stream).text(), { name: 'TypeError', message: USED });
  const chunks: Uint8Array[] = [];
  for await (const chunk of body!.stream()) chunks.push(chunk);
  assert.equal(Buffer.concat(chunks).toString(), 'bytes');

  assert.equal(takeStoreBody(new ReadableStream()), undefined, 'not a store body');
  assert.equal(takeStoreBody(null), undefined);
  const read = (await b.get('k')) as GetResult;
  assert.equal(await read.text(), 'bytes');
  assert.equal(takeStoreBody(read.body), undefined, 'already read');
  const lockedResult = (await b.get('k')) as GetResult;
  const lockedStream = lockedResult.body;
  lockedStream.getReader();
  assert.equal(takeStoreBody(lockedStream), undefined, 'locked');
});
