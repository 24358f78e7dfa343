/** Put checksum options (reference §1.4, §7) and the StoreChecksums object, alone and through the engine. */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { StoreChecksums, toExpectedChecksum } from '../../../src/store/binding/checksums.ts';
import { openTestBucket, rejectsWith } from './helpers.ts';

const ALGORITHMS = [['md5', 'MD5', 16], ['sha1', 'SHA-1', 20], ['sha256', 'SHA-256', 32], ['sha384', 'SHA-384', 48], ['sha512', 'SHA-512', 64]] as const;
const hash = (algorithm: string, data: string) => createHash(algorithm).update(data).digest('hex');

test('checksum options: every algorithm as hex (any case) or as bytes', { timeout: 10_000 }, () => {
  assert.equal(toExpectedChecksum({}), undefined);
  for (const [algorithm, , size] of ALGORITHMS) {
    const hex = 'aB'.repeat(size);
    assert.deepEqual(toExpectedChecksum({ [algorithm]: hex }), { algorithm, hex: hex.toLowerCase() });
    const bytes = new Uint8Array(size + 4).fill(0xcd);
    assert.deepEqual(toExpectedChecksum({ [algorithm]: bytes.buffer.slice(0, size) }), { algorithm, hex: 'cd'.repeat(size) });
    assert.deepEqual(toExpectedChecksum({ [algorithm]: bytes.subarray(2, 2 + size) }), { algorithm, hex: 'cd'.repeat(size) }, 'a view');
    assert.deepEqual(toExpectedChecksum({ [algorithm]: new DataView(bytes.buffer, 1, size) }), { algorithm, hex: 'cd'.repeat(size) });
  }
});

test('checksum options: the runtime errors for every algorithm', { timeout: 10_000 }, () => {
  for (const [algorithm, name, size] of ALGORITHMS) {
    assert.throws(() => toExpectedChecksum({ [algorithm]: new ArrayBuffer(size - 1) }), { name: 'TypeError', message: `${name} is ${size} bytes, not ${size - 1}` });
    assert.throws(() => toExpectedChecksum({ [algorithm]: new Uint8Array(size + 1) }), { name: 'TypeError', message: `${name} is ${size} bytes, not ${size + 1}` });
    assert.throws(() => toExpectedChecksum({ [algorithm]: 'a'.repeat(3) }), { name: 'TypeError', message: `${name} is ${size * 2} hex characters, not 3` });
    assert.throws(() => toExpectedChecksum({ [algorithm]: 'g'.repeat(size * 2) }), { name: 'TypeError', message: `Provided ${name} wasn't a valid hex string` });
    assert.throws(() => toExpectedChecksum({ [algorithm]: 5 }), {
      name: 'TypeError', message: `Incorrect type for the '${algorithm}' field on 'PutOptions': the provided value is not of type 'ArrayBuffer or ArrayBufferView or string'.`,
    });
  }
});

test('checksum options: two algorithms are refused, after the first one is validated', { timeout: 10_000 }, () => {
  assert.throws(() => toExpectedChecksum({ md5: 'a'.repeat(32), sha1: 'a'.repeat(40) }), { message: 'You cannot specify multiple hashing algorithms.' });
  assert.throws(() => toExpectedChecksum({ sha256: new ArrayBuffer(32), sha512: 'x' }), { message: 'You cannot specify multiple hashing algorithms.' });
  assert.throws(() => toExpectedChecksum({ md5: 'short', sha1: 'a'.repeat(40) }), { message: 'MD5 is 32 hex characters, not 5' });
  assert.throws(() => toExpectedChecksum({ md5: 'a'.repeat(32), sha1: 7 }), { message: /Incorrect type for the 'sha1' field/ }, 'type errors come first');
});

test('StoreChecksums: ArrayBuffer getters, a fresh copy each time, toJSON of the present ones', { timeout: 10_000 }, () => {
  const md5 = hash('md5', 'x');
  const checksums = new StoreChecksums({ md5, sha256: hash('sha256', 'x') });
  const first = checksums.md5!;
  assert.ok(first instanceof ArrayBuffer);
  assert.equal(Buffer.from(first).toString('hex'), md5);
  new Uint8Array(first).fill(0);
  assert.equal(Buffer.from(checksums.md5!).toString('hex'), md5, 'changing a copy changes nothing');
  assert.notEqual(checksums.md5, checksums.md5);
  assert.equal(checksums.sha1, undefined);
  assert.equal(checksums.sha384, undefined);
  assert.deepEqual(checksums.toJSON(), { md5, sha256: hash('sha256', 'x') });
  assert.equal(JSON.stringify(new StoreChecksums({})), '{}');
});

test('through the engine: stored checksums, lowercase, replaced on overwrite; BadDigest per algorithm', { timeout: 10_000 }, async (t) => {
  const { bucketBinding: b } = await openTestBucket(t);
  const put = await b.put('k', 'data', { sha1: hash('sha1', 'data').toUpperCase() });
  assert.deepEqual(put!.checksums.toJSON(), { md5: hash('md5', 'data'), sha1: hash('sha1', 'data') });
  assert.deepEqual((await b.head('k'))!.checksums.toJSON(), { md5: hash('md5', 'data'), sha1: hash('sha1', 'data') });
  await b.put('k', 'data', { sha384: Buffer.from(hash('sha384', 'data'), 'hex') });
  assert.deepEqual((await b.head('k'))!.checksums.toJSON(), { md5: hash('md5', 'data'), sha384: hash('sha384', 'data') });
  await b.put('k', 'data', { md5: hash('md5', 'data') });
  assert.deepEqual((await b.head('k'))!.checksums.toJSON(), { md5: hash('md5', 'data') });
  for (const [algorithm, name, size] of ALGORITHMS) {
    await rejectsWith(b.put('bad', 'data', { [algorithm]: 'F'.repeat(size * 2) }), Error,
      `put: The ${name} checksum you specified did not match what we received.\nYou provided a ${name} checksum with value: ${'f'.repeat(size * 2)}\nActual ${name} was: ${hash(algorithm, 'data')} (10037)`);
  }
  assert.equal(await b.head('bad'), null, 'nothing is stored on a bad digest');
  const stream = new Response('streamed').body!;
  await rejectsWith(b.put('bad', stream, { sha256: '0'.repeat(64) }), Error, /^put: The SHA-256 checksum you specified did not match/);
});
