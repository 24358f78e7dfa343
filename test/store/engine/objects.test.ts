import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { StoreError } from '../../../src/store/engine/errors.ts';
import { bytes, openTestEngine, readAll } from '../../helpers/engine.ts';
import { TEST_DB } from '../../helpers/postgres.ts';
import { TEST_BLOBS } from '../../helpers/s3-endpoint.ts';

const md5 = (data: Uint8Array | string) => createHash('md5').update(data).digest('hex');

async function* chunked(data: Uint8Array, size: number): AsyncIterable<Uint8Array> {
  for (let i = 0; i < data.byteLength; i += size) yield data.subarray(i, i + size);
}

test('put then get and head return the same object, with md5 etag and checksum', { timeout: 10_000 }, async (t) => {
  const { engine, bucket, clock } = await openTestEngine(t);
  const put = await engine.put(bucket, 'k1', bytes('value'), { httpMetadata: { contentType: 'text/plain' }, customMetadata: { a: '1' } });
  assert.ok(put);
  assert.equal(put.etag, '2063c1608d6e0baf80249c42e2be5804');
  assert.equal(put.size, 5);
  assert.equal(put.uploaded, clock.now());
  assert.equal(put.storageClass, 'Standard');
  assert.deepEqual(put.checksums, { md5: put.etag });
  assert.match(put.version, /^[0-9a-f]{32}$/);
  const head = await engine.head(bucket, 'k1');
  assert.deepEqual(head, put);
  const got = await engine.get(bucket, 'k1');
  assert.ok(got?.body);
  assert.deepEqual(got.range, { offset: 0, length: 5 });
  assert.equal((await readAll(got.body.stream())).toString(), 'value');
});

test('empty bodies have the empty md5 and a missing key is null', { timeout: 10_000 }, async (t) => {
  const { engine, bucket } = await openTestEngine(t);
  const put = await engine.put(bucket, '', new Uint8Array(0));
  assert.equal(put?.etag, 'd41d8cd98f00b204e9800998ecf8427e');
  assert.equal(await engine.head(bucket, 'nope'), null);
  assert.equal(await engine.get(bucket, 'nope'), null);
});

test('every put makes a new version, even with the same bytes', { timeout: 10_000 }, async (t) => {
  const { engine, bucket } = await openTestEngine(t);
  const a = await engine.put(bucket, 'k', bytes('same'));
  const b = await engine.put(bucket, 'k', bytes('same'));
  assert.equal(a?.etag, b?.etag);
  assert.notEqual(a?.version, b?.version);
});

test('large streamed bodies go to a blob file and stream back intact', { timeout: 10_000 }, async (t) => {
  const { engine, bucket, blobIds } = await openTestEngine(t);
  const data = new Uint8Array(3 * 1024 * 1024 + 17).map((_, i) => (i * 7) % 251);
  const put = await engine.put(bucket, 'big', { stream: chunked(data, 65_536), length: data.byteLength });
  assert.equal(put?.etag, md5(data));
  assert.equal((await blobIds()).length, 1);
  const got = await engine.get(bucket, 'big');
  assert.ok(got?.body);
  assert.ok(Buffer.from(data).equals(await readAll(got.body.stream())));
  const ranged = await engine.get(bucket, 'big', { range: { offset: 1_000_000, length: 10 } });
  assert.ok(ranged?.body);
  assert.ok(Buffer.from(data.subarray(1_000_000, 1_000_010)).equals(await readAll(ranged.body.stream())));
});

test('md5 and an extra checksum are right however a body arrives: whole, streamed inline, or spilling to a blob part way', { timeout: 60_000 }, async (t) => {
  const { engine, bucket } = await openTestEngine(t, { inlineMaxBytes: 1024 });
  let run = 0;
  // Lengths drawn as numbers: fast-check keeps generated arrays short, and the interesting bodies pass 1024 bytes.
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 0, max: 3000 }),
      fc.integer({ min: 1, max: 1500 }),
      fc.boolean(),
      fc.constantFrom('whole', 'stream'),
      async (length, chunkSize, declared, shape) => {
        const data = new Uint8Array(length).map((_, i) => (i * 31 + length) % 251);
        const sha256 = createHash('sha256').update(data).digest('hex');
        const body = shape === 'whole' ? data : { stream: chunked(data, chunkSize), ...(declared ? { length: data.byteLength } : {}) };
        const put = await engine.put(bucket, `k${run++}`, body, { expectedChecksum: { algorithm: 'sha256', hex: sha256 } });
        assert.equal(put?.etag, md5(data));
        assert.equal(put?.checksums.sha256, sha256);
        const got = await engine.get(bucket, put.key);
        assert.ok(got?.body);
        assert.ok(Buffer.from(data).equals(await readAll(got.body.stream())));
      },
    ),
    { numRuns: 60 },
  );
});

test('a stream shorter than its declared length stores nothing', { timeout: 10_000 }, async (t) => {
  const { engine, bucket, blobIds, temporaryCount } = await openTestEngine(t);
  const data = new Uint8Array(200_000);
  await assert.rejects(
    engine.put(bucket, 'short', { stream: chunked(data, 10_000), length: 300_000 }),
    (e: unknown) => e instanceof StoreError && e.code === 'STORE_INCOMPLETE_BODY',
  );
  assert.equal(await engine.head(bucket, 'short'), null);
  assert.equal(await temporaryCount(), 0);
  assert.deepEqual(await blobIds(), []);
});

test('checksums are verified; a mismatch stores nothing and names both values', { timeout: 10_000 }, async (t) => {
  const { engine, bucket } = await openTestEngine(t);
  const data = bytes('checked');
  const algorithms = ['md5', 'sha1', 'sha256', 'sha384', 'sha512'] as const;
  for (const algorithm of algorithms) {
    const hex = createHash(algorithm).update(data).digest('hex');
    const put = await engine.put(bucket, `ok-${algorithm}`, data, { expectedChecksum: { algorithm, hex: hex.toUpperCase() } });
    assert.equal(put?.checksums[algorithm], hex, algorithm);
    assert.equal(put?.checksums.md5, md5(data));
    const wrong = '0'.repeat(hex.length);
    await assert.rejects(engine.put(bucket, `bad-${algorithm}`, data, { expectedChecksum: { algorithm, hex: wrong } }), (e: unknown) => {
      assert.ok(e instanceof StoreError);
      assert.equal(e.code, 'STORE_BAD_DIGEST');
      assert.equal(e.v4, 10037);
      assert.match(e.message, new RegExp(`You provided a .* checksum with value: ${wrong}\\nActual .* was: ${hex}`));
      return true;
    });
    assert.equal(await engine.head(bucket, `bad-${algorithm}`), null);
  }
});

test('an overwrite replaces the checksum set', { timeout: 10_000 }, async (t) => {
  const { engine, bucket } = await openTestEngine(t);
  const data = bytes('x');
  await engine.put(bucket, 'k', data, { expectedChecksum: { algorithm: 'sha256', hex: createHash('sha256').update(data).digest('hex') } });
  const second = await engine.put(bucket, 'k', data, { expectedChecksum: { algorithm: 'sha384', hex: createHash('sha384').update(data).digest('hex') } });
  assert.deepEqual(Object.keys(second!.checksums).sort(), ['md5', 'sha384']);
});

test('keys over 1024 UTF-8 bytes are refused on every operation; odd keys never reach the file system', { timeout: 10_000 }, async (t) => {
  const { engine, bucket, dataDir, blobIds } = await openTestEngine(t);
  const long = 'é'.repeat(513);
  const invalid = (e: unknown) => e instanceof StoreError && e.code === 'STORE_INVALID_OBJECT_NAME';
  await assert.rejects(engine.put(bucket, long, bytes('x')), invalid);
  await assert.rejects(engine.get(bucket, long), invalid);
  await assert.rejects(engine.head(bucket, long), invalid);
  await assert.rejects(engine.delete(bucket, [long]), invalid);
  await assert.rejects(engine.createMultipartUpload(bucket, long), invalid);
  for (const key of ['../x', '../../etc/passwd', '/abs', 'a'.repeat(1024), '日本語/🙂', 'nul\u0000byte']) {
    await engine.put(bucket, key, new Uint8Array(100_000));
    assert.equal((await engine.head(bucket, key))?.key, key);
  }
  const metadataFiles = TEST_DB === 'sqlite' ? ['metadata.sqlite', 'metadata.sqlite-shm', 'metadata.sqlite-wal'] : [];
  const blobFiles = TEST_BLOBS === 'fs' ? ['blobs', 'tmp'] : [];
  assert.deepEqual(readdirSync(dataDir).sort(), [...blobFiles, ...metadataFiles].sort());
  assert.equal((await blobIds()).length, 6);
  if (TEST_BLOBS === 'fs') for (const name of readdirSync(join(dataDir, 'blobs'))) assert.match(name, /^[0-9a-f]{32}$/);
});

test('custom metadata over 8192 bytes is refused', { timeout: 10_000 }, async (t) => {
  const { engine, bucket } = await openTestEngine(t);
  await engine.put(bucket, 'ok', bytes('x'), { customMetadata: { k: 'x'.repeat(8191) } });
  await assert.rejects(
    engine.put(bucket, 'no', bytes('x'), { customMetadata: { k: 'x'.repeat(8192) } }),
    (e: unknown) => e instanceof StoreError && e.code === 'STORE_METADATA_TOO_LARGE',
  );
});

test('storage class defaults to the bucket class and is validated', { timeout: 10_000 }, async (t) => {
  const { engine } = await openTestEngine(t);
  await engine.createBucket('cold-bucket', { storageClass: 'InfrequentAccess' });
  assert.equal((await engine.put('cold-bucket', 'k', bytes('x')))?.storageClass, 'InfrequentAccess');
  assert.equal((await engine.put('cold-bucket', 'k', bytes('x'), { storageClass: 'Standard' }))?.storageClass, 'Standard');
  await assert.rejects(
    engine.put('cold-bucket', 'k', bytes('x'), { storageClass: 'Glacier' as never }),
    (e: unknown) => e instanceof StoreError && e.code === 'STORE_INVALID_STORAGE_CLASS',
  );
});

test('delete removes one or many keys; missing keys are fine; over 1000 keys is refused', { timeout: 10_000 }, async (t) => {
  const { engine, bucket } = await openTestEngine(t);
  await engine.put(bucket, 'a', bytes('1'));
  await engine.put(bucket, 'b', bytes('2'));
  await engine.delete(bucket, ['a', 'missing']);
  assert.equal(await engine.head(bucket, 'a'), null);
  assert.ok(await engine.head(bucket, 'b'));
  await assert.rejects(
    engine.delete(
      bucket,
      Array.from({ length: 1001 }, (_, i) => `k${i}`),
    ),
    (e: unknown) => e instanceof StoreError && e.code === 'STORE_TOO_MANY_KEYS',
  );
});

test('unknown buckets are reported; non-empty buckets cannot be deleted', { timeout: 10_000 }, async (t) => {
  const { engine, bucket } = await openTestEngine(t);
  const noBucket = (e: unknown) => e instanceof StoreError && e.code === 'STORE_NO_SUCH_BUCKET';
  await assert.rejects(engine.put('nope-bucket', 'k', bytes('x')), noBucket);
  await assert.rejects(engine.get('nope-bucket', 'k'), noBucket);
  await engine.put(bucket, 'k', bytes('x'));
  await assert.rejects(engine.deleteBucket(bucket), (e: unknown) => e instanceof StoreError && e.code === 'STORE_BUCKET_NOT_EMPTY');
  await engine.delete(bucket, ['k']);
  await engine.deleteBucket(bucket);
  assert.equal(await engine.getBucket(bucket), null);
  await assert.rejects(engine.createBucket('Bad_Name'), (e: unknown) => e instanceof StoreError && e.code === 'STORE_INVALID_BUCKET_NAME');
});

test('replaced and deleted blobs are reclaimed after the grace period', { timeout: 10_000 }, async (t) => {
  const { engine, bucket, clock, blobIds } = await openTestEngine(t);
  const big = new Uint8Array(100_000);
  await engine.put(bucket, 'k', big);
  await engine.put(bucket, 'k', big);
  await engine.put(bucket, 'gone', big);
  await engine.delete(bucket, ['gone']);
  assert.equal((await blobIds()).length, 3);
  assert.equal(await engine.reclaimBlobs(), 0, 'nothing before the grace period ends');
  clock.advance(60_001);
  assert.equal(await engine.reclaimBlobs(), 2);
  assert.equal((await blobIds()).length, 1);
  assert.equal((await engine.get(bucket, 'k'))?.meta.size, 100_000);
});

test('a bucket deleted, or made again with another storage class, through another connection is what the next put sees', { timeout: 10_000 }, async (t) => {
  const first = await openTestEngine(t);
  const second = await openTestEngine(t, { dataDir: first.dataDir, ...(first.database ? { database: first.database } : {}) });
  await first.engine.createBucket('shared', { storageClass: 'InfrequentAccess' });
  // Several puts at once share one bucket lookup (object-engine.ts): they all see the bucket as it is.
  const puts = await Promise.all(['a', 'b', 'c'].map((key) => first.engine.put('shared', key, bytes(key))));
  assert.deepEqual(
    puts.map((meta) => meta?.storageClass),
    ['InfrequentAccess', 'InfrequentAccess', 'InfrequentAccess'],
  );
  await second.engine.delete('shared', ['a', 'b', 'c']);
  await second.engine.deleteBucket('shared');
  await assert.rejects(first.engine.put('shared', 'd', bytes('d')), (e: unknown) => e instanceof StoreError && e.code === 'STORE_NO_SUCH_BUCKET');
  await second.engine.createBucket('shared');
  assert.equal((await first.engine.put('shared', 'e', bytes('e')))?.storageClass, 'Standard');
  // Made again behind the back of a put that just found it (puts trust a found bucket a while,
  // object-engine.ts): the object still takes the class the bucket has at the commit.
  await second.engine.delete('shared', ['e']);
  await second.engine.deleteBucket('shared');
  await second.engine.createBucket('shared', { storageClass: 'InfrequentAccess' });
  const remade = await first.engine.put('shared', 'e', bytes('e'));
  assert.equal(remade?.storageClass, 'InfrequentAccess');
  assert.equal((await second.engine.head('shared', 'e'))?.storageClass, 'InfrequentAccess');
  // A put started in the same turn as the deletion: exactly one of them wins (SQLite's one writer
  // takes them in order; PostgreSQL's connections may commit either first), never a put into a
  // deleted bucket served from the turn's shared lookup.
  await first.engine.delete('shared', ['e']);
  const [deleted, put] = await Promise.allSettled([first.engine.deleteBucket('shared'), first.engine.put('shared', 'f', bytes('f'))]);
  const code = (r: PromiseSettledResult<unknown>) => (r.status === 'rejected' && r.reason instanceof StoreError ? r.reason.code : r.status);
  assert.ok(
    (deleted.status === 'fulfilled' && code(put) === 'STORE_NO_SUCH_BUCKET') || (put.status === 'fulfilled' && code(deleted) === 'STORE_BUCKET_NOT_EMPTY'),
    `deleteBucket ${code(deleted)}, put ${code(put)}`,
  );
  if (put.status === 'fulfilled') {
    await first.engine.delete('shared', ['f']);
    await first.engine.deleteBucket('shared');
  }
  await assert.rejects(first.engine.put('shared', 'g', bytes('g')), (e: unknown) => e instanceof StoreError && e.code === 'STORE_NO_SUCH_BUCKET');
});

test('a bucket deleted while a put streams its body: the put fails with NoSuchBucket and keeps nothing', { timeout: 10_000 }, async (t) => {
  const { engine, blobIds } = await openTestEngine(t, { inlineMaxBytes: 1024 });
  await engine.createBucket('doomed');
  let streaming!: () => void;
  const started = new Promise<void>((resolve) => {
    streaming = resolve;
  });
  let finish!: () => void;
  const rest = new Promise<void>((resolve) => {
    finish = resolve;
  });
  async function* body(): AsyncIterable<Uint8Array> {
    streaming();
    yield new Uint8Array(100_000).fill(1);
    await rest;
    yield new Uint8Array(100_000).fill(2);
  }
  const put = engine.put('doomed', 'k', { stream: body() });
  await started;
  await engine.deleteBucket('doomed'); // still empty: the put has not committed
  finish();
  await assert.rejects(put, (e: unknown) => e instanceof StoreError && e.code === 'STORE_NO_SUCH_BUCKET');
  assert.equal(await engine.getBucket('doomed'), null);
  assert.deepEqual(await blobIds(), [], "the body's blob is discarded");
  await engine.createBucket('doomed');
  assert.equal(await engine.head('doomed', 'k'), null, 'a bucket made again under the same name is empty');
});
