/**
 * The S3 blob backend against edgeport's own S3 API (a real listener, helpers/s3-endpoint.ts):
 * the BlobStore contract (blobs/blob-store.case.ts), multipart for large bodies, an engine on `s3://` blobs, and recovery
 * on a blob store several instances share.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import test from 'node:test';
import type { Clock } from '../../src/core/clock.ts';
import { randomHexId } from '../../src/core/ids.ts';
import { currentProcess, processTag } from '../../src/core/process-identity.ts';
import { StoreError } from '../../src/store/engine/errors.ts';
import { S3BlobStore } from '../../src/store/blobs/s3-blob-store.ts';
import { BlobsUrlError, openBlobStore, parseBlobsUrl } from '../../src/store/blobs/open-blob-store.ts';
import { openTestEngine, readAll } from '../helpers/engine.ts';
import { startS3Endpoint, type S3Endpoint } from '../helpers/s3-endpoint.ts';
import { TEST_DB } from '../helpers/postgres.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { pattern, runBlobStoreSuite, writeThroughScratch } from './blobs/blob-store.case.ts';

const MiB = 1024 * 1024;
const PART = 5 * MiB;

async function openStore(t: test.TestContext, endpoint: S3Endpoint, prefix = 'edgeport/blobs'): Promise<S3BlobStore> {
  const location = parseBlobsUrl(endpoint.blobsUrl(prefix));
  assert.equal(location.kind, 's3');
  if (location.kind !== 's3') throw new Error('unreachable');
  const store = await S3BlobStore.open({
    bucket: location.bucket,
    prefix: location.prefix,
    partBytes: PART,
    client: { endpoint: location.endpoint!, region: location.region!, credentials: location.credentials!, forcePathStyle: true },
  });
  t.after(() => store.close());
  return store;
}

async function writeBlob(store: S3BlobStore, data: Uint8Array, chunkBytes = 64 * 1024): Promise<{ blobId: string; size: number }> {
  return (await writeThroughScratch(store, data, chunkBytes)).commit();
}

runBlobStoreSuite('S3BlobStore', {
  largeBytes: PART,
  open: async (t) => openStore(t, await startS3Endpoint(t)),
});

const md5 = (data: Uint8Array): string => createHash('md5').update(data).digest('hex');
const count = (requests: readonly string[], pattern: RegExp): number => requests.filter((r) => pattern.test(r)).length;

test('[blobs] url: file:// and s3:// parse, with defaults; bad URLs say what to fix', { timeout: 10_000 }, () => {
  assert.deepEqual(parseBlobsUrl('file:///srv/edgeport/blobs'), { kind: 'fs', root: '/srv/edgeport/blobs' });
  assert.deepEqual(parseBlobsUrl('s3://my-bucket/a/b/?endpoint=http://127.0.0.1:9000&access-key-id=AK&secret-access-key=se+cr/et%3D'), {
    kind: 's3',
    bucket: 'my-bucket',
    prefix: 'a/b',
    endpoint: 'http://127.0.0.1:9000',
    region: 'auto',
    forcePathStyle: true,
    credentials: { accessKeyId: 'AK', secretAccessKey: 'se+cr/et=' },
  });
  assert.deepEqual(parseBlobsUrl('s3://my-bucket'), { kind: 's3', bucket: 'my-bucket', prefix: '', forcePathStyle: false });
  assert.deepEqual(parseBlobsUrl('s3://my-bucket/p?region=eu-west-1&force-path-style=true'), {
    kind: 's3',
    bucket: 'my-bucket',
    prefix: 'p',
    region: 'eu-west-1',
    forcePathStyle: true,
  });

  const refused = (url: string, fix: RegExp) =>
    assert.throws(
      () => parseBlobsUrl(url),
      (error: unknown) => {
        assert.ok(error instanceof BlobsUrlError);
        assert.equal(error.code, 'CONFIG_INVALID');
        assert.match(error.message, fix);
        assert.doesNotMatch(error.message, /topsecret/, 'the secret key never appears in a message');
        return true;
      },
    );
  refused('/srv/blobs', /use file:\/\/\/absolute\/dir .* or s3:\/\/bucket\/prefix\?endpoint=/);
  refused('http://x/y', /use file:\/\/\/absolute\/dir/);
  refused('file://server/share', /three slashes/);
  refused('file:///', /absolute directory other than "\/"/);
  refused('file:///a?b=c', /no \?query/);
  refused('s3:///prefix', /"" is not a bucket name: after s3:\/\/ comes the bucket/);
  refused('s3://Bad_Bucket/p', /not a bucket name/);
  refused('s3://bucket/a//b', /empty segment/);
  refused('s3://bucket/p?endpoint=127.0.0.1:9000&secret-access-key=topsecret&access-key-id=a', /endpoint=127.0.0.1:9000 is not an http:\/\/ or https:\/\/ URL/);
  refused('s3://bucket/p?acces-key-id=a&secret-access-key=topsecret', /unknown parameter "acces-key-id"; the parameters are endpoint, region, access-key-id/);
  refused('s3://bucket/p?secret-access-key=topsecret', /give both access-key-id and secret-access-key, or neither/);
  refused('s3://bucket/p?force-path-style=yes', /force-path-style=yes: use true or false/);
  refused('s3://bucket/p?region=us-east-1&region=auto', /"region" is given twice/);
});

test('an unreachable bucket fails at open, naming the bucket and what to check', { timeout: 10_000 }, async (t) => {
  const endpoint = await startS3Endpoint(t);
  const url = endpoint.blobsUrl('x').replace('s3://blobs/', 's3://no-such-bucket/');
  await assert.rejects(openBlobStore({ url, dataDir: tempDir(t) }), (error: unknown) => {
    assert.ok(error instanceof StoreError);
    assert.match(
      error.message,
      /^The blob store s3:\/\/no-such-bucket\/x\?endpoint=http:\/\/127\.0\.0\.1:\d+&.*secret-access-key=\*\*\* could not be opened: HeadBucket was answered HTTP 404 \(NotFound.*\)\. Check that the bucket exists/,
    );
    assert.doesNotMatch(error.message, /edgeport-blob-secret/);
    return true;
  });
});

test('S3BlobStore: write, commit, ranged reads, list, delete; a small body is one PutObject', { timeout: 10_000 }, async (t) => {
  const endpoint = await startS3Endpoint(t);
  const store = await openStore(t, endpoint);
  assert.equal(store.dir, undefined);
  const data = pattern(300_000);
  const before = endpoint.requests.length;
  const { blobId, size } = await writeBlob(store, data, 10_000);
  assert.equal(size, data.byteLength);
  assert.match(blobId, /^[0-9a-f]{32}$/);
  assert.deepEqual(endpoint.requests.slice(before), [`PUT /blobs/edgeport/blobs/${blobId}?x-id=PutObject`]);
  assert.equal((await endpoint.engine.head('blobs', `edgeport/blobs/${blobId}`))?.size, data.byteLength);

  assert.ok(Buffer.from(data).equals(await readAll(store.read(blobId, 0, data.byteLength))));
  assert.ok(Buffer.from(data.subarray(12_345, 12_345 + 777)).equals(await readAll(store.read(blobId, 12_345, 777))));
  assert.ok(Buffer.from(data.subarray(data.byteLength - 1)).equals(await readAll(store.read(blobId, data.byteLength - 1, 1))));
  assert.equal((await readAll(store.read(blobId, 5, 0))).length, 0);

  const empty = await (await store.createWriter()).commit();
  assert.equal(empty.size, 0);
  // Objects beside the blobs (another prefix, a nested one, odd names) are never listed as blobs.
  await endpoint.engine.put('blobs', 'other/0123456789abcdef0123456789abcdef', new Uint8Array(1));
  await endpoint.engine.put('blobs', 'edgeport/blobs/sub/0123456789abcdef0123456789abcdef', new Uint8Array(1));
  await endpoint.engine.put('blobs', 'edgeport/blobs/not-a-blob', new Uint8Array(1));
  assert.deepEqual((await store.list()).sort(), [blobId, empty.blobId].sort());
  assert.deepEqual(await store.list({ olderThanMs: 60_000 }), [], 'both were written just now');

  await store.delete([blobId, empty.blobId, randomHexId()]);
  assert.deepEqual(await store.list(), []);
  await assert.rejects(readAll(store.read(blobId, 0, 10)), (error: unknown) => error instanceof StoreError && error.code === 'STORE_INTERNAL');
  await assert.rejects(readAll(store.read('../x', 0, 1)), /Not a blob id/);
});

test('S3BlobStore: a body above one part goes multipart, parts of one size, read back across part edges', { timeout: 10_000 }, async (t) => {
  const endpoint = await startS3Endpoint(t);
  const store = await openStore(t, endpoint, '');
  const data = pattern(2 * PART + 123_457, 13);
  const before = endpoint.requests.length;
  const { blobId, size } = await writeBlob(store, data, 100_000);
  assert.equal(size, data.byteLength);
  const sent = endpoint.requests.slice(before);
  assert.equal(count(sent, /^POST \/blobs\/[0-9a-f]{32}\?uploads/), 1, 'CreateMultipartUpload');
  assert.equal(count(sent, /^PUT \/blobs\/[0-9a-f]{32}\?.*partNumber=/), 3, 'three UploadPart');
  assert.equal(count(sent, /^POST \/blobs\/[0-9a-f]{32}\?uploadId=/), 1, 'CompleteMultipartUpload');
  assert.equal(count(sent, /x-id=PutObject/), 0);
  const meta = await endpoint.engine.head('blobs', blobId);
  assert.equal(meta?.size, data.byteLength);
  assert.match(meta?.etag ?? '', /-3$/);
  assert.equal(md5(await readAll(store.read(blobId, 0, data.byteLength))), md5(data));
  const edge = PART - 1000;
  assert.ok(Buffer.from(data.subarray(edge, edge + PART + 2000)).equals(await readAll(store.read(blobId, edge, PART + 2000))));

  // Exactly one part: still a single PutObject (a full part is sent only once more bytes come).
  const mark = endpoint.requests.length;
  await writeBlob(store, pattern(PART), 1 << 20);
  assert.deepEqual(
    endpoint.requests.slice(mark).map((r) => r.split(' ')[0]),
    ['PUT'],
  );
});

test('S3BlobStore: abort drops the upload; clearTemporary aborts only uploads idle past the age', { timeout: 10_000 }, async (t) => {
  let skewMs = 0;
  const clock: Clock = { now: () => Date.now() + skewMs };
  const endpoint = await startS3Endpoint(t, { clock });
  const store = await openStore(t, endpoint);

  const aborted = await store.createWriter();
  await aborted.write(pattern(PART + 10));
  await aborted.write(pattern(10));
  assert.equal((await endpoint.engine.listUploads('blobs')).length, 1, 'the first part went out');
  await aborted.abort();
  await aborted.abort();
  await assert.rejects(aborted.write(new Uint8Array(1)), /closed/);
  assert.equal((await endpoint.engine.listUploads('blobs')).length, 0);

  // Writers that die mid-body: one two hours ago (by the store's clock), one just now; and one
  // started two hours ago whose last part is recent, so still in progress.
  skewMs = -2 * 60 * 60 * 1000;
  const stale = await store.createWriter();
  await stale.write(pattern(PART + 1));
  const slow = await store.createWriter();
  await slow.write(pattern(PART + 1));
  await partsStored(endpoint, 2);
  skewMs = 0;
  const fresh = await store.createWriter();
  await fresh.write(pattern(PART + 1));
  await slow.write(pattern(PART));
  await partsStored(endpoint, 4);
  assert.equal((await endpoint.engine.listUploads('blobs')).length, 3);

  assert.equal(await store.clearTemporary({ olderThanMs: 60 * 60 * 1000 }), 1);
  assert.equal((await endpoint.engine.listUploads('blobs')).length, 2);
  const finished = await slow.commit();
  assert.equal(finished.size, 2 * PART + 1);
  assert.equal(await store.clearTemporary(), 1, 'without an age, everything left');
  assert.equal((await endpoint.engine.listUploads('blobs')).length, 0);
  await assert.rejects(fresh.commit(), (error: unknown) => error instanceof StoreError && error.code === 'STORE_INTERNAL');
});

test('S3BlobStore: deletes go out in batches of 1000', { timeout: 10_000 }, async (t) => {
  const endpoint = await startS3Endpoint(t);
  const store = await openStore(t, endpoint);
  const ids = Array.from({ length: 2345 }, () => randomHexId());
  const before = endpoint.requests.length;
  await store.delete(ids);
  assert.equal(count(endpoint.requests.slice(before), /^POST \/blobs\/?\?delete/), 3);
});

test('an engine on s3:// blobs: put, get, ranges, multipart, delete, reclaim; a 64 MiB put streams in bounded memory', { timeout: 10_000 }, async (t) => {
  const endpoint = await startS3Endpoint(t);
  const { engine, bucket, clock } = await openTestEngine(t, { blobsUrl: endpoint.blobsUrl('engine') });
  assert.equal(engine.blobDir, undefined);

  await engine.put(bucket, 'small', new TextEncoder().encode('inline'));
  assert.equal((await readAll((await engine.get(bucket, 'small'))?.body?.stream())).toString(), 'inline');
  const medium = pattern(1 * MiB);
  const put = await engine.put(bucket, 'medium', { stream: chunks(medium, 65_536), length: medium.byteLength });
  assert.equal(put?.etag, md5(medium));
  const ranged = await engine.get(bucket, 'medium', { range: { offset: 1000, length: 5000 } });
  assert.ok(Buffer.from(medium.subarray(1000, 6000)).equals(await readAll(ranged?.body?.stream())));
  const suffix = await engine.get(bucket, 'medium', { range: { suffix: 10 } });
  assert.ok(Buffer.from(medium.subarray(medium.byteLength - 10)).equals(await readAll(suffix?.body?.stream())));
  assert.equal((await endpoint.engine.list('blobs', { prefix: 'engine/' })).objects.length, 1, 'one blob object for the medium body');

  const id = await engine.createMultipartUpload(bucket, 'mp');
  const p1 = pattern(5 * MiB, 3);
  const p2 = pattern(1 * MiB, 5);
  const parts = [await engine.uploadPart(bucket, 'mp', id, 1, p1), await engine.uploadPart(bucket, 'mp', id, 2, { stream: chunks(p2, 100_000) })];
  const done = await engine.completeMultipartUpload(bucket, 'mp', id, parts);
  assert.equal(done.size, p1.byteLength + p2.byteLength);
  const across = await engine.get(bucket, 'mp', { range: { offset: p1.byteLength - 3, length: 6 } });
  assert.ok(Buffer.concat([p1.subarray(-3), p2.subarray(0, 3)]).equals(await readAll(across?.body?.stream())));

  await engine.delete(bucket, ['medium', 'mp']);
  assert.equal(await engine.get(bucket, 'medium'), null);
  clock.advance(60_001);
  assert.equal(await engine.reclaimBlobs(), 3);
  assert.equal((await endpoint.engine.list('blobs', { prefix: 'engine/' })).objects.length, 0);

  // 64 MiB from a generator that makes each chunk on demand: nothing holds the whole body.
  const total = 64 * MiB;
  global.gc?.();
  const rssBefore = process.memoryUsage().rss;
  let peak = rssBefore;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 20);
  const mark = endpoint.requests.length;
  const hash = createHash('md5');
  const big = await engine.put(bucket, 'big', { stream: generated(total, 256 * 1024, hash), length: total });
  clearInterval(sampler);
  assert.equal(big?.etag, hash.digest('hex'));
  assert.ok(peak - rssBefore < 150 * MiB, `rss grew by ${Math.round((peak - rssBefore) / MiB)} MiB`);
  assert.equal(count(endpoint.requests.slice(mark), /partNumber=/), 8, '64 MiB in 8 MiB parts');
  const got = await engine.get(bucket, 'big');
  const back = createHash('md5');
  let length = 0;
  for await (const chunk of got!.body!.stream()) {
    back.update(chunk);
    length += chunk.byteLength;
  }
  assert.equal(length, total);
  assert.equal(back.digest('hex'), big?.etag);
});

test("a shared file:// blob dir: two engines read each other's blobs; recovery keeps young leftovers and sweeps old ones", { timeout: 10_000 }, async (t) => {
  const shared = tempDir(t, 'edgeport-shared-blobs-');
  const blobsUrl = pathToFileURL(shared).href;
  const a = await openTestEngine(t, { blobsUrl });
  // Its files are read through the store's calls, which have a deadline (a mount may hang), not streamed from the directory.
  assert.equal(a.engine.blobDir, undefined);
  const body = pattern(200_000);
  await a.engine.put(a.bucket, 'k', body);
  const [aBlob] = readdirSync(join(shared, 'blobs'));

  // Another instance mid-write: a fresh temporary file. Leftovers of a crash long ago: an old
  // temporary file and an old blob no row references.
  const freshTmp = randomHexId();
  writeFileSync(join(shared, 'tmp', freshTmp), 'in progress');
  const oldTmp = randomHexId();
  const oldOrphan = randomHexId();
  writeFileSync(join(shared, 'tmp', oldTmp), 'crashed');
  writeFileSync(join(shared, 'blobs', oldOrphan), 'orphan');
  const twoHoursAgo = new Date(Date.now() - 2 * 60 * 60 * 1000);
  utimesSync(join(shared, 'tmp', oldTmp), twoHoursAgo, twoHoursAgo);
  utimesSync(join(shared, 'blobs', oldOrphan), twoHoursAgo, twoHoursAgo);

  // B has metadata of its own here (SQLite), so A's blob is unreferenced as far as B can tell:
  // only its age protects it, exactly as for a blob A published but has not committed yet.
  const b = await openTestEngine(t, { blobsUrl, recover: true });
  assert.deepEqual(
    readdirSync(join(shared, 'tmp')).filter((name) => name !== processTag()),
    [freshTmp],
    "A's own directory stays too",
  );
  assert.deepEqual(readdirSync(join(shared, 'blobs')).sort(), [aBlob].sort());
  assert.ok(Buffer.from(body).equals(await readAll((await a.engine.get(a.bucket, 'k'))?.body?.stream())));
  await b.engine.put(b.bucket, 'from-b', pattern(100_000, 3));
  assert.equal(readdirSync(join(shared, 'blobs')).length, 2, 'B writes into the shared dir');
});

test('recovery on a shared blob store keeps the reclaim queue; the local data dir still clears it', { timeout: 10_000 }, async (t) => {
  for (const shared of [true, false]) {
    const dataDir = tempDir(t);
    const blobsDir = tempDir(t, 'edgeport-shared-blobs-');
    const options = { dataDir, blobsUrl: shared ? pathToFileURL(blobsDir).href : undefined };
    const first = await openTestEngine(t, options);
    const big = randomBytes(100_000);
    await first.engine.put(first.bucket, 'k', big);
    await first.engine.put(first.bucket, 'k', big);
    const again = await openTestEngine(t, { ...options, recover: true });
    again.clock.advance(60_001);
    // Shared: the replaced blob is young, survives the sweep, and its queued reclamation stays.
    // Local: the sweep deleted it outright and dropped the queue, unless the metadata itself is
    // shared (PostgreSQL), whose queue other instances may still be using.
    assert.equal(await again.engine.reclaimBlobs(), shared || TEST_DB === 'postgres' ? 1 : 0, shared ? 'shared' : 'local');
    const dir = shared ? join(blobsDir, 'blobs') : join(dataDir, 'blobs');
    assert.equal(readdirSync(dir).length, 1);
  }
});

test(
  "the local data dir's recovery removes the temporary files of processes that are gone, however fresh; not this process's",
  { timeout: 20_000 },
  async (t) => {
    const dataDir = tempDir(t);
    const gone = join(dataDir, 'tmp', processTag({ ...currentProcess(), start: `${currentProcess().start}1` }));
    mkdirSync(gone, { recursive: true });
    writeFileSync(join(gone, randomHexId()), 'x');
    const first = await openTestEngine(t, { dataDir, blobsUrl: undefined });
    await first.engine.put(first.bucket, 'k', randomBytes(100_000));
    const own = join(dataDir, 'tmp', processTag());
    writeFileSync(join(own, randomHexId()), 'this process is writing it');
    await openTestEngine(t, { dataDir, recover: true, blobsUrl: undefined });
    assert.deepEqual(readdirSync(join(dataDir, 'tmp')), [processTag()]);
    assert.equal(readdirSync(own).length, 1);
  },
);

/** Waits until the endpoint has stored `n` parts across its uploads (part uploads run in the background). */
async function partsStored(endpoint: S3Endpoint, n: number): Promise<void> {
  for (let tries = 0; tries < 500; tries++) {
    let stored = 0;
    for (const upload of await endpoint.engine.listUploads('blobs')) {
      stored += (await endpoint.engine.listParts('blobs', upload.key, upload.uploadId)).length;
    }
    if (stored >= n) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`the endpoint never stored ${n} parts`);
}

async function* chunks(data: Uint8Array, size: number): AsyncIterable<Uint8Array> {
  for (let at = 0; at < data.byteLength; at += size) yield data.subarray(at, Math.min(at + size, data.byteLength));
}

/** `total` pseudo-random bytes in `size` chunks, made on demand into one reused buffer, hashed as they go. */
async function* generated(total: number, size: number, hash: ReturnType<typeof createHash>): AsyncIterable<Uint8Array> {
  const buffer = Buffer.allocUnsafe(size);
  for (let at = 0; at < total; at += size) {
    const n = Math.min(size, total - at);
    buffer.writeUInt32LE(at, 0);
    buffer.fill(at & 0xff, 4, n);
    const chunk = buffer.subarray(0, n);
    hash.update(chunk);
    yield chunk;
  }
}
