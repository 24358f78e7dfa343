/** put() values and options, streams of known and unknown length, keys, delete(). */
import type { GetResult, StoreBucket } from '../../../src/store/binding/index.ts';
import { assert, fixedLengthStream, fixedLengthStreamClass, rejectsWith, scriptStream, utf8, type BindingCases } from './case-kit.ts';

const VALUE_ERROR =
  "Failed to execute 'put' on 'StoreBucket': parameter 2 is not of type 'ReadableStream or ArrayBuffer or ArrayBufferView or string or Blob'.";
const UNKNOWN_LENGTH = 'Provided readable stream must have a known length (request/response body or readable half of FixedLengthStream)';

export const CASES: BindingCases = {
  'put values: strings as UTF-8, views by their window, null and "" as empty objects': async ({ bucket: b }) => {
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
    await b.put('blob', new Blob(['a', new Uint8Array([98])], { type: 'ignored/type' }));
    assert.equal(await text('blob'), 'ab');
    assert.deepEqual((await b.head('blob'))!.httpMetadata, {}, 'a Blob type is not metadata');
  },
  'put copies buffers: changing one after the call does not change what is stored': async ({ bucket: b, digest }) => {
    const bytes = new TextEncoder().encode('original');
    const pending = b.put('k', bytes);
    bytes.fill(0x78);
    assert.equal((await pending)!.etag, await digest('md5', 'original'));
    assert.equal(await ((await b.get('k')) as GetResult).text(), 'original');
  },
  'put value types: undefined, numbers and plain objects are the conversion TypeError, before any option error': async ({ bucket: b }) => {
    for (const bad of [undefined, 5, {}, true]) await rejectsWith(b.put('k', bad as never), TypeError, VALUE_ERROR);
    await rejectsWith(b.put('k', undefined as never, { md5: 'bad' }), TypeError, VALUE_ERROR);
    assert.equal(await b.head('k'), null);
  },
  'put option errors reject and cancel a stream value': async ({ bucket: b }) => {
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ md5: 'bad' }, 'MD5 is 32 hex characters, not 3'],
      [{ onlyIf: { etagMatches: '"q"' } }, 'Conditional ETag should not be wrapped in quotes ("q").'],
      [{ onlyIf: new Headers({ 'if-match': 'bare' }) }, 'Invalid ETag in if-match header'],
      [{ sha1: 'a'.repeat(40), sha256: 'a'.repeat(64) }, 'You cannot specify multiple hashing algorithms.'],
    ];
    for (const [options, message] of bad) {
      // Of unknown length, too: the options are checked first, as the runtime does.
      const { stream, cancelled } = scriptStream([], { open: true });
      await rejectsWith(b.put('k', stream, options), message.startsWith('Invalid ETag') ? Error : TypeError, message);
      if (cancelled === undefined) {
        // No reason to be seen (workerd before 2022-11-30): a cancelled stream reads as ended.
        assert.equal((await stream.getReader().read()).done, true, message);
        continue;
      }
      const reason = await cancelled;
      assert.ok(reason instanceof Error, message);
      assert.equal(reason.message, 'Stream cancelled because the associated put operation encountered an error.');
    }
    assert.equal(await b.head('k'), null);
  },
  "a ReadableStream of unknown length is refused by put and uploadPart with the runtime's TypeError; nothing is stored": async ({ bucket: b }) => {
    await rejectsWith(b.put('k', scriptStream([utf8('chunked '), utf8('body')]).stream), TypeError, UNKNOWN_LENGTH);
    await rejectsWith(b.put('k', scriptStream([utf8('x')]).stream, { httpMetadata: { contentType: 'a/b' }, sha1: 'a'.repeat(40) }), TypeError, UNKNOWN_LENGTH);
    assert.equal(await b.head('k'), null);
    const upload = await b.createMultipartUpload('mpu');
    await rejectsWith(upload.uploadPart(1, scriptStream([utf8('part')]).stream), TypeError, UNKNOWN_LENGTH);
    await rejectsWith(
      upload.complete([{ partNumber: 1, etag: 'any' }]),
      Error,
      'completeMultipartUpload: One or more of the specified parts could not be found. (10025)',
    );
    await upload.abort();
    assert.equal((await b.put('k', 'the binding goes on'))!.size, 19);
  },
  "streams of known length are taken by put and uploadPart: request and response bodies, a Blob's stream, a get body, a FixedLengthStream": async ({
    bucket: b,
    runtime,
  }) => {
    await b.put('source', 'source bytes');
    const known: Array<[string, () => Promise<ReadableStream> | ReadableStream | null, string]> = [
      ['a Response body', () => new Response('response').body, 'response'],
      ['a Request body', () => new Request('http://example.test/', { method: 'PUT', body: 'request' }).body, 'request'],
      ['a Blob stream', () => new Blob(['blob']).stream(), 'blob'],
      ['a get body', async () => ((await b.get('source')) as GetResult).body, 'source bytes'],
    ];
    // workerd's own class (Node.js has none).
    if (runtime === 'workerd') known.push(['a FixedLengthStream', () => fixedLengthStream(utf8('fixed length')), 'fixed length']);
    for (const [name, make, expected] of known) {
      const put = await b.put(name, (await make())!);
      assert.equal(put?.size, expected.length, name);
      assert.equal(await ((await b.get(name)) as GetResult).text(), expected, name);
    }
    const upload = await b.createMultipartUpload('mpu');
    const part = await upload.uploadPart(1, new Response('a part').body!);
    assert.equal((await upload.complete([part])).size, 6);
    assert.equal(await ((await b.get('mpu')) as GetResult).text(), 'a part');
  },
  'a stream put carries metadata too large for one header line; past the limit it is MetadataTooLarge': async ({ bucket: b }) => {
    // 4,000 'é' are 8,000 bytes of metadata, and 24,000 characters as the escaped JSON of the call.
    const customMetadata = { k: 'é'.repeat(4000) };
    const put = await b.put('big-meta', new Response('body').body!, { customMetadata, httpMetadata: { contentType: 'é/'.repeat(1000) } });
    assert.deepEqual(put?.customMetadata, customMetadata);
    assert.deepEqual((await b.head('big-meta'))!.customMetadata, customMetadata);
    assert.equal((await b.head('big-meta'))!.httpMetadata.contentType, 'é/'.repeat(1000));
    assert.equal(await ((await b.get('big-meta')) as GetResult).text(), 'body');
    await rejectsWith(
      b.put('too-big', new Response('body').body!, { customMetadata: { k: 'x'.repeat(9000) } }),
      Error,
      'put: Your metadata headers exceed the maximum allowed metadata size. (10012)',
    );
    assert.equal(await b.head('too-big'), null);
  },
  'a stream of known length that fails while put reads it rejects put; nothing is stored': async ({ bucket: b, runtime }) => {
    const boom = new Error('boom');
    if (runtime === 'in-process') {
      // A byte stream (of known length in this process) that errors: put rejects with the stream's own error.
      const failing = new ReadableStream({ type: 'bytes', pull: (controller) => controller.error(boom) });
      await assert.rejects(b.put('k', failing), (error) => error === boom);
    } else {
      // The readable half of a FixedLengthStream whose writer gives up halfway: workerd sends the
      // stream itself, so the store sees a body cut short, and put fails as the store does.
      const { readable, writable } = new (fixedLengthStreamClass())(10);
      const writer = writable.getWriter();
      void writer
        .write(utf8('12345'))
        .then(() => writer.abort(boom))
        .catch(() => undefined);
      await rejectsWith(b.put('k', readable), Error, 'put: We encountered an internal error. Please try again. (10001)');
    }
    assert.equal(await b.head('k'), null);
    await b.put('k', 'fine');
    assert.equal(await ((await b.get('k')) as GetResult).text(), 'fine', 'the binding goes on');
  },
  'put returns the metadata as sent; head returns what is stored': async ({ bucket: b }) => {
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
  },
  'keys: coerced to strings, empty allowed, more than 1024 UTF-8 bytes refused by every operation': async ({ bucket: b }) => {
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
  },
  'delete: one key or many, missing keys ignored, at most 1000': async ({ bucket: b }) => {
    for (const key of ['a', 'b', 'c']) await b.put(key, key);
    assert.equal(await b.delete('a'), undefined);
    assert.equal(await b.delete(['b', 'missing']), undefined);
    assert.equal(await b.delete('missing'), undefined);
    assert.deepEqual(
      (await b.list()).objects.map((o) => o.key),
      ['c'],
    );
    await b.delete([]);
    await b.delete(Array.from({ length: 1000 }, (_, i) => `k${i}`));
    await rejectsWith(
      b.delete(Array.from({ length: 1001 }, (_, i) => `k${i}`)),
      Error,
      'delete: The number of keys in the request must be between 1 and 1000 inclusive. (10027)',
    );
  },
  'custom metadata is limited to 8,192 UTF-8 bytes of names and values together; one byte more is MetadataTooLarge': async ({ bucket: b }) => {
    const tooLarge = 'put: Your metadata headers exceed the maximum allowed metadata size. (10012)';
    assert.ok(await b.put('k', 'v', { customMetadata: { key: 'x'.repeat(8189) } }), '3 + 8,189 bytes');
    await rejectsWith(b.put('k', 'v', { customMetadata: { key: 'x'.repeat(8190) } }), Error, tooLarge);
    assert.ok(await b.put('k', 'v', { customMetadata: { a: 'x'.repeat(4095), b: 'y'.repeat(4095) } }), 'summed over entries: 8,192');
    await rejectsWith(b.put('k', 'v', { customMetadata: { a: 'x'.repeat(4095), bb: 'y'.repeat(4095) } }), Error, tooLarge);
    // '🙂' is two UTF-16 code units and four UTF-8 bytes: the bytes are what count.
    assert.ok(await b.put('k', 'v', { customMetadata: { key: '🙂'.repeat(2047) } }), '3 + 8,188 bytes');
    assert.ok(await b.put('k', 'v', { customMetadata: { key1: '🙂'.repeat(2047) } }), '4 + 8,188 bytes');
    await rejectsWith(b.put('k', 'v', { customMetadata: { key12: '🙂'.repeat(2047) } }), Error, tooLarge);
    await rejectsWith(b.put('k', 'v', { customMetadata: { key: '🙂'.repeat(2048) } }), Error, tooLarge);
    assert.deepEqual((await b.head('k'))!.customMetadata, { key1: '🙂'.repeat(2047) }, 'a refused put changes nothing');
  },
  "a ranged get's body is a value of known length: put stores exactly the range": async ({ bucket: b }) => {
    await b.put('source', '0123456789');
    const copies: Array<[string, Parameters<StoreBucket['get']>[1], string]> = [
      ['whole', undefined, '0123456789'],
      ['offset and length', { range: { offset: 1, length: 4 } }, '1234'],
      ['length', { range: { length: 3 } }, '012'],
      ['offset', { range: { offset: 7 } }, '789'],
      ['suffix', { range: { suffix: 5 } }, '56789'],
      ['Range header', { range: new Headers({ range: 'bytes=0-5' }) }, '012345'],
    ];
    for (const [name, options, expected] of copies) {
      const source = (await b.get('source', options)) as GetResult;
      const put = await b.put(`copy/${name}`, source.body);
      assert.equal(put?.size, expected.length, name);
      assert.equal(await ((await b.get(`copy/${name}`)) as GetResult).text(), expected, name);
    }
  },
  'a body got before its object is deleted or replaced still reads whole': async ({ bucket: b }) => {
    // Stored inline (up to 64 KiB) and as a blob (larger); a multipart object is read across parts.
    const small = utf8('small body');
    const large = new Uint8Array(3 * 1024 * 1024).map((_, i) => (i * 31) & 255);
    await b.put('small', small);
    await b.put('large', large);
    const upload = await b.createMultipartUpload('multipart');
    const firstPart = new Uint8Array(5 * 1024 * 1024).fill(1);
    await upload.complete([await upload.uploadPart(1, firstPart), await upload.uploadPart(2, 'tail')]);
    const bodies = {
      small: (await b.get('small')) as GetResult,
      large: (await b.get('large')) as GetResult,
      ranged: (await b.get('large', { range: { offset: 1024 * 1024 } })) as GetResult,
      multipart: (await b.get('multipart', { range: { offset: 5 * 1024 * 1024 - 3 } })) as GetResult,
    };
    await b.delete(['small', 'multipart']);
    await b.put('large', 'replaced');
    assert.deepEqual(await bodies.small.bytes(), small);
    assert.deepEqual(await bodies.large.bytes(), large);
    assert.deepEqual(await bodies.ranged.bytes(), large.subarray(1024 * 1024));
    assert.deepEqual(await bodies.multipart.bytes(), Uint8Array.of(1, 1, 1, ...utf8('tail')));
    assert.equal(await b.head('small'), null);
    assert.equal(await ((await b.get('large')) as GetResult).text(), 'replaced');
  },
};
