/**
 * Checksums: put's md5/sha1/sha256/sha384/sha512 options as hex or bytes,
 * their errors, StoreChecksums, and the checksums put, get, head and list answer.
 */
import { StoreChecksums, toExpectedChecksum } from '../../../src/store/binding/checksums.ts';
import type { StoreObject, StorePutOptions } from '../../../src/store/binding/index.ts';
import { assert, hex, rejectsWith, type BindingCases, type CaseContext } from './case-kit.ts';

const ALGORITHMS = [
  ['md5', 'MD5', 16],
  ['sha1', 'SHA-1', 20],
  ['sha256', 'SHA-256', 32],
  ['sha384', 'SHA-384', 48],
  ['sha512', 'SHA-512', 64],
] as const;
type Algorithm = (typeof ALGORITHMS)[number][0];

/** Every form put takes a checksum in: hex either case, an ArrayBuffer, and views (a window of a larger buffer, a DataView, a wider typed array). */
function forms(digestHex: string): Array<[string, string | ArrayBuffer | ArrayBufferView]> {
  const bytes = Uint8Array.from(digestHex.match(/../g)!, (pair) => parseInt(pair, 16));
  const padded = new Uint8Array(bytes.byteLength + 7);
  padded.set(bytes, 3);
  return [
    ['lowercase hex', digestHex],
    ['uppercase hex', digestHex.toUpperCase()],
    ['ArrayBuffer', bytes.slice().buffer],
    ['Uint8Array window', padded.subarray(3, 3 + bytes.byteLength)],
    ['DataView window', new DataView(padded.buffer, 3, bytes.byteLength)],
    ['Uint32Array', new Uint32Array(bytes.slice().buffer)],
  ];
}

/** The stored checksums of `object`: md5 (always, for a single put) and `algorithm`, as ArrayBuffers and as JSON. */
async function assertChecksums(object: StoreObject, data: string, algorithm: Algorithm, context: CaseContext, where: string): Promise<void> {
  const md5 = await context.digest('md5', data);
  const expected = { md5, [algorithm]: await context.digest(algorithm, data) };
  for (const [name] of ALGORITHMS) {
    const value = object.checksums[name];
    if (expected[name] === undefined) {
      assert.equal(value, undefined, `${where}: checksums.${name}`);
      continue;
    }
    assert.ok(value instanceof ArrayBuffer, `${where}: checksums.${name} is an ArrayBuffer`);
    assert.equal(hex(value), expected[name], `${where}: checksums.${name}`);
  }
  assert.deepEqual(object.checksums.toJSON(), expected, `${where}: toJSON()`);
  assert.equal(JSON.stringify(object.checksums), JSON.stringify(expected));
}

export const CASES: BindingCases = {
  'checksums.md5 of a put result: the MD5 of the value, as an ArrayBuffer': async ({ bucket: b, digest }) => {
    const put = (await b.put('k', 'hello world'))!;
    const md5 = put.checksums.md5;
    assert.ok(md5 instanceof ArrayBuffer);
    assert.equal(md5.byteLength, 16);
    assert.equal(hex(md5), await digest('md5', 'hello world'));
    assert.equal(hex(md5), put.etag);
    for (const name of ['sha1', 'sha256', 'sha384', 'sha512'] as const) assert.equal(put.checksums[name], undefined, name);
    const head = (await b.head('k'))!;
    assert.equal(hex(head.checksums.md5!), put.etag);
    const got = (await b.get('k'))!;
    assert.equal(hex(got.checksums.md5!), put.etag);
  },

  'every checksum option in every form: put, head, get and list answer md5 and that algorithm': async (context) => {
    const b = context.bucket;
    const data = 'checksummed';
    for (const [algorithm] of ALGORITHMS) {
      for (const [form, value] of forms(await context.digest(algorithm, data))) {
        const key = `${algorithm}/${form}`;
        const where = `${algorithm} as ${form}`;
        const put = await b.put(key, data, { [algorithm]: value } as StorePutOptions);
        assert.ok(put, where);
        await assertChecksums(put, data, algorithm, context, `put, ${where}`);
        await assertChecksums((await b.head(key))!, data, algorithm, context, `head, ${where}`);
        const got = (await b.get(key))!;
        await assertChecksums(got, data, algorithm, context, `get, ${where}`);
        await assertChecksums((await b.list({ prefix: key })).objects[0]!, data, algorithm, context, `list, ${where}`);
      }
    }
  },

  'a wrong checksum of every algorithm, as hex or bytes, is BadDigest; nothing is stored': async ({ bucket: b, digest }) => {
    for (const [algorithm, name, size] of ALGORITHMS) {
      const actual = await digest(algorithm, 'data');
      const wrong: Array<string | ArrayBuffer | ArrayBufferView> = [
        'F'.repeat(size * 2),
        new Uint8Array(size).fill(0xff).buffer,
        new Uint8Array(size).fill(0xff),
      ];
      for (const value of wrong) {
        await rejectsWith(
          b.put('bad', 'data', { [algorithm]: value } as StorePutOptions),
          Error,
          `put: The ${name} checksum you specified did not match what we received.\nYou provided a ${name} checksum with value: ${'f'.repeat(size * 2)}\nActual ${name} was: ${actual} (10037)`,
        );
      }
    }
    assert.equal(await b.head('bad'), null, 'nothing is stored on a bad digest');
    const stream = new Response('streamed').body!;
    await rejectsWith(b.put('bad', stream, { sha256: '0'.repeat(64) }), Error, /^put: The SHA-256 checksum you specified did not match/);
    assert.equal(await b.head('bad'), null);
  },

  'checksum options of the wrong size, not hex, of the wrong type, or two at once: the runtime TypeErrors, nothing stored': async ({ bucket: b }) => {
    for (const [algorithm, name, size] of ALGORITHMS) {
      const refused: Array<[unknown, string]> = [
        [new ArrayBuffer(size - 1), `${name} is ${size} bytes, not ${size - 1}`],
        [new Uint8Array(size + 1), `${name} is ${size} bytes, not ${size + 1}`],
        [new DataView(new ArrayBuffer(size * 2), 1, 3), `${name} is ${size} bytes, not 3`],
        ['a'.repeat(3), `${name} is ${size * 2} hex characters, not 3`],
        // The runtime counts a string's UTF-8 bytes: 'é' is two.
        ['é'.repeat(size * 2), `${name} is ${size * 2} hex characters, not ${size * 4}`],
        ['é'.repeat(size), `Provided ${name} wasn't a valid hex string`],
        ['g'.repeat(size * 2), `Provided ${name} wasn't a valid hex string`],
        [5, `Incorrect type for the '${algorithm}' field on 'PutOptions': the provided value is not of type 'ArrayBuffer or ArrayBufferView or string'.`],
      ];
      for (const [value, message] of refused) {
        await rejectsWith(b.put('k', 'data', { [algorithm]: value } as StorePutOptions), TypeError, message);
      }
    }
    await rejectsWith(b.put('k', 'data', { md5: 'a'.repeat(32), sha1: 'a'.repeat(40) }), TypeError, 'You cannot specify multiple hashing algorithms.');
    await rejectsWith(
      b.put('k', 'data', { sha256: new ArrayBuffer(32), sha512: new Uint8Array(64) }),
      TypeError,
      'You cannot specify multiple hashing algorithms.',
    );
    assert.equal(await b.head('k'), null);
  },

  'checksum options: every algorithm as hex (any case) or as bytes, converted to lowercase hex': () => {
    assert.equal(toExpectedChecksum({}), undefined);
    for (const [algorithm, , size] of ALGORITHMS) {
      const digitsHex = 'aB'.repeat(size);
      assert.deepEqual(toExpectedChecksum({ [algorithm]: digitsHex }), { algorithm, hex: digitsHex.toLowerCase() });
      const bytes = new Uint8Array(size + 4).fill(0xcd);
      assert.deepEqual(toExpectedChecksum({ [algorithm]: bytes.buffer.slice(0, size) }), { algorithm, hex: 'cd'.repeat(size) });
      assert.deepEqual(toExpectedChecksum({ [algorithm]: bytes.subarray(2, 2 + size) }), { algorithm, hex: 'cd'.repeat(size) }, 'a view');
      assert.deepEqual(toExpectedChecksum({ [algorithm]: new DataView(bytes.buffer, 1, size) }), { algorithm, hex: 'cd'.repeat(size) });
    }
  },

  'checksum options: two algorithms are refused after the first is validated; type errors come first': () => {
    assert.throws(() => toExpectedChecksum({ md5: 'a'.repeat(32), sha1: 'a'.repeat(40) }), { message: 'You cannot specify multiple hashing algorithms.' });
    assert.throws(() => toExpectedChecksum({ sha256: new ArrayBuffer(32), sha512: 'x' }), { message: 'You cannot specify multiple hashing algorithms.' });
    assert.throws(() => toExpectedChecksum({ md5: 'short', sha1: 'a'.repeat(40) }), { message: 'MD5 is 32 hex characters, not 5' });
    assert.throws(() => toExpectedChecksum({ md5: 'a'.repeat(32), sha1: 7 }), { message: /Incorrect type for the 'sha1' field/ });
  },

  'StoreChecksums: ArrayBuffer getters, a fresh copy each time, toJSON of the present ones': async ({ digest }) => {
    const md5 = await digest('md5', 'x');
    const sha256 = await digest('sha256', 'x');
    const checksums = new StoreChecksums({ md5, sha256 });
    const first = checksums.md5!;
    assert.ok(first instanceof ArrayBuffer);
    assert.equal(hex(first), md5);
    new Uint8Array(first).fill(0);
    assert.equal(hex(checksums.md5!), md5, 'changing a copy changes nothing');
    assert.notEqual(checksums.md5, checksums.md5);
    assert.equal(hex(checksums.sha256!), sha256);
    assert.equal(checksums.sha1, undefined);
    assert.equal(checksums.sha384, undefined);
    assert.deepEqual(checksums.toJSON(), { md5, sha256 });
    assert.equal(JSON.stringify(new StoreChecksums({})), '{}');
    const composite = new StoreChecksums({ md5: `${md5}-2`, crc32: 'abcd1234' } as never);
    assert.equal(composite.md5, undefined, "a multipart upload's composite checksum is not a digest");
    assert.deepEqual(composite.toJSON(), {}, 'CRCs kept for the S3 API stay out of sight');
  },

  'stored checksums are lowercase and replaced by an overwrite; streams and Blobs are checksummed too': async ({ bucket: b, digest }) => {
    const data = 'data';
    const md5 = await digest('md5', data);
    const sha1 = await digest('sha1', data);
    assert.deepEqual((await b.put('k', data, { sha1: sha1.toUpperCase() }))!.checksums.toJSON(), { md5, sha1 });
    await b.put('k', data, { sha384: await digest('sha384', data) });
    assert.deepEqual((await b.head('k'))!.checksums.toJSON(), { md5, sha384: await digest('sha384', data) }, 'sha1 is gone');
    await b.put('k', data, { md5 });
    assert.deepEqual((await b.head('k'))!.checksums.toJSON(), { md5 });
    const sha512 = await digest('sha512', data);
    assert.deepEqual((await b.put('stream', new Response(data).body, { sha512 }))!.checksums.toJSON(), { md5, sha512 });
    assert.deepEqual((await b.put('blob', new Blob([data]), { sha256: await digest('sha256', data) }))!.checksums.toJSON(), {
      md5,
      sha256: await digest('sha256', data),
    });
  },
};
