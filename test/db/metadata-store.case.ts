/**
 * The MetadataStore contract, run against each implementation (sqlite-metadata-store.test.ts,
 * pg-metadata-store.test.ts): buckets, objects and their data, listing order and bounds, uploads
 * and parts, the reclaim queue with its grace period, and S3 access keys.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { FakeClock } from '../../src/core/clock.ts';
import { randomHexId } from '../../src/core/ids.ts';
import type { AccessKeyRow, ListQuery, MetadataStore, PartRow, StoredData, UploadRow } from '../../src/db/metadata-store.ts';
import type { CorsRule } from '../../src/store/engine/cors.ts';
import type { ObjectMeta } from '../../src/store/engine/types.ts';

/** Every suite store is opened with this grace period. */
export const GRACE_MS = 60_000;

export interface MetadataStoreSuiteOptions {
  /** A fresh, empty store (reclaimGraceMs = GRACE_MS) on `clock`, closed when the test ends. */
  open(t: TestContext, clock: FakeClock): Promise<MetadataStore>;
  /** Makes the clock the suite moves. */
  clock(): FakeClock;
}

export const objectMeta = (key: string, over: Partial<ObjectMeta> = {}): ObjectMeta => ({
  key,
  version: randomHexId(),
  size: 1,
  etag: 'e0',
  uploaded: 1000,
  httpMetadata: {},
  customMetadata: {},
  checksums: { md5: 'e0' },
  storageClass: 'Standard',
  ...over,
});
const inline = (text: string): StoredData => ({ kind: 'inline', bytes: new TextEncoder().encode(text) });
const upload = (uploadId: string, key: string, over: Partial<UploadRow> = {}): UploadRow => ({
  uploadId,
  bucket: 'b1',
  key,
  created: 1000,
  httpMetadata: { contentType: 'a/b' },
  customMetadata: { c: 'd' },
  storageClass: 'Standard',
  state: 'active',
  checksumAlgorithm: null,
  ...over,
});
const part = (partNumber: number, blobId: string, size = 10): PartRow => ({ partNumber, etag: `etag${partNumber}`, size, blobId, uploaded: 2000 });
const list = (over: Partial<ListQuery> = {}): ListQuery => ({ limit: 1000, withHttpMetadata: false, withCustomMetadata: false, ...over });
/** The bytes of inline data (as a Buffer, whatever view the store returned), or fails. */
const inlineBytes = (data: StoredData | undefined): Buffer => {
  assert.equal(data?.kind, 'inline');
  const { bytes } = data as { bytes: Uint8Array };
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
};
const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

export function runMetadataStoreSuite({ open, clock: makeClock }: MetadataStoreSuiteOptions): void {
  async function setup(t: TestContext) {
    const clock = makeClock();
    const store = await open(t, clock);
    await store.insertBucket({ name: 'b1', created: 1, storageClass: 'Standard' });
    /** What the reclaim queue releases once the grace period of everything queued so far has passed. */
    const reclaimable = async () => (await store.reclaimableBlobs(clock.now() + GRACE_MS, 1000)).sort();
    return { store, clock, reclaimable };
  }

  test('buckets: inserted once, listed by name, deleted only when empty of objects; its uploads go with it', { timeout: 10_000 }, async (t) => {
    const { store, reclaimable } = await setup(t);
    assert.equal(await store.insertBucket({ name: 'a-bucket', created: 5, storageClass: 'InfrequentAccess' }), true);
    assert.equal(await store.insertBucket({ name: 'a-bucket', created: 6, storageClass: 'Standard' }), false);
    assert.deepEqual(await store.getBucket('a-bucket'), { name: 'a-bucket', created: 5, storageClass: 'InfrequentAccess' });
    assert.equal(await store.getBucket('nope'), null);
    assert.deepEqual(
      (await store.listBuckets()).map((b) => b.name),
      ['a-bucket', 'b1'],
    );
    assert.equal(await store.deleteBucket('nope'), 'missing');
    await store.putObject('b1', objectMeta('k'), inline('x'));
    assert.equal(await store.deleteBucket('b1'), 'not-empty');
    await store.insertUpload(upload('u1', 'k'));
    await store.putPart('u1', part(1, 'p1'));
    await store.putPart('u1', part(2, 'p2'));
    await store.insertUpload(upload('u2', 'k2'));
    await store.insertUpload(upload('u3', 'k3'));
    assert.equal(await store.abortUpload('b1', 'k3', 'u3'), 'active');
    assert.equal(await store.deleteBucket('b1'), 'not-empty', 'objects keep the bucket');
    assert.deepEqual(await store.listParts('u1'), [part(1, 'p1'), part(2, 'p2')], 'a refused deletion aborts nothing');
    await store.deleteObjects('b1', ['k']);
    assert.equal(await store.deleteBucket('b1'), 'deleted', 'open uploads do not');
    assert.equal(await store.deleteBucket('b1'), 'missing');
    assert.deepEqual(
      (await store.listBuckets()).map((b) => b.name),
      ['a-bucket'],
    );
    // The uploads, aborted or not, left no rows; their parts' blobs are queued.
    for (const [id, key] of [
      ['u1', 'k'],
      ['u2', 'k2'],
      ['u3', 'k3'],
    ] as const)
      assert.equal(await store.getUpload('b1', key, id), null, id);
    assert.deepEqual(await store.listParts('u1'), []);
    assert.deepEqual([...(await store.referencedBlobIds())], []);
    assert.deepEqual((await reclaimable()).sort(), ['p1', 'p2']);
    // A bucket made again under the name starts with no uploads.
    assert.equal(await store.insertBucket({ name: 'b1', created: 7, storageClass: 'Standard' }), true);
    assert.deepEqual(await store.listUploads('b1', ''), []);
  });

  test('deleting a bucket with more uploads than one batch drops them all', { timeout: 20_000 }, async (t) => {
    const { store, reclaimable } = await setup(t);
    const ids = Array.from({ length: 1_100 }, (_, i) => `many-${String(i).padStart(4, '0')}`);
    await Promise.all(ids.map((id) => store.insertUpload(upload(id, id))));
    await Promise.all(ids.slice(0, 600).map((id) => store.putPart(id, part(1, `blob-${id}`))));
    assert.equal(await store.deleteBucket('b1'), 'deleted');
    assert.equal(await store.getBucket('b1'), null);
    assert.deepEqual(await store.listParts(ids[599]!), []);
    for (const id of [ids[0]!, ids[499]!, ids[500]!, ids[1_099]!]) assert.equal(await store.getUpload('b1', id, id), null, id);
    assert.equal((await reclaimable()).length, 600);
  });

  test('objects: inline, blob and multipart data round-trip with their metadata', { timeout: 10_000 }, async (t) => {
    const { store } = await setup(t);
    const full = objectMeta('full', {
      size: 3,
      etag: 'abc',
      uploaded: Date.UTC(2026, 0, 1),
      httpMetadata: { contentType: 'text/plain', cacheExpiry: 1234 },
      customMetadata: { 'x-1': 'é', b: '' },
      checksums: { md5: 'abc', sha256: 'def' },
      storageClass: 'InfrequentAccess',
    });
    assert.equal(await store.putObject('b1', full, inline('abc')), 'written');
    assert.deepEqual(await store.headObject('b1', 'full'), full);
    const got = await store.getObject('b1', 'full');
    assert.deepEqual(got?.meta, full);
    assert.deepEqual(inlineBytes(got?.data), Buffer.from('abc'));

    await store.putObject('b1', objectMeta('empty', { size: 0 }), inline(''));
    assert.deepEqual(inlineBytes((await store.getObject('b1', 'empty'))?.data), Buffer.alloc(0));
    const binary = new Uint8Array(256).map((_, i) => i);
    await store.putObject('b1', objectMeta('binary', { size: 199 }), { kind: 'inline', bytes: binary.subarray(1, 200) });
    assert.deepEqual(inlineBytes((await store.getObject('b1', 'binary'))?.data), Buffer.from(binary.subarray(1, 200)));

    await store.putObject('b1', objectMeta('blob'), { kind: 'blob', blobId: 'blob-1' });
    assert.deepEqual((await store.getObject('b1', 'blob'))?.data, { kind: 'blob', blobId: 'blob-1' });
    const parts = [
      { blobId: 'p-1', size: 5 },
      { blobId: 'p-2', size: 3 },
    ];
    await store.putObject('b1', objectMeta('multi', { size: 8 }), { kind: 'parts', parts });
    assert.deepEqual((await store.getObject('b1', 'multi'))?.data, { kind: 'parts', parts });
    await store.putObject('b1', objectMeta('no-parts', { size: 0 }), { kind: 'parts', parts: [] });
    assert.deepEqual((await store.getObject('b1', 'no-parts'))?.data, { kind: 'parts', parts: [] });

    assert.equal(await store.headObject('b1', 'missing'), null);
    assert.equal(await store.getObject('b1', 'missing'), null);
    assert.equal(await store.headObject('other', 'full'), null);
    assert.deepEqual([...(await store.referencedBlobIds())].sort(), ['blob-1', 'p-1', 'p-2']);
  });

  test("a replaced object's blob and parts are reclaimed only after the grace period; inline bodies just go", { timeout: 10_000 }, async (t) => {
    const { store, clock, reclaimable } = await setup(t);
    await store.putObject('b1', objectMeta('k'), { kind: 'blob', blobId: 'old-blob' });
    await store.putObject('b1', objectMeta('k'), {
      kind: 'parts',
      parts: [
        { blobId: 'old-p1', size: 1 },
        { blobId: 'old-p2', size: 1 },
      ],
    });
    assert.deepEqual(await store.reclaimableBlobs(clock.now() + GRACE_MS - 1, 100), []);
    assert.deepEqual(await store.reclaimableBlobs(clock.now() + GRACE_MS, 100), ['old-blob']);
    clock.advance(1000);
    await store.putObject('b1', objectMeta('k'), inline('now inline'));
    assert.deepEqual(await store.reclaimableBlobs(clock.now() + GRACE_MS - 1, 100), ['old-blob']);
    assert.deepEqual(await reclaimable(), ['old-blob', 'old-p1', 'old-p2']);
    await store.putObject('b1', objectMeta('k'), { kind: 'blob', blobId: 'new-blob' });
    assert.deepEqual(await reclaimable(), ['old-blob', 'old-p1', 'old-p2']);
    assert.deepEqual([...(await store.referencedBlobIds())], ['new-blob']);
    assert.deepEqual((await store.getObject('b1', 'k'))?.data, { kind: 'blob', blobId: 'new-blob' });
  });

  test('a put or a new upload into a bucket that is gone writes nothing and says so', { timeout: 10_000 }, async (t) => {
    const { store } = await setup(t);
    assert.equal(await store.putObject('gone', objectMeta('k'), { kind: 'blob', blobId: 'orphan' }), 'no-bucket');
    assert.equal(await store.insertUpload(upload('u-gone', 'k', { bucket: 'gone' })), false);
    assert.equal(await store.headObject('gone', 'k'), null);
    assert.equal(await store.getUpload('gone', 'k', 'u-gone'), null);
    assert.deepEqual([...(await store.referencedBlobIds())], []);
    assert.equal(await store.insertUpload(upload('u-here', 'k')), true);
  });

  test("a put that named no storage class takes its bucket's, as the bucket is at the commit", { timeout: 10_000 }, async (t) => {
    const { store } = await setup(t);
    assert.equal(await store.insertBucket({ name: 'cold', created: 1, storageClass: 'InfrequentAccess' }), true);
    const assumed = objectMeta('k', { storageClass: 'Standard' });
    assert.equal(await store.putObject('cold', assumed, inline('x'), { classOfBucket: true }), 'written');
    assert.equal(assumed.storageClass, 'InfrequentAccess', 'the meta handed back says what was stored');
    assert.equal((await store.headObject('cold', 'k'))?.storageClass, 'InfrequentAccess');
    assert.equal(await store.putObject('cold', objectMeta('named', { storageClass: 'Standard' }), inline('y')), 'written');
    assert.equal((await store.headObject('cold', 'named'))?.storageClass, 'Standard', 'a class the put named is kept');
  });

  test(
    "a bucket's default storage class changes; its usage counts objects, bytes and active uploads, reading at most maxRows",
    { timeout: 10_000 },
    async (t) => {
      const { store } = await setup(t);
      assert.deepEqual(await store.setBucketStorageClass('b1', 'InfrequentAccess'), { name: 'b1', created: 1, storageClass: 'InfrequentAccess' });
      assert.equal((await store.getBucket('b1'))?.storageClass, 'InfrequentAccess');
      assert.equal(await store.setBucketStorageClass('nope', 'Standard'), null);
      assert.deepEqual(await store.bucketUsage('b1', 100), { objectCount: 0, payloadSize: 0, metadataSize: 0, uploadCount: 0, complete: true });
      assert.equal(await store.bucketUsage('nope', 100), null);
      await store.insertBucket({ name: 'b2', created: 1, storageClass: 'Standard' });
      await store.putObject('b2', objectMeta('elsewhere', { size: 999 }), inline('z'));
      await store.putObject('b1', objectMeta('a', { size: 10, customMetadata: { k: 'v' } }), inline('x'));
      await store.putObject('b1', objectMeta('b', { size: 32 }), inline('y'));
      await store.putObject('b1', objectMeta('a', { size: 5 }), inline('x'));
      await store.insertUpload(upload('u1', 'c'));
      await store.insertUpload(upload('u2', 'd', { state: 'aborted' }));
      const usage = (await store.bucketUsage('b1', 100))!;
      assert.deepEqual(
        { ...usage, metadataSize: usage.metadataSize > 0 },
        { objectCount: 2, payloadSize: 37, metadataSize: true, uploadCount: 1, complete: true },
      );
      const bounded = (await store.bucketUsage('b1', 1))!;
      assert.deepEqual([bounded.objectCount, bounded.uploadCount, bounded.complete], [1, 1, false]);
      // A folder: only the keys starting with the prefix (in byte order, so `a/` holds `a/\u{10FFFF}` but not `a0` or `a`).
      await store.putObject('b1', objectMeta('a/1', { size: 100 }), inline('1'));
      await store.putObject('b1', objectMeta('a/2/deep', { size: 200 }), inline('2'));
      await store.putObject('b1', objectMeta('a/\u{10FFFF}', { size: 400 }), inline('3'));
      await store.putObject('b1', objectMeta('a0', { size: 800 }), inline('4'));
      await store.insertUpload(upload('u3', 'a/big'));
      const folder = (await store.bucketUsage('b1', 100, 'a/'))!;
      assert.deepEqual([folder.objectCount, folder.payloadSize, folder.uploadCount, folder.complete], [3, 700, 1, true]);
      assert.deepEqual([(await store.bucketUsage('b1', 100, 'a/2/'))!.objectCount, (await store.bucketUsage('b1', 100, 'zzz/'))!.objectCount], [1, 0]);
      assert.equal((await store.bucketUsage('b1', 100, ''))!.objectCount, 6, 'an empty prefix is the whole bucket');
    },
  );

  test('a precondition sees the current object (or null) and, when it refuses, nothing is written', { timeout: 10_000 }, async (t) => {
    const { store, reclaimable } = await setup(t);
    const seen: Array<ObjectMeta | null> = [];
    assert.equal(
      await store.putObject(
        'b1',
        objectMeta('k', { etag: 'one' }),
        { kind: 'blob', blobId: 'b-one' },
        {
          precondition: (current) => {
            seen.push(current);
            return current === null;
          },
        },
      ),
      'written',
    );
    const first = await store.headObject('b1', 'k');
    assert.equal(
      await store.putObject(
        'b1',
        objectMeta('k', { etag: 'two' }),
        { kind: 'blob', blobId: 'b-two' },
        {
          precondition: (current) => {
            seen.push(current);
            return current === null;
          },
        },
      ),
      'precondition-failed',
    );
    assert.deepEqual(seen, [null, first]);
    assert.equal((await store.headObject('b1', 'k'))?.etag, 'one');
    assert.deepEqual([...(await store.referencedBlobIds())], ['b-one']);
    assert.deepEqual(await reclaimable(), [], 'the refused put queues nothing (its caller discards its blob)');
    assert.equal(
      await store.putObject('b1', objectMeta('k', { etag: 'three' }), inline('3'), { precondition: (current) => current?.etag === 'one' }),
      'written',
    );
    assert.equal((await store.headObject('b1', 'k'))?.etag, 'three');
    assert.deepEqual(await reclaimable(), ['b-one']);
  });

  test('deleteObjects: many keys at once, missing and repeated keys are fine, blobs and parts are reclaimed', { timeout: 10_000 }, async (t) => {
    const { store, reclaimable } = await setup(t);
    await store.putObject('b1', objectMeta('a'), { kind: 'blob', blobId: 'blob-a' });
    await store.putObject('b1', objectMeta('b'), { kind: 'parts', parts: [{ blobId: 'part-b', size: 1 }] });
    await store.putObject('b1', objectMeta('c'), inline('c'));
    await store.putObject('b1', objectMeta('keep'), inline('k'));
    await store.deleteObjects('b1', ['a', 'b', 'c', 'a', 'missing']);
    await store.deleteObjects('b1', []);
    await store.deleteObjects('other-bucket', ['keep']);
    assert.deepEqual(
      (await store.listObjects('b1', list())).map((row) => row.key),
      ['keep'],
    );
    assert.deepEqual(await reclaimable(), ['blob-a', 'part-b']);
    assert.deepEqual([...(await store.referencedBlobIds())], []);
    await store.putObject('b1', objectMeta('c'), inline('again'));
    assert.deepEqual(inlineBytes((await store.getObject('b1', 'c'))?.data), Buffer.from('again'));
  });

  test('list: UTF-8 byte order for any Unicode key (U+0000 too), prefix bounds, after, limit, include flags', { timeout: 10_000 }, async (t) => {
    const { store } = await setup(t);
    const keys = [
      'a',
      'a\u0000',
      'a\u0000b',
      'a/b',
      'ab',
      'b',
      'u\uFF61',
      'u\u{1F600}',
      'u\uE000',
      '\u{10FFFF}',
      '',
      'é',
      'e\u0301',
      'a\u{10FFFF}',
      'a\u{10FFFF}\u{10FFFF}',
    ];
    for (const key of keys) {
      await store.putObject('b1', objectMeta(key, { httpMetadata: { contentType: `t/${key.length}` }, customMetadata: { k: key } }), inline(key));
    }
    await store.insertBucket({ name: 'b2', created: 1, storageClass: 'Standard' });
    await store.putObject('b2', objectMeta('a'), inline('other bucket'));
    const sorted = [...keys].sort(byteOrder);
    const listed = async (query: Partial<ListQuery>) => (await store.listObjects('b1', list(query))).map((row) => row.key);

    assert.deepEqual(await listed({}), sorted);
    for (const key of keys) assert.equal((await store.headObject('b1', key))?.key, key);
    assert.deepEqual(
      await listed({ prefix: 'a' }),
      sorted.filter((k) => k.startsWith('a')),
    );
    assert.deepEqual(await listed({ prefix: 'a\u0000' }), ['a\u0000', 'a\u0000b']);
    assert.deepEqual(await listed({ prefix: 'a\u{10FFFF}' }), ['a\u{10FFFF}', 'a\u{10FFFF}\u{10FFFF}']);
    assert.deepEqual(await listed({ prefix: 'u' }), ['u\uE000', 'u\uFF61', 'u\u{1F600}']);
    assert.deepEqual(await listed({ prefix: 'zz' }), []);
    assert.deepEqual(await listed({ after: 'a/b' }), sorted.slice(sorted.indexOf('a/b') + 1));
    assert.deepEqual(
      await listed({ after: 'a/b', prefix: 'a' }),
      sorted.filter((k) => k.startsWith('a') && byteOrder(k, 'a/b') > 0),
    );
    assert.deepEqual(await listed({ after: 'a', prefix: 'b' }), ['b'], 'after below the prefix');
    assert.deepEqual(await listed({ after: 'c', prefix: 'b' }), [], 'after beyond the prefix');
    assert.deepEqual(await listed({ after: '\u{10FFFF}' }), []);
    assert.deepEqual(await listed({ limit: 3 }), sorted.slice(0, 3));
    assert.deepEqual(await listed({ limit: 2, after: sorted[2]! }), sorted.slice(3, 5));
    // UTF-16 and UTF-8 orders disagree here: U+FF00 sorts after U+10000's surrogates but before its bytes.
    await store.putObject('b1', objectMeta('\uFF00x'), inline('x'));
    await store.putObject('b1', objectMeta('\u{10000}a'), inline('x'));
    assert.deepEqual(await listed({ prefix: '\u{10000}', after: '\uFF00' }), ['\u{10000}a']);
    assert.deepEqual(await listed({ prefix: '\uFF00', after: '\u{10000}' }), []);

    const [plain] = await store.listObjects('b1', list({ prefix: 'b' }));
    assert.equal(plain?.httpMetadata, undefined);
    assert.equal(plain?.customMetadata, undefined);
    const meta = (await store.headObject('b1', 'b'))!;
    assert.deepEqual(plain, { ...meta, httpMetadata: undefined, customMetadata: undefined });
    const [http] = await store.listObjects('b1', list({ prefix: 'b', withHttpMetadata: true }));
    assert.deepEqual([http?.httpMetadata, http?.customMetadata], [{ contentType: 't/1' }, undefined]);
    const [custom] = await store.listObjects('b1', list({ prefix: 'b', withCustomMetadata: true }));
    assert.deepEqual([custom?.httpMetadata, custom?.customMetadata], [undefined, { k: 'b' }]);
    const [both] = await store.listObjects('b1', list({ prefix: 'b', withHttpMetadata: true, withCustomMetadata: true }));
    assert.deepEqual(both, meta);
  });

  test('uploads: get only under their bucket and key, parts replace each other, active uploads listed by prefix', { timeout: 10_000 }, async (t) => {
    const { store, reclaimable } = await setup(t);
    await store.insertUpload(upload('u1', 'dir/x'));
    await store.insertUpload(upload('u2', 'dir/\u0000y', { created: 1500 }));
    await store.insertUpload(upload('u3', 'other', { created: 900 }));
    await store.insertUpload(upload('u4', 'dir/x', { created: 2000 }));
    assert.deepEqual(await store.getUpload('b1', 'dir/x', 'u1'), upload('u1', 'dir/x'));
    assert.equal(await store.getUpload('b1', 'dir/y', 'u1'), null);
    assert.equal(await store.getUpload('b2', 'dir/x', 'u1'), null);
    assert.equal(await store.getUpload('b1', 'dir/x', 'nope'), null);
    assert.deepEqual(
      (await store.listUploads('b1', '')).map((u) => u.uploadId),
      ['u2', 'u1', 'u4', 'u3'],
    );
    assert.deepEqual(
      (await store.listUploads('b1', 'dir/x')).map((u) => u.uploadId),
      ['u1', 'u4'],
    );
    assert.deepEqual(await store.listUploads('b2', ''), []);

    assert.equal(await store.putPart('u1', part(2, 'blob-2')), true);
    assert.equal(await store.putPart('u1', part(1, 'blob-1a')), true);
    assert.equal(await store.putPart('u1', { ...part(1, 'blob-1b', 20), etag: 'new' }), true);
    assert.equal(await store.putPart('nope', part(1, 'blob-x')), false);
    assert.deepEqual(await store.listParts('u1'), [{ ...part(1, 'blob-1b', 20), etag: 'new' }, part(2, 'blob-2')]);
    assert.deepEqual(await store.listParts('u4'), []);
    assert.deepEqual(await reclaimable(), ['blob-1a']);
    assert.deepEqual([...(await store.referencedBlobIds())].sort(), ['blob-1b', 'blob-2']);

    assert.equal(await store.abortUpload('b1', 'dir/x', 'u4'), 'active');
    assert.equal(await store.putPart('u4', part(1, 'late')), false);
    assert.deepEqual(
      (await store.listUploads('b1', 'dir/')).map((u) => u.uploadId),
      ['u2', 'u1'],
    );
    assert.equal((await store.getUpload('b1', 'dir/x', 'u4'))?.state, 'aborted');

    // An upload's checksum algorithm and its parts' checksums are kept; a replaced part takes its new one.
    await store.insertUpload(upload('u5', 'sums', { checksumAlgorithm: 'crc32c' }));
    assert.deepEqual(await store.getUpload('b1', 'sums', 'u5'), upload('u5', 'sums', { checksumAlgorithm: 'crc32c' }));
    await store.putPart('u5', { ...part(1, 'sum-1'), checksum: '0a0b0c0d' });
    await store.putPart('u5', { ...part(1, 'sum-1b'), checksum: 'e3069283' });
    await store.putPart('u5', part(2, 'sum-2'));
    assert.deepEqual(await store.listParts('u5'), [{ ...part(1, 'sum-1b'), checksum: 'e3069283' }, part(2, 'sum-2')]);
  });

  test('completeUpload: the plan sees the upload and its parts; unused parts and the replaced object are reclaimed', { timeout: 10_000 }, async (t) => {
    const { store, reclaimable } = await setup(t);
    await store.putObject('b1', objectMeta('k'), { kind: 'blob', blobId: 'replaced' });
    await store.insertUpload(upload('u1', 'k'));
    for (const n of [1, 2, 3]) await store.putPart('u1', part(n, `p${n}`));
    let seen: [UploadRow | null, PartRow[]] | undefined;
    const meta = objectMeta('k', { size: 20, etag: 'multi-2' });
    const done = await store.completeUpload('b1', 'k', 'u1', (u, parts) => {
      seen = [u, parts];
      return { meta, parts: [parts[0]!, parts[2]!] };
    });
    assert.deepEqual(done, meta);
    assert.deepEqual(seen, [upload('u1', 'k'), [part(1, 'p1'), part(2, 'p2'), part(3, 'p3')]]);
    assert.deepEqual(await store.getObject('b1', 'k'), {
      meta,
      data: {
        kind: 'parts',
        parts: [
          { blobId: 'p1', size: 10 },
          { blobId: 'p3', size: 10 },
        ],
      },
    });
    assert.deepEqual(await reclaimable(), ['p2', 'replaced']);
    assert.deepEqual([...(await store.referencedBlobIds())].sort(), ['p1', 'p3']);
    assert.equal((await store.getUpload('b1', 'k', 'u1'))?.state, 'completed');
    assert.deepEqual(await store.listParts('u1'), []);
    assert.deepEqual(await store.listUploads('b1', ''), []);
    assert.equal(await store.putPart('u1', part(4, 'late')), false);

    // Completing again: the plan sees the upload as completed (and no parts), and may refuse.
    await assert.rejects(
      store.completeUpload('b1', 'k', 'u1', (u, parts) => {
        assert.equal(u?.state, 'completed');
        assert.deepEqual(parts, []);
        throw new Error('refused');
      }),
      /refused/,
    );
    assert.equal(await store.abortUpload('b1', 'k', 'u1'), 'completed');
    assert.equal(await store.abortUpload('b1', 'k', 'nope'), null);
  });

  test(
    "completeUpload: a completed object keeps its parts' checksums (S3 GetObjectAttributes lists them), and a put of multipart data too",
    { timeout: 10_000 },
    async (t) => {
      const { store } = await setup(t);
      await store.insertUpload(upload('u1', 'sums', { checksumAlgorithm: 'sha256' }));
      await store.putPart('u1', { ...part(1, 'p1'), checksum: 'aa01' });
      await store.putPart('u1', { ...part(2, 'p2', 3), checksum: 'bb02' });
      const meta = objectMeta('sums', { size: 13, etag: 'multi-2' });
      await store.completeUpload('b1', 'sums', 'u1', (_, parts) => ({ meta, parts }));
      assert.deepEqual((await store.getObject('b1', 'sums'))?.data, {
        kind: 'parts',
        parts: [
          { blobId: 'p1', size: 10, checksum: 'aa01' },
          { blobId: 'p2', size: 3, checksum: 'bb02' },
        ],
      });
      // Replacing the object drops its part rows, checksums and all.
      await store.putObject('b1', objectMeta('sums'), {
        kind: 'parts',
        parts: [
          { blobId: 'q1', size: 4, checksum: 'cc03' },
          { blobId: 'q2', size: 4 },
        ],
      });
      assert.deepEqual((await store.getObject('b1', 'sums'))?.data, {
        kind: 'parts',
        parts: [
          { blobId: 'q1', size: 4, checksum: 'cc03' },
          { blobId: 'q2', size: 4 },
        ],
      });
    },
  );

  test('completeUpload: the plan gets null for another key or a missing upload, and a refusal changes nothing', { timeout: 10_000 }, async (t) => {
    const { store, reclaimable } = await setup(t);
    await store.putObject('b1', objectMeta('k', { etag: 'before' }), inline('before'));
    await store.insertUpload(upload('u1', 'k'));
    await store.putPart('u1', part(1, 'p1'));
    const plans: Array<[UploadRow | null, PartRow[]]> = [];
    const refuse = (u: UploadRow | null, parts: PartRow[]) => {
      plans.push([u, parts]);
      throw new Error('no');
    };
    await assert.rejects(store.completeUpload('b1', 'other', 'u1', refuse), /no/);
    await assert.rejects(store.completeUpload('b1', 'k', 'missing', refuse), /no/);
    await assert.rejects(store.completeUpload('b1', 'k', 'u1', refuse), /no/);
    assert.deepEqual(plans, [
      [null, []],
      [null, []],
      [upload('u1', 'k'), [part(1, 'p1')]],
    ]);
    // A precondition the current object fails: null, and nothing changes either.
    const seen: Array<string | undefined> = [];
    const plan = (u: UploadRow | null, parts: PartRow[]) => ({ meta: objectMeta('k', { etag: 'after' }), parts: u ? parts : [] });
    assert.equal(
      await store.completeUpload('b1', 'k', 'u1', plan, (current) => {
        seen.push(current?.etag);
        return false;
      }),
      null,
    );
    assert.deepEqual(seen, ['before']);
    assert.equal((await store.headObject('b1', 'k'))?.etag, 'before');
    assert.deepEqual(await store.listParts('u1'), [part(1, 'p1')]);
    assert.equal((await store.getUpload('b1', 'k', 'u1'))?.state, 'active');
    assert.deepEqual(await reclaimable(), []);
  });

  test(
    'a completed upload keeps what it made; finished uploads are forgotten once finished before a time, a batch at a time',
    { timeout: 10_000 },
    async (t) => {
      const { store, clock } = await setup(t);
      await store.insertUpload(upload('done', 'k'));
      await store.putPart('done', part(1, 'p1'));
      await store.putPart('done', part(2, 'p2'));
      const made = objectMeta('k', { version: 'v-made' });
      const doneAt = clock.now();
      await store.completeUpload('b1', 'k', 'done', (_u, parts) => ({ meta: made, parts }));
      assert.deepEqual((await store.getUpload('b1', 'k', 'done'))?.completion, {
        version: 'v-made',
        parts: [
          [1, part(1, 'p1').etag],
          [2, part(2, 'p2').etag],
        ],
        at: doneAt,
      });
      await store.insertUpload(upload('dropped', 'k2'));
      clock.advance(1000);
      await store.abortUpload('b1', 'k2', 'dropped');
      await store.insertUpload(upload('open', 'k3', { created: 0 }));
      assert.equal((await store.getUpload('b1', 'k2', 'dropped'))?.completion, undefined);

      assert.equal(await store.forgetFinishedUploads(doneAt, 10), 0, 'none finished before then');
      assert.equal(await store.forgetFinishedUploads(doneAt + 1, 10), 1);
      assert.equal(await store.getUpload('b1', 'k', 'done'), null);
      assert.ok(await store.getUpload('b1', 'k2', 'dropped'));
      assert.equal(await store.forgetFinishedUploads(clock.now() + 1, 10), 1);
      assert.equal(await store.forgetFinishedUploads(clock.now() + 1, 10), 0);
      assert.equal((await store.getUpload('b1', 'k3', 'open'))?.state, 'active', 'an open upload, however old, is never forgotten');
      for (let i = 0; i < 5; i++) {
        await store.insertUpload(upload(`batch-${i}`, `b${i}`));
        await store.abortUpload('b1', `b${i}`, `batch-${i}`);
      }
      assert.equal(await store.forgetFinishedUploads(clock.now() + 1, 3), 3);
      assert.equal(await store.forgetFinishedUploads(clock.now() + 1, 3), 2);
    },
  );

  test('abortUpload reclaims the parts; expireUploads aborts active uploads created before a time', { timeout: 10_000 }, async (t) => {
    const { store, reclaimable } = await setup(t);
    await store.insertUpload(upload('old-1', 'a', { created: 100 }));
    await store.insertUpload(upload('old-2', 'b', { created: 200 }));
    await store.insertUpload(upload('new', 'c', { created: 300 }));
    await store.insertUpload(upload('done', 'd', { created: 50 }));
    await store.abortUpload('b1', 'd', 'done');
    await store.putPart('old-1', part(1, 'o1'));
    await store.putPart('old-2', part(1, 'o2'));
    await store.putPart('new', part(1, 'n1'));
    assert.equal(await store.abortUpload('b1', 'a', 'old-1'), 'active');
    assert.equal(await store.abortUpload('b1', 'a', 'old-1'), 'aborted');
    assert.equal(await store.abortUpload('b1', 'wrong-key', 'old-2'), null);
    assert.deepEqual(await reclaimable(), ['o1']);
    assert.equal(await store.expireUploads(300), 1);
    assert.equal(await store.expireUploads(300), 0);
    assert.deepEqual(await reclaimable(), ['o1', 'o2']);
    assert.deepEqual(
      (await store.listUploads('b1', '')).map((u) => u.uploadId),
      ['new'],
    );
    assert.deepEqual([...(await store.referencedBlobIds())], ['n1']);
  });

  test('reclaim queue: queued blobs come out after their grace period, limited, until confirmed or cleared', { timeout: 10_000 }, async (t) => {
    const { store, clock } = await setup(t);
    await store.queueReclaim(['q1', 'q2', 'q3']);
    await store.queueReclaim([]);
    assert.deepEqual(await store.reclaimableBlobs(clock.now(), 10), []);
    clock.advance(GRACE_MS);
    assert.equal((await store.reclaimableBlobs(clock.now(), 2)).length, 2);
    assert.deepEqual((await store.reclaimableBlobs(clock.now(), 10)).sort(), ['q1', 'q2', 'q3']);
    await store.queueReclaim(['q3']);
    assert.deepEqual((await store.reclaimableBlobs(clock.now(), 10)).sort(), ['q1', 'q2'], 'queued again: a new grace period');
    await store.confirmReclaimed(['q1', 'unknown']);
    await store.confirmReclaimed([]);
    assert.deepEqual(await store.reclaimableBlobs(clock.now(), 10), ['q2']);
    await store.clearReclaimQueue();
    assert.deepEqual(await store.reclaimableBlobs(clock.now() + GRACE_MS, 10), []);
  });

  test('access keys: put creates or replaces (un-revoking), revoke keeps its first time and is scoped by account', { timeout: 10_000 }, async (t) => {
    const { store } = await setup(t);
    const [a, b] = ['a'.repeat(32), 'b'.repeat(32)];
    const key = (accessKeyId: string, over: Partial<AccessKeyRow> = {}): AccessKeyRow => ({
      accessKeyId,
      secret: `s-${accessKeyId}`,
      accountId: a,
      permission: 'admin_read_write',
      buckets: null,
      created: 10,
      revoked: null,
      ...over,
    });
    await store.putAccessKey(key('K2', { created: 20, accountId: b, permission: 'object_read_only', buckets: ['photos', 'logs'] }));
    await store.putAccessKey(key('K1'));
    await store.putAccessKey(key('K0', { accountId: null, created: 5 }));
    assert.deepEqual(await store.accessKey('K2'), key('K2', { created: 20, accountId: b, permission: 'object_read_only', buckets: ['photos', 'logs'] }));
    assert.equal(await store.accessKey('nope'), undefined);
    assert.equal(await store.revokeAccessKey(b, 'K1', 30), false, 'another account cannot revoke it');
    assert.equal((await store.accessKey('K1'))?.secret, 's-K1');
    assert.equal(await store.revokeAccessKey(a, 'K1', 30), true);
    assert.equal(await store.revokeAccessKey(a, 'K1', 40), true);
    assert.equal(await store.revokeAccessKey(a, 'nope', 40), false);
    assert.equal(await store.accessKey('K1'), undefined, 'a revoked key is not usable');
    const { secret: _secret, ...listed } = key('K1', { revoked: 30 });
    assert.deepEqual(await store.listAccessKeys(a), [listed], 'listed without its secret');
    assert.deepEqual(
      (await store.listAccessKeys()).map((k) => k.accessKeyId),
      ['K0', 'K1', 'K2'],
    );
    await store.putAccessKey(key('K1', { secret: 's1b', created: 50 }));
    assert.equal((await store.accessKey('K1'))?.secret, 's1b');
    assert.deepEqual(
      (await store.listAccessKeys(a)).map((k) => [k.accessKeyId, k.revoked]),
      [['K1', null]],
    );
    assert.equal(await store.adoptAccessKeys(b), 1, 'the key of no account');
    assert.equal(await store.adoptAccessKeys(b), 0);
    assert.deepEqual(
      (await store.listAccessKeys(b)).map((k) => k.accessKeyId),
      ['K0', 'K2'],
    );
  });

  test('buckets by account: listed per account or unowned, adopted with their objects and uploads', { timeout: 10_000 }, async (t) => {
    const { store } = await setup(t);
    const [a, b] = ['a'.repeat(32), 'b'.repeat(32)];
    for (const name of [`${a}/photos`, `${b}/photos`, `${a}/zeta`, 'old'])
      assert.equal(await store.insertBucket({ name, created: 7, storageClass: 'Standard' }), true);
    assert.deepEqual(
      (await store.listBuckets({ account: a })).map((x) => x.name),
      [`${a}/photos`, `${a}/zeta`],
    );
    assert.deepEqual(
      (await store.listBuckets({ account: b })).map((x) => x.name),
      [`${b}/photos`],
    );
    assert.deepEqual(
      (await store.listBuckets({ unowned: true })).map((x) => x.name),
      ['b1', 'old'],
    );
    await store.putObject('old', objectMeta('k'), inline('kept'));
    await store.insertUpload(upload('u-old', 'big', { bucket: 'old' }));
    await store.insertBucket({ name: `${a}/b1`, created: 8, storageClass: 'Standard' });
    assert.deepEqual(await store.adoptBuckets(a), { adopted: ['old'], conflicts: ['b1'] }, 'the account already has a b1: that one stays');
    assert.deepEqual(await store.getBucket(`${a}/old`), { name: `${a}/old`, created: 7, storageClass: 'Standard' });
    assert.equal(await store.getBucket('old'), null);
    assert.equal(inlineBytes((await store.getObject(`${a}/old`, 'k'))?.data).toString(), 'kept');
    assert.equal(await store.getObject('old', 'k'), null);
    assert.equal((await store.getUpload(`${a}/old`, 'big', 'u-old'))?.state, 'active');
    assert.deepEqual(
      (await store.listBuckets({ unowned: true })).map((x) => x.name),
      ['b1'],
    );
  });

  test('bucket CORS rules: per bucket, found by name across accounts, moved on adoption, gone with the bucket', { timeout: 10_000 }, async (t) => {
    const { store } = await setup(t);
    const [a, b] = ['a'.repeat(32), 'b'.repeat(32)];
    for (const name of [`${a}/photos`, `${b}/photos`, 'old']) await store.insertBucket({ name, created: 7, storageClass: 'Standard' });
    const rules = (origin: string): CorsRule[] => [
      { id: 'r', allowedOrigins: [origin], allowedMethods: ['GET', 'PUT'], allowedHeaders: ['*'], exposeHeaders: ['ETag'], maxAgeSeconds: 9 },
    ];
    assert.equal(await store.getBucketCors(`${a}/photos`), null);
    assert.equal(await store.putBucketCors(`${a}/photos`, rules('https://a.test')), true);
    assert.equal(await store.putBucketCors(`${b}/photos`, rules('https://b.test')), true);
    assert.equal(await store.putBucketCors(`${b}/photos`, rules('https://b2.test')), true, 'replaced');
    assert.equal(await store.putBucketCors(`${a}/missing`, rules('https://a.test')), false, 'no bucket: nothing written');
    assert.equal(await store.putBucketCors('old', rules('https://old.test')), true);
    assert.deepEqual(await store.getBucketCors(`${a}/photos`), rules('https://a.test'));
    assert.deepEqual(await store.corsByName('photos'), [
      { bucket: `${a}/photos`, rules: rules('https://a.test') },
      { bucket: `${b}/photos`, rules: rules('https://b2.test') },
    ]);
    assert.deepEqual(await store.corsByName('missing'), []);
    assert.deepEqual(await store.adoptBuckets(a), { adopted: ['b1', 'old'], conflicts: [] });
    assert.deepEqual(await store.getBucketCors(`${a}/old`), rules('https://old.test'));
    assert.equal(await store.getBucketCors('old'), null);
    assert.deepEqual(
      (await store.corsByName('old')).map((x) => x.bucket),
      [`${a}/old`],
    );
    assert.equal(await store.putBucketCors(`${b}/photos`, null), true);
    assert.equal(await store.getBucketCors(`${b}/photos`), null);
    assert.equal(await store.deleteBucket(`${a}/photos`), 'deleted');
    assert.deepEqual(await store.corsByName('photos'), []);
    await store.insertBucket({ name: `${a}/photos`, created: 8, storageClass: 'Standard' });
    assert.equal(await store.getBucketCors(`${a}/photos`), null, 'a new bucket of the name starts with none');
  });
}
