/**
 * accountStore: one account's view of the engine. Names are the account's own; a name holding `/`
 * never reaches the engine (it could otherwise name a bucket under another account's id); the
 * view of no account sees only buckets of no account.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { accountStore, storedBucketName } from '../../../src/store/engine/account-store.ts';
import { openTestEngine } from '../../helpers/engine.ts';

const A = 'a'.repeat(32);
const B = 'b'.repeat(32);
const missingBucket = { name: 'StoreError', code: 'STORE_NO_SUCH_BUCKET' };

test("buckets: created, got and listed under the account's own names; stored under the account's id", { timeout: 10_000 }, async (t) => {
  const { engine } = await openTestEngine(t);
  const a = accountStore(engine, A);
  const b = accountStore(engine, B);
  assert.deepEqual((await a.createBucket('photos', { storageClass: 'InfrequentAccess' })).name, 'photos');
  await b.createBucket('photos');
  await a.createBucket('docs');
  assert.deepEqual(
    (await a.listBuckets()).map((x) => [x.name, x.storageClass]),
    [
      ['docs', 'Standard'],
      ['photos', 'InfrequentAccess'],
    ],
  );
  assert.deepEqual(
    (await b.listBuckets()).map((x) => x.name),
    ['photos'],
  );
  assert.equal((await engine.getBucket(storedBucketName(A, 'photos')))?.storageClass, 'InfrequentAccess');
  assert.deepEqual(
    (await accountStore(engine, null).listBuckets()).map((x) => x.name),
    ['test-bucket'],
    "the fixture's bucket is of no account",
  );
  await assert.rejects(a.createBucket('photos'), { code: 'STORE_BUCKET_ALREADY_EXISTS' });
  assert.equal((await a.ensureBucket('photos')).name, 'photos');
  await assert.rejects(a.createBucket(`${B}/photos`), { code: 'STORE_INVALID_BUCKET_NAME' });
  await b.deleteBucket('photos');
  assert.equal((await a.getBucket('photos'))?.name, 'photos', 'B deleted its own photos only');
});

test('objects and uploads stay in their account; a name with a slash names no bucket', { timeout: 10_000 }, async (t) => {
  const { engine } = await openTestEngine(t);
  const a = accountStore(engine, A);
  const b = accountStore(engine, B);
  const none = accountStore(engine, null);
  await a.createBucket('photos');
  await a.put('photos', 'k', new TextEncoder().encode('A'));
  await assert.rejects(b.head('photos', 'k'), missingBucket);
  await assert.rejects(b.put('photos', 'k', new Uint8Array(1)), missingBucket);
  await assert.rejects(b.createMultipartUpload('photos', 'big'), missingBucket);
  // The view of no account adds no prefix: a slash would let it name A's bucket.
  for (const view of [none, b]) {
    assert.equal(await view.getBucket(`${A}/photos`), null);
    await assert.rejects(view.get(`${A}/photos`, 'k'), missingBucket);
    await assert.rejects(view.delete(`${A}/photos`, ['k']), missingBucket);
    await assert.rejects(view.deleteBucket(`${A}/photos`), missingBucket);
  }
  const upload = await a.createMultipartUpload('photos', 'big');
  // As for any bucket that does not exist: the engine finds no such upload there.
  await assert.rejects(b.uploadPart('photos', 'big', upload, 1, new Uint8Array(1)), { code: 'STORE_NO_SUCH_UPLOAD' });
  await assert.rejects(b.completeMultipartUpload('photos', 'big', upload, []), { code: 'STORE_NO_SUCH_UPLOAD' });
  assert.deepEqual(
    (await a.listUploads('photos')).map((u) => u.uploadId),
    [upload],
  );
  assert.equal((await a.head('photos', 'k'))?.size, 1);
  assert.equal(await none.expireUploads(), 0, "maintenance is the server's, never a view's");
  assert.throws(() => accountStore(engine, 'not-an-id'), /Not an account id/);
});
