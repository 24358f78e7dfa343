/** Multipart uploads through the binding: part number checks, failures, resume. */
import type { GetResult } from '../../../src/store/binding/index.ts';
import { assert, fromHex, rejectsWith, utf8, type BindingCases } from './case-kit.ts';

const MiB = 1024 * 1024;
/** A part etag: opaque, unique to one upload of the part (43 base64url characters here). */
const OPAQUE_ETAG = /^[A-Za-z0-9_-]{43}$/;
const PART_RANGE = (n: number) => `Part number must be between 1 and 10000 (inclusive). Actual value was: ${n}`;
const VALUE_ERROR =
  "Failed to execute 'uploadPart' on 'StoreMultipartUpload': parameter 2 is not of type 'ReadableStream or ArrayBuffer or ArrayBufferView or string or Blob'.";

export const CASES: BindingCases = {
  'create, upload, complete: the handle, part etags, the final object': async ({ bucket: b, digest }) => {
    const upload = await b.createMultipartUpload('mpu', { httpMetadata: new Headers({ 'content-type': 'a/b' }), customMetadata: { x: 1 } as never });
    assert.deepEqual(Object.keys(upload).sort(), ['key', 'uploadId']);
    assert.equal(upload.key, 'mpu');
    const first = new Uint8Array(5 * MiB).fill(7);
    const p1 = await upload.uploadPart(1, first);
    assert.deepEqual(Object.keys(p1).sort(), ['etag', 'partNumber']);
    assert.equal(p1.partNumber, 1);
    assert.match(p1.etag, OPAQUE_ETAG);
    const p2 = await upload.uploadPart(2, new Blob(['ta', 'il']));
    assert.equal(p2.partNumber, 2);
    assert.match(p2.etag, OPAQUE_ETAG);
    assert.notEqual(p1.etag, p2.etag);
    const done = await upload.complete([p2, p1]);
    assert.equal(done.constructor.name, 'HeadResult');
    assert.equal(done.size, 5 * MiB + 4);
    // The object's etag is still S3's: the MD5 of the parts' MD5s.
    const expected = await digest('md5', fromHex((await digest('md5', first)) + (await digest('md5', 'tail'))));
    assert.equal(done.etag, `${expected}-2`);
    assert.equal(done.httpEtag, `"${expected}-2"`);
    assert.deepEqual(done.checksums.toJSON(), {}, 'multipart objects have no MD5');
    assert.deepEqual(done.httpMetadata, { contentType: 'a/b' });
    assert.deepEqual(done.customMetadata, { x: '1' });
    assert.equal(done.range, undefined);
    const got = (await b.get('mpu', { range: { offset: 5 * MiB - 2 } })) as GetResult;
    assert.deepEqual(new Uint8Array(await got.arrayBuffer()), Uint8Array.of(7, 7, ...utf8('tail')));
    assert.ok(await b.createMultipartUpload('plain', null), 'options may be null');
  },
  'part etags are opaque per upload of a part: the same bytes again get a new etag, and the old one no longer completes': async ({ bucket: b, digest }) => {
    const upload = await b.createMultipartUpload('again');
    const first = await upload.uploadPart(1, 'same bytes');
    const second = await upload.uploadPart(1, 'same bytes');
    assert.notEqual(first.etag, second.etag, 'a part uploaded again is another part');
    assert.notEqual(first.etag, await digest('md5', 'same bytes'), 'not the MD5 of the bytes');
    await rejectsWith(upload.complete([first]), Error, 'completeMultipartUpload: One or more of the specified parts could not be found. (10025)');
    const done = await upload.complete([second]);
    assert.equal(done.size, 10);
    // A part named by the MD5 of its bytes (what the S3 API lists for it) completes too: one store, both faces.
    const other = await b.createMultipartUpload('by-md5');
    await other.uploadPart(1, 'md5 named');
    assert.equal((await other.complete([{ partNumber: 1, etag: await digest('md5', 'md5 named') }])).size, 9);
  },
  'part numbers: converted like an int, checked 1..10000 after the value type': async ({ bucket: b, digest }) => {
    const upload = await b.createMultipartUpload('k');
    for (const n of [0, -1, 10001]) await rejectsWith(upload.uploadPart(n, 'x'), TypeError, PART_RANGE(n));
    await rejectsWith(upload.uploadPart(Number.NaN, 'x'), TypeError, PART_RANGE(0));
    assert.equal((await upload.uploadPart(1.9, 'x')).partNumber, 1);
    assert.equal((await upload.uploadPart('2' as never, 'y')).partNumber, 2);
    assert.equal((await upload.uploadPart(10000, 'z')).partNumber, 10000);
    for (const bad of [null, undefined, 5]) await rejectsWith(upload.uploadPart(1, bad as never), TypeError, VALUE_ERROR);
    await rejectsWith(upload.uploadPart(0, null as never), TypeError, VALUE_ERROR);
    await rejectsWith(upload.complete([{ partNumber: 0, etag: 'e' }]), TypeError, PART_RANGE(0));
    await rejectsWith(
      upload.complete([
        { partNumber: 1, etag: await digest('md5', 'x') },
        { partNumber: 10001, etag: 'e' },
      ]),
      TypeError,
      PART_RANGE(10001),
    );
  },
  'multipart failures as the script sees them': async ({ bucket: b }) => {
    const upload = await b.createMultipartUpload('k');
    const small = await upload.uploadPart(1, 'small');
    const last = await upload.uploadPart(2, 'last');
    await rejectsWith(
      upload.complete([small, last]),
      Error,
      'completeMultipartUpload: Your proposed upload is smaller than the minimum allowed object size. (10011)',
    );
    await rejectsWith(
      upload.complete([{ partNumber: 1, etag: 'wrong' }]),
      Error,
      'completeMultipartUpload: One or more of the specified parts could not be found. (10025)',
    );
    await rejectsWith(upload.complete([small, small]), Error, 'completeMultipartUpload: We encountered an internal error. Please try again. (10001)');
    // Duplicates are found before etags are checked: a stale first copy still answers 10001, not 10025.
    const replaced = await upload.uploadPart(3, 'old');
    const current = await upload.uploadPart(3, 'new');
    assert.notEqual(replaced.etag, current.etag);
    await rejectsWith(upload.complete([replaced, current]), Error, 'completeMultipartUpload: We encountered an internal error. Please try again. (10001)');
    await rejectsWith(upload.complete([current, replaced]), Error, 'completeMultipartUpload: We encountered an internal error. Please try again. (10001)');
    await rejectsWith(upload.complete([replaced]), Error, 'completeMultipartUpload: One or more of the specified parts could not be found. (10025)');
    const done = await upload.complete([last]);
    assert.equal(done.size, 4);
    await rejectsWith(upload.complete([last]), Error, 'completeMultipartUpload: The specified multipart upload does not exist. (10024)');
    await rejectsWith(upload.uploadPart(3, 'x'), Error, 'uploadPart: The specified multipart upload does not exist. (10024)');
    assert.equal(await upload.abort(), undefined, 'abort after complete succeeds silently');
    assert.equal(await ((await b.get('k')) as GetResult).text(), 'last', 'and keeps the object');

    const aborted = await b.createMultipartUpload('other');
    await aborted.abort();
    await aborted.abort();
    await rejectsWith(aborted.uploadPart(1, 'x'), Error, 'uploadPart: The specified multipart upload does not exist. (10024)');
    await rejectsWith(aborted.complete([]), Error, 'completeMultipartUpload: The specified multipart upload does not exist. (10024)');
    await rejectsWith(
      b.createMultipartUpload('big-meta', { customMetadata: { k: 'x'.repeat(9000) } }),
      Error,
      'createMultipartUpload: Your metadata headers exceed the maximum allowed metadata size. (10012)',
    );
  },
  'resumeMultipartUpload: synchronous, unchecked, key coerced; uploadId must be a string': async ({ bucket: b }) => {
    const upload = await b.createMultipartUpload('7');
    const resumed = b.resumeMultipartUpload(7 as never, upload.uploadId);
    assert.ok(!(resumed instanceof Promise));
    assert.deepEqual({ key: resumed.key, uploadId: resumed.uploadId }, { key: '7', uploadId: upload.uploadId });
    const part = await resumed.uploadPart(1, 'resumed');
    assert.equal((await upload.complete([part])).size, 7);
    const unknown = b.resumeMultipartUpload('k', 'no-such-upload');
    await rejectsWith(unknown.uploadPart(1, 'x'), Error, 'uploadPart: The specified multipart upload does not exist. (10024)');
    for (const bad of [undefined, 5, null]) {
      assert.throws(() => b.resumeMultipartUpload('k', bad as never), {
        name: 'TypeError',
        message: "Failed to execute 'resumeMultipartUpload' on 'StoreBucket': parameter 2 is not of type 'string'.",
      });
    }
  },
  'uploads of one key are independent of each other and of the key: in progress they are invisible, a put or delete of the key leaves them be': async ({
    bucket: b,
  }) => {
    const one = await b.createMultipartUpload('key', { httpMetadata: { contentType: 'text/plain' } });
    const two = await b.createMultipartUpload('key');
    assert.equal(one.key, 'key');
    assert.notEqual(one.uploadId, two.uploadId, 'each upload has an id of its own');
    const p1 = await one.uploadPart(1, 'same');
    const p100 = await one.uploadPart(100, 'same');
    assert.equal(p100.partNumber, 100);
    assert.notEqual(p1.etag, p100.etag, 'the same bytes under another part number get another etag');
    assert.equal(await b.head('key'), null, 'an upload in progress is no object');
    assert.equal(await b.get('key'), null);
    assert.deepEqual((await b.list()).objects, []);
    await b.put('key', 'a put meanwhile');
    await b.delete('key');
    const part = await two.uploadPart(1, 'the upload goes on');
    const done = await two.complete([part]);
    const head = (await b.head('key'))!;
    assert.equal(head.version, done.version);
    assert.equal(head.etag, done.etag);
    assert.deepEqual(head.range, { offset: 0, length: 18 });
    const listed = (await b.list()).objects;
    assert.deepEqual(
      listed.map((o) => [o.key, o.version, o.size]),
      [['key', done.version, 18]],
    );
    assert.equal(listed[0]!.range, undefined);
    assert.equal(await ((await b.get('key')) as GetResult).text(), 'the upload goes on');
    // The first upload is untouched by the second's completion, and replaces the object in turn.
    assert.equal((await one.complete([p100])).size, 4);
    assert.equal(await ((await b.get('key')) as GetResult).text(), 'same');
    assert.equal((await b.head('key'))!.httpMetadata.contentType, 'text/plain', "the upload's own metadata");
  },
  "an upload id belongs to its key and its parts to their upload: another key's handle is NoSuchUpload (10024), another upload's part InvalidPart (10025)":
    async ({ bucket: b }) => {
      const upload = await b.createMultipartUpload('key');
      const elsewhere = b.resumeMultipartUpload('other-key', upload.uploadId);
      await rejectsWith(elsewhere.uploadPart(1, 'x'), Error, 'uploadPart: The specified multipart upload does not exist. (10024)');
      await rejectsWith(elsewhere.complete([]), Error, 'completeMultipartUpload: The specified multipart upload does not exist. (10024)');
      await rejectsWith(elsewhere.abort(), Error, 'abortMultipartUpload: The specified multipart upload does not exist. (10024)');
      const never = b.resumeMultipartUpload('key', 'no-such-upload');
      await rejectsWith(never.complete([]), Error, 'completeMultipartUpload: The specified multipart upload does not exist. (10024)');
      await rejectsWith(never.abort(), Error, 'abortMultipartUpload: The specified multipart upload does not exist. (10024)');
      const sibling = await b.createMultipartUpload('key');
      const foreign = await sibling.uploadPart(1, 'value');
      await rejectsWith(upload.complete([foreign]), Error, 'completeMultipartUpload: One or more of the specified parts could not be found. (10025)');
      await rejectsWith(
        upload.complete([{ partNumber: 3, etag: foreign.etag }]),
        Error,
        'completeMultipartUpload: One or more of the specified parts could not be found. (10025)',
      );
      assert.equal((await upload.uploadPart(1, 'still open')).partNumber, 1, 'a refused handle leaves the upload open');
    },
  'complete([]) makes an empty object; part numbers need not be contiguous': async ({ bucket: b, digest }) => {
    const empty = await b.createMultipartUpload('empty');
    const none = await empty.complete([]);
    assert.equal(none.size, 0);
    assert.equal(none.etag, `${await digest('md5', '')}-0`);
    assert.equal(await ((await b.get('empty')) as GetResult).text(), '');
    const gaps = await b.createMultipartUpload('gaps');
    const first = new Uint8Array(5 * MiB).fill(2);
    const p2 = await gaps.uploadPart(2, first);
    const p9 = await gaps.uploadPart(9, 'nine');
    const done = await gaps.complete([p9, p2]);
    assert.equal(done.size, 5 * MiB + 4);
    const expected = await digest('md5', fromHex((await digest('md5', first)) + (await digest('md5', 'nine'))));
    assert.equal(done.etag, `${expected}-2`);
    assert.equal(await ((await b.get('gaps', { range: { suffix: 4 } })) as GetResult).text(), 'nine');
  },
  'part sizes: every part but the last at least 5 MiB and of one size, the last no larger, else 10011 or 10048': async ({ bucket: b }) => {
    const tooSmall = 'completeMultipartUpload: Your proposed upload is smaller than the minimum allowed object size. (10011)';
    const uneven = 'completeMultipartUpload: There was a problem with the multipart upload. (10048)';
    const upload = await b.createMultipartUpload('sizes');
    const p1 = await upload.uploadPart(1, new Uint8Array(5 * MiB));
    const p2 = await upload.uploadPart(2, new Uint8Array(5 * MiB + 1));
    const p3 = await upload.uploadPart(3, 'x');
    await rejectsWith(upload.complete([p1, p2, p3]), Error, uneven);
    await rejectsWith(upload.complete([p1, p2]), Error, uneven);
    const small = await upload.uploadPart(4, 'small');
    // Part 3 ('x') is not the last part here.
    await rejectsWith(upload.complete([p1, small, p3]), Error, tooSmall);
    // Sizes are checked in part-number order, the object's, whatever order the list is in: part 3 is last here.
    const done = await upload.complete([p3, p1]);
    assert.equal(done.size, 5 * MiB + 1);
    assert.equal(await ((await b.get('sizes', { range: { suffix: 2 } })) as GetResult).text(), '\0x');
  },
};
