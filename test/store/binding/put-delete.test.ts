/** put() values and options, keys, delete() (reference §1.4, §2.2, §9). */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import type { GetResult } from '../../../src/store/binding/index.ts';
import { openTestBucket, rejectsWith } from './helpers.ts';

const VALUE_ERROR = "Failed to execute 'put' on 'StoreBucket': parameter 2 is not of type 'ReadableStream or ArrayBuffer or ArrayBufferView or string or Blob'.";
const md5 = (data: string) => createHash('md5').update(data).digest('hex');

function streamOf(...chunks: unknown[]): ReadableStream {
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
}

test('put values: strings as UTF-8, views by their window, null and "" as empty objects', { timeout: 10_000 }, async (t) => {
  const { bucketBinding: b } = await openTestBucket(t);
  const text = async (key: string) => ((await b.get(key)) as GetResult).text();
  await b.put('utf8', 'é🙂');
  assert.equal((await b.head('utf8'))!.size, 6);
  assert.equal(await text('utf8'), 'é🙂');
  for (const empty of [null, '', new ArrayBuffer(0)]) {
    const put = (await b.put('empty', empty))!;
    assert.equal(put.size, 0);
    assert.equal(put.etag, 'd41d8cd98f00b204e9800998ecf8427e');
  }
  await b.put('view', new DataView(new TextEncoder().encode('abcdef').buffer, 1, 3));
  assert.equal(await text('view'), 'bcd');
  await b.put('unknown-length', streamOf(new TextEncoder().encode('chunked '), new TextEncoder().encode('body')));
  assert.equal(await text('unknown-length'), 'chunked body', 'streams of unknown length are accepted (reference §11 #5)');
  await b.put('blob', new Blob(['a', new Uint8Array([98])], { type: 'ignored/type' }));
  assert.equal(await text('blob'), 'ab');
  assert.deepEqual((await b.head('blob'))!.httpMetadata, {}, 'a Blob type is not metadata');
});

test('put copies buffers: changing one after the call does not change what is stored', { timeout: 10_000 }, async (t) => {
  const { bucketBinding: b } = await openTestBucket(t);
  const bytes = new TextEncoder().encode('original');
  const pending = b.put('k', bytes);
  bytes.fill(0x78);
  assert.equal((await pending)!.etag, md5('original'));
  assert.equal(await ((await b.get('k')) as GetResult).text(), 'original');
});

test('put value types: undefined, numbers and plain objects are the conversion TypeError, before any option error', { timeout: 10_000 }, async (t) => {
  const { bucketBinding: b } = await openTestBucket(t);
  for (const bad of [undefined, 5, {}, true]) await rejectsWith(b.put('k', bad as never), TypeError, VALUE_ERROR);
  await rejectsWith(b.put('k', undefined as never, { md5: 'bad' }), TypeError, VALUE_ERROR);
  assert.equal(await b.head('k'), null);
});

test('put option errors reject and cancel a stream value', { timeout: 10_000 }, async (t) => {
  const { bucketBinding: b } = await openTestBucket(t);
  const bad: Array<[Record<string, unknown>, string]> = [
    [{ md5: 'bad' }, 'MD5 is 32 hex characters, not 3'],
    [{ onlyIf: { etagMatches: '"q"' } }, 'Conditional ETag should not be wrapped in quotes ("q").'],
    [{ onlyIf: new Headers({ 'if-match': 'bare' }) }, 'Invalid ETag in if-match header'],
    [{ sha1: 'a'.repeat(40), sha256: 'a'.repeat(64) }, 'You cannot specify multiple hashing algorithms.'],
  ];
  for (const [options, message] of bad) {
    let reason: unknown;
    const stream = new ReadableStream({ cancel: (why) => { reason = why; } });
    await rejectsWith(b.put('k', stream, options), message.startsWith('Invalid ETag') ? Error : TypeError, message);
    assert.ok(reason instanceof Error, message);
    assert.equal(reason.message, 'Stream cancelled because the associated put operation encountered an error.');
  }
  assert.equal(await b.head('k'), null);
});

test("a failing script stream rejects put with the stream's own error; nothing is stored", { timeout: 10_000 }, async (t) => {
  const { bucketBinding: b } = await openTestBucket(t);
  const boom = new Error('boom');
  const failing = new ReadableStream({
    pull(controller) {
      controller.error(boom);
    },
  });
  await assert.rejects(b.put('k', failing), (error) => error === boom);
  await rejectsWith(b.put('k', streamOf({ not: 'bytes' })), TypeError, 'This ReadableStream did not return bytes.');
  assert.equal(await b.head('k'), null);
});

test('put returns the metadata as sent; head returns what is stored', { timeout: 10_000 }, async (t) => {
  const { bucketBinding: b } = await openTestBucket(t);
  const bare = (await b.put('k', 'x'))!;
  assert.deepEqual(bare.httpMetadata, {});
  assert.deepEqual(bare.customMetadata, {});
  const sent = (await b.put('k', 'x', { httpMetadata: new Headers({ 'content-type': 'a/b', 'x-no': '1' }), customMetadata: { n: 2 } as never }))!;
  assert.deepEqual(sent.httpMetadata, { contentType: 'a/b' });
  assert.deepEqual(sent.customMetadata, { n: '2' });
  assert.equal(sent.storageClass, 'Standard');
  assert.equal((await b.put('ia', 'x', { storageClass: 'InfrequentAccess' }))!.storageClass, 'InfrequentAccess');
  assert.equal((await b.head('ia'))!.storageClass, 'InfrequentAccess');
  await rejectsWith(b.put('k', 'x', { storageClass: 'Glacier' as never }), Error, /^put: .* \(10040\)$/);
  assert.ok(await b.put('k', 'x', null), 'options may be null');
});

test('keys: coerced to strings, empty allowed, more than 1024 UTF-8 bytes refused by every operation', { timeout: 10_000 }, async (t) => {
  const { bucketBinding: b } = await openTestBucket(t);
  await b.put(123 as never, 'n');
  assert.equal((await b.head('123'))!.key, '123');
  assert.equal(((await b.get(123 as never)) as GetResult).key, '123');
  await b.delete(123 as never);
  assert.equal(await b.head('123'), null);
  await b.put('', 'empty key');
  assert.equal(((await b.get('')) as GetResult).key, '');
  const max = 'é'.repeat(512);
  assert.ok(await b.put(max, 'x'), '1024 bytes is fine');
  const long = 'é'.repeat(513);
  const invalid = (op: string) => `${op}: The specified object name is not valid. (10020)`;
  await rejectsWith(b.head(long), Error, invalid('head'));
  await rejectsWith(b.get(long), Error, invalid('get'));
  await rejectsWith(b.put(long, 'x'), Error, invalid('put'));
  await rejectsWith(b.delete(long), Error, invalid('delete'));
  await rejectsWith(b.delete(['ok', long]), Error, invalid('delete'));
  await rejectsWith(b.createMultipartUpload(long), Error, invalid('createMultipartUpload'));
  await rejectsWith(b.resumeMultipartUpload(long, 'id').uploadPart(1, 'x'), Error, invalid('uploadPart'));
  await rejectsWith(b.resumeMultipartUpload(long, 'id').complete([]), Error, invalid('completeMultipartUpload'));
  await rejectsWith(b.resumeMultipartUpload(long, 'id').abort(), Error, invalid('abortMultipartUpload'));
});

test('delete: one key or many, missing keys ignored, at most 1000', { timeout: 10_000 }, async (t) => {
  const { bucketBinding: b } = await openTestBucket(t);
  for (const key of ['a', 'b', 'c']) await b.put(key, key);
  assert.equal(await b.delete('a'), undefined);
  assert.equal(await b.delete(['b', 'missing']), undefined);
  assert.equal(await b.delete('missing'), undefined);
  assert.deepEqual((await b.list()).objects.map((o) => o.key), ['c']);
  await b.delete([]);
  await b.delete(Array.from({ length: 1000 }, (_, i) => `k${i}`));
  await rejectsWith(b.delete(Array.from({ length: 1001 }, (_, i) => `k${i}`)), Error,
    'delete: The number of keys in the request must be between 1 and 1000 inclusive. (10027)');
});
