/**
 * What each account stores, as every MetadataStore keeps it (run by sqlite-metadata-store.test.ts
 * and pg-metadata-store.test.ts): object bytes and count exact after puts, overwrites, deletes,
 * parts, completions, aborts, expiry, bucket deletion and adoption; a write past a quota throws a
 * QuotaRefusal and keeps nothing of itself; an account's own quotas override the server's.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { AccountQuotas } from '../../src/config/quotas.ts';
import type { FakeClock } from '../../src/core/clock.ts';
import { QuotaRefusal } from '../../src/db/account-usage.ts';
import type { MetadataStore, PartRow, StoredData, UploadRow } from '../../src/db/metadata-store.ts';
import { GRACE_MS, objectMeta } from './metadata-store.case.ts';

export interface AccountUsageSuiteOptions {
  /** A fresh, empty store (reclaimGraceMs = GRACE_MS) with the server's `quotas`, closed when the test ends. */
  open(t: TestContext, clock: FakeClock, quotas: AccountQuotas): Promise<MetadataStore>;
  clock(): FakeClock;
}

const A = 'a'.repeat(32);
const B = 'b'.repeat(32);
const UNLIMITED: AccountQuotas = { maxObjectBytes: 0, maxObjects: 0, maxScriptBytes: 0, maxVersionsPerScript: 100 };
const inline = (size: number): StoredData => ({ kind: 'inline', bytes: new Uint8Array(size) });
const upload = (uploadId: string, bucket: string, key: string, created = 1000): UploadRow => ({
  uploadId,
  bucket,
  key,
  created,
  httpMetadata: {},
  customMetadata: {},
  storageClass: 'Standard',
  state: 'active',
  checksumAlgorithm: null,
});
const part = (partNumber: number, blobId: string, size: number): PartRow => ({ partNumber, etag: `etag${partNumber}`, size, blobId, uploaded: 2000 });

export function runAccountUsageSuite({ open, clock: makeClock }: AccountUsageSuiteOptions): void {
  async function setup(t: TestContext, quotas: AccountQuotas = UNLIMITED) {
    const clock = makeClock();
    const store = await open(t, clock, quotas);
    for (const name of [`${A}/files`, `${A}/more`, `${B}/files`, 'unowned']) await store.insertBucket({ name, created: 1, storageClass: 'Standard' });
    const usage = async (account: string) => {
      const { objectBytes, objectCount } = await store.accountUsage(account);
      return [objectBytes, objectCount];
    };
    const put = (bucket: string, key: string, size: number) => store.putObject(bucket, objectMeta(key, { size }), inline(size));
    return { store, clock, usage, put, reclaimable: async () => (await store.reclaimableBlobs(clock.now() + GRACE_MS, 1000)).sort() };
  }

  test("usage: puts, overwrites and deletes keep each account's bytes and count exact; buckets of no account count as ''", { timeout: 10_000 }, async (t) => {
    const { store, usage, put } = await setup(t);
    assert.deepEqual(await usage(A), [0, 0], 'an account that stored nothing');
    await put(`${A}/files`, 'k1', 10);
    await put(`${A}/more`, 'k2', 20);
    await put(`${A}/files`, 'k1', 5);
    await put(`${B}/files`, 'k1', 7);
    await put('unowned', 'k', 3);
    assert.deepEqual(await usage(A), [25, 2], "an overwrite counts the difference, across the account's buckets");
    assert.deepEqual(await usage(B), [7, 1]);
    assert.deepEqual(await usage(''), [3, 1]);
    assert.equal(await store.putObject(`${A}/files`, objectMeta('k1', { size: 99 }), inline(99), { precondition: () => false }), 'precondition-failed');
    assert.equal(await store.putObject(`${A}/gone`, objectMeta('k1', { size: 99 }), inline(99)), 'no-bucket');
    assert.deepEqual(await usage(A), [25, 2], 'a refused write charges nothing');
    await store.deleteObjects(`${A}/files`, ['k1', 'missing', 'k1']);
    assert.deepEqual(await usage(A), [20, 1], 'a delete gives its space back, once');
    await store.deleteObjects(`${A}/more`, ['k2']);
    assert.deepEqual(await usage(A), [0, 0]);
    assert.deepEqual(await usage(B), [7, 1], 'the other account is untouched');
  });

  test("usage: a conditional delete gives the object's space back only when it deletes; its blobs are reclaimed", { timeout: 10_000 }, async (t) => {
    const { store, usage, put, reclaimable } = await setup(t);
    await put(`${A}/files`, 'k1', 10);
    const blobbed = objectMeta('blobbed', { size: 30 });
    await store.putObject(`${A}/files`, blobbed, { kind: 'blob', blobId: 'blob-1' });
    assert.deepEqual(await usage(A), [40, 2]);
    assert.equal(await store.deleteObject(`${A}/files`, 'k1', () => false), 'precondition-failed');
    assert.equal(await store.deleteObject(`${A}/files`, 'missing', () => true), 'missing');
    assert.deepEqual(await usage(A), [40, 2], 'nothing deleted, nothing freed');
    let seen: string | undefined;
    assert.equal(
      await store.deleteObject(`${A}/files`, 'blobbed', (current) => {
        seen = current.version;
        return true;
      }),
      'deleted',
    );
    assert.equal(seen, blobbed.version, 'the precondition is shown the current object');
    assert.deepEqual(await usage(A), [10, 1]);
    assert.deepEqual(await reclaimable(), ['blob-1']);
    assert.equal(await store.deleteObject(`${A}/files`, 'blobbed', () => true), 'missing', 'deleted once');
    assert.deepEqual(await usage(A), [10, 1]);
  });

  test(
    'usage: parts count as they arrive; a completion makes them one object, freeing the unused and the replaced; aborts, expiry and bucket deletion free them',
    { timeout: 10_000 },
    async (t) => {
      const { store, clock, usage, put } = await setup(t);
      const bucket = `${A}/files`;
      await put(bucket, 'k', 4);
      await store.insertUpload(upload('u1', bucket, 'k'));
      await store.putPart('u1', part(1, 'p1', 100));
      await store.putPart('u1', part(2, 'p2', 50));
      await store.putPart('u1', part(2, 'p2b', 30));
      assert.deepEqual(await usage(A), [134, 1], 'a part sent again counts its new size');
      const meta = objectMeta('k', { size: 100 });
      await store.completeUpload(bucket, 'k', 'u1', (_, parts) => ({ meta, parts: [parts[0]!] }));
      assert.deepEqual(await usage(A), [100, 1], 'the object is its parts; the unused part and the replaced object are freed');
      await store.insertUpload(upload('u2', bucket, 'new'));
      await store.putPart('u2', part(1, 'q1', 8));
      await store.completeUpload(bucket, 'new', 'u2', (_, parts) => ({ meta: objectMeta('new', { size: 8 }), parts }));
      assert.deepEqual(await usage(A), [108, 2], 'a new key adds one object');

      await store.insertUpload(upload('u3', bucket, 'aborted'));
      await store.putPart('u3', part(1, 'r1', 11));
      await store.insertUpload(upload('u4', bucket, 'expired', 0));
      await store.putPart('u4', part(1, 's1', 13));
      await store.insertUpload(upload('u5', `${B}/files`, 'expired', 0));
      await store.putPart('u5', part(1, 't1', 17));
      assert.deepEqual(await usage(A), [132, 2]);
      assert.equal(await store.abortUpload(bucket, 'aborted', 'u3'), 'active');
      assert.deepEqual(await usage(A), [121, 2]);
      clock.advance(1);
      assert.equal(await store.expireUploads(500), 2);
      assert.deepEqual(await usage(A), [108, 2], "expiry frees the parts of each account's uploads");
      assert.deepEqual(await usage(B), [0, 0]);

      await store.insertUpload(upload('u6', `${A}/more`, 'open'));
      await store.putPart('u6', part(1, 'v1', 9));
      assert.deepEqual(await usage(A), [117, 2]);
      assert.equal(await store.deleteBucket(`${A}/more`), 'deleted');
      assert.deepEqual(await usage(A), [108, 2], "deleting a bucket frees its open uploads' parts");
    },
  );

  test('quotas: a write past the bytes or count quota throws a QuotaRefusal and keeps nothing; shrinking is never refused', { timeout: 10_000 }, async (t) => {
    const { store, usage, put, reclaimable } = await setup(t, { ...UNLIMITED, maxObjectBytes: 100, maxObjects: 3 });
    const bucket = `${A}/files`;
    await put(bucket, 'a', 60);
    await put(bucket, 'b', 40);
    const refusal = await put(bucket, 'c', 1).then(
      () => null,
      (error: unknown) => error,
    );
    assert.ok(refusal instanceof QuotaRefusal, String(refusal));
    assert.deepEqual([refusal.quota, refusal.limit, refusal.used, refusal.adding], ['maxObjectBytes', 100, 100, 1]);
    assert.equal(await store.headObject(bucket, 'c'), null, 'the refused put wrote nothing');
    await assert.rejects(store.putObject(bucket, objectMeta('a', { size: 61 }), { kind: 'blob', blobId: 'bigger' }), QuotaRefusal);
    assert.equal((await store.headObject(bucket, 'a'))?.size, 60, 'a refused overwrite leaves the object as it was');
    assert.deepEqual(await reclaimable(), [], 'and queues none of its data');
    await put(bucket, 'a', 50);
    await put(bucket, 'c', 10);
    assert.deepEqual(await usage(A), [100, 3], 'exactly at the quota is allowed');
    await assert.rejects(put(bucket, 'd', 0), (error: unknown) => error instanceof QuotaRefusal && error.quota === 'maxObjects' && error.used === 3);
    await put(`${B}/files`, 'other', 100);
    assert.deepEqual(await usage(B), [100, 1], 'each account has its own quota');

    // Parts: refused when they would pass the quota; a completion that adds an object past the count is refused, the upload left active.
    await store.deleteObjects(bucket, ['c']);
    await store.insertUpload(upload('u1', bucket, 'multi'));
    await store.putPart('u1', part(1, 'p1', 5));
    await assert.rejects(store.putPart('u1', part(2, 'p2', 6)), QuotaRefusal);
    assert.deepEqual(
      (await store.listParts('u1')).map((p) => p.partNumber),
      [1],
    );
    await put(bucket, 'c', 0);
    await assert.rejects(
      store.completeUpload(bucket, 'multi', 'u1', (_, parts) => ({ meta: objectMeta('multi', { size: 5 }), parts })),
      QuotaRefusal,
    );
    assert.equal((await store.getUpload(bucket, 'multi', 'u1'))?.state, 'active');
    assert.deepEqual(await usage(A), [95, 3]);
    // Onto a key that holds an object it adds none: allowed, and the replaced object is freed.
    await store.insertUpload(upload('u2', bucket, 'b'));
    await store.putPart('u2', part(1, 'q1', 5));
    await store.completeUpload(bucket, 'b', 'u2', (_, parts) => ({ meta: objectMeta('b', { size: 5 }), parts }));
    assert.deepEqual(await usage(A), [60, 3], "u1's open part (5) stays counted");
  });

  test(
    "quotas: an account's own quotas override the server's (0: no limit, null: the server's again); its row is forgotten only once it stores nothing",
    { timeout: 10_000 },
    async (t) => {
      const { store, usage, put } = await setup(t, { ...UNLIMITED, maxObjectBytes: 10, maxObjects: 5, maxScriptBytes: 7 });
      const bucket = `${A}/files`;
      let own = await store.setAccountQuotas(A, { maxObjectBytes: 0, maxScriptBytes: 3 });
      assert.deepEqual(own.quotas, { maxObjectBytes: 0, maxObjects: 5, maxScriptBytes: 3, maxVersionsPerScript: 100 });
      assert.deepEqual(own.own, { maxObjectBytes: true, maxObjects: false, maxScriptBytes: true });
      await put(bucket, 'big', 1000);
      await assert.rejects(put(`${B}/files`, 'big', 1000), QuotaRefusal, "the server's quota still binds the others");
      own = await store.setAccountQuotas(A, { maxObjects: 1 });
      assert.deepEqual([own.quotas.maxObjectBytes, own.quotas.maxObjects, own.quotas.maxScriptBytes], [0, 1, 3], 'quotas not named keep their value');
      await assert.rejects(put(bucket, 'second', 1), (error: unknown) => error instanceof QuotaRefusal && error.quota === 'maxObjects');
      own = await store.setAccountQuotas(A, { maxObjectBytes: null, maxObjects: null, maxScriptBytes: null });
      assert.deepEqual(own.own, { maxObjectBytes: false, maxObjects: false, maxScriptBytes: false });
      assert.equal(own.quotas.maxObjectBytes, 10);
      assert.deepEqual(await usage(A), [1000, 1], 'a lower quota refuses new writes only: what is stored stays');
      await store.setAccountQuotas(A, { maxObjects: 2 });
      await store.forgetAccountUsage(A);
      assert.equal((await store.accountUsage(A)).quotas.maxObjects, 2, 'not forgotten while it stores something');
      await store.deleteObjects(bucket, ['big']);
      await store.forgetAccountUsage(A);
      assert.deepEqual((await store.accountUsage(A)).own, { maxObjectBytes: false, maxObjects: false, maxScriptBytes: false });
    },
  );

  test('usage: adopting a bucket of no account moves what it holds (objects and open parts) to the adopter', { timeout: 10_000 }, async (t) => {
    const { store, usage, put } = await setup(t, { ...UNLIMITED, maxObjectBytes: 10 });
    await put('unowned', 'k', 6);
    await store.insertUpload(upload('u1', 'unowned', 'big'));
    await store.putPart('u1', part(1, 'p1', 4));
    await put(`${A}/files`, 'mine', 9);
    assert.deepEqual(await usage(''), [10, 1]);
    assert.deepEqual(await store.adoptBuckets(A), { adopted: ['unowned'], conflicts: [] });
    assert.deepEqual(await usage(''), [0, 0]);
    assert.deepEqual(await usage(A), [19, 2], 'adoption is never refused, even past the quota');
    await store.deleteObjects(`${A}/unowned`, ['k']);
    assert.deepEqual(await usage(A), [13, 1]);
  });
}
