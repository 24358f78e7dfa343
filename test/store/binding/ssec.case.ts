/**
 * SSE-C through the binding: `ssecKey` on put, get, createMultipartUpload and
 * uploadPart, as 64 lowercase hex characters or 32 bytes, with the runtime's exact errors for a
 * bad key; `ssecKeyMd5` (base64) on results, head() showing it without the key; ranges across the
 * encryption chunks; the backend's refusals of a missing, a wrong, or an unneeded key.
 */
import type { GetResult } from '../../../src/store/binding/index.ts';
import { assert, fromHex, hex, rejectsWith, type BindingCases } from './case-kit.ts';

const KEY_HEX = '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef';
const OTHER_HEX = 'fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210';
/** Bigger than an encryption chunk (64 KiB), so ranges cross chunk edges. */
const SIZE = 3 * 65_536 + 1_000;

function pattern(size: number): Uint8Array {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i++) bytes[i] = (i * 31 + (i >> 8)) & 0xff;
  return bytes;
}

async function keyMd5(digest: (algorithm: 'md5', data: Uint8Array) => Promise<string>, keyHex: string): Promise<string> {
  return btoa(String.fromCharCode(...fromHex(await digest('md5', fromHex(keyHex)))));
}

export const CASES: BindingCases = {
  "ssecKey: a bad key is refused with the runtime's errors, before anything is stored": async ({ bucket: b }) => {
    await rejectsWith(b.put('k', 'v', { ssecKey: KEY_HEX.toUpperCase() }), Error, 'SSE-C Key has invalid format');
    await rejectsWith(b.put('k', 'v', { ssecKey: 'abc' }), Error, 'SSE-C Key must be 32 bytes in length');
    await rejectsWith(b.put('k', 'v', { ssecKey: '' }), Error, 'SSE-C Key has invalid format');
    await rejectsWith(b.put('k', 'v', { ssecKey: new Uint8Array(31) }), Error, 'SSE-C Key must be 32 bytes in length');
    await rejectsWith(
      b.put('k', 'v', { ssecKey: 5 as never }),
      TypeError,
      "Incorrect type for the 'ssecKey' field on 'PutOptions': the provided value is not of type 'ArrayBuffer or ArrayBufferView or string'.",
    );
    await rejectsWith(b.get('k', { ssecKey: 'zz' }), Error, 'SSE-C Key has invalid format');
    await rejectsWith(b.createMultipartUpload('k', { ssecKey: new ArrayBuffer(16) }), Error, 'SSE-C Key must be 32 bytes in length');
    assert.equal(await b.head('k'), null, 'nothing stored');
  },
  "put with ssecKey: stored encrypted, read back with the key as hex or bytes; head shows the key's MD5 without it": async ({ bucket: b, digest }) => {
    const body = pattern(SIZE);
    const put = await b.put('secret', body, { ssecKey: KEY_HEX, httpMetadata: { contentType: 'application/x-secret' } });
    const md5 = await keyMd5(digest, KEY_HEX);
    assert.equal(put!.ssecKeyMd5, md5);
    assert.ok(Object.keys(put!).includes('ssecKeyMd5'));
    assert.equal(put!.size, SIZE);
    assert.notEqual(put!.etag, await digest('md5', body), 'the etag says nothing of the content');
    const head = await b.head('secret');
    assert.equal(head!.ssecKeyMd5, md5, 'head takes no key and shows its MD5');
    const got = (await b.get('secret', { ssecKey: fromHex(KEY_HEX) })) as GetResult;
    assert.equal(got.ssecKeyMd5, md5);
    assert.equal(hex(await got.arrayBuffer()), hex(body));
    const plain = await b.put('plain', 'in the clear');
    assert.equal(plain!.ssecKeyMd5, undefined);
    assert.equal((await b.head('plain'))!.ssecKeyMd5, undefined);
    assert.equal(JSON.stringify(plain).includes('ssecKeyMd5'), false, 'undefined: left out of JSON');
  },
  'get of an SSE-C object: ranges across the encryption chunks; no key, a wrong key, a key for a plain object are refused': async ({ bucket: b }) => {
    const body = pattern(SIZE);
    await b.put('secret', body, { ssecKey: KEY_HEX });
    for (const [offset, length] of [
      [0, 1],
      [65_535, 2],
      [65_536, 65_536],
      [1_000, 3 * 65_536],
      [SIZE - 10, 10],
    ] as const) {
      const got = (await b.get('secret', { ssecKey: KEY_HEX, range: { offset, length } })) as GetResult;
      assert.deepEqual(got.range, { offset, length });
      assert.equal(hex(await got.arrayBuffer()), hex(body.subarray(offset, offset + length)), `${offset}+${length}`);
    }
    const suffix = (await b.get('secret', { ssecKey: KEY_HEX, range: { suffix: 70_000 } })) as GetResult;
    assert.equal(hex(await suffix.arrayBuffer()), hex(body.subarray(SIZE - 70_000)));
    await rejectsWith(
      b.get('secret'),
      Error,
      'get: The object was stored using a form of Server Side Encryption. The correct parameters must be provided to retrieve the object. (10040)',
    );
    await rejectsWith(
      b.get('secret', { ssecKey: OTHER_HEX }),
      Error,
      /^get: The SSE-C key provided does not match the key the object was stored with \(its MD5 is [A-Za-z0-9+/=]{24}, this key's [A-Za-z0-9+/=]{24}\)\. \(10003\)$/,
    );
    await b.put('plain', 'x');
    await rejectsWith(
      b.get('plain', { ssecKey: KEY_HEX }),
      Error,
      'get: The encryption parameters are not applicable to this object: it was not stored with a customer-provided key (SSE-C). (10040)',
    );
    assert.equal(await b.get('missing', { ssecKey: KEY_HEX }), null);
    // With the key, a failed condition answers the metadata without the body, as for any object.
    const head = await b.get('secret', { ssecKey: KEY_HEX, onlyIf: { etagMatches: 'nope' } });
    assert.equal('body' in head!, false);
  },
  "multipart with ssecKey: each part gives the upload's key; the object reads back with it, across parts": async ({ bucket: b, digest }) => {
    const first = pattern(5 * 1024 * 1024);
    const last = pattern(70_000);
    const upload = await b.createMultipartUpload('big', { ssecKey: KEY_HEX });
    await rejectsWith(
      upload.uploadPart(1, first),
      Error,
      'uploadPart: The multipart upload was created using a form of Server Side Encryption (SSE-C). The correct parameters must be provided with each part. (10040)',
    );
    await rejectsWith(
      upload.uploadPart(1, first, { ssecKey: OTHER_HEX }),
      Error,
      /^uploadPart: The SSE-C key provided does not match the key the upload was stored with \(its MD5 is .*\)\. \(10003\)$/,
    );
    const p1 = await upload.uploadPart(1, first, { ssecKey: KEY_HEX });
    const p2 = await upload.uploadPart(2, last, { ssecKey: fromHex(KEY_HEX) });
    const done = await upload.complete([p1, p2]);
    assert.equal(done.ssecKeyMd5, await keyMd5(digest, KEY_HEX));
    assert.equal(done.size, first.length + last.length);
    const edge = first.length - 5;
    const got = (await b.get('big', { ssecKey: KEY_HEX, range: { offset: edge, length: 70 } })) as GetResult;
    const whole = new Uint8Array(first.length + last.length);
    whole.set(first, 0);
    whole.set(last, first.length);
    assert.equal(hex(await got.arrayBuffer()), hex(whole.subarray(edge, edge + 70)));
    const plain = await b.createMultipartUpload('plain');
    await rejectsWith(
      plain.uploadPart(1, 'x', { ssecKey: KEY_HEX }),
      Error,
      'uploadPart: The encryption parameters are not applicable to this upload: it was not created with a customer-provided key (SSE-C). (10040)',
    );
  },
};
