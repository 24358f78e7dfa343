/**
 * The S3 blob backend against a third-party S3 server, s3rver (npm): the same BlobStore contract
 * (blobs/blob-store.case.ts) as against edgeport's own S3 face (s3-blob-store.test.ts), and an
 * engine opened on it with the start-up sweep, which s3rver's missing ListMultipartUploads (501)
 * must not stop.
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import { pino } from 'pino';
import { S3BlobStore } from '../../src/store/blobs/s3-blob-store.ts';
import { parseBlobsUrl } from '../../src/store/blobs/open-blob-store.ts';
import { openStoreEngine } from '../../src/store/engine/open-store-engine.ts';
import { readAll } from '../helpers/engine.ts';
import { startS3rver, type S3rverInstance } from '../helpers/s3rver.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { pattern, runBlobStoreSuite } from './blobs/blob-store.case.ts';

const PART = 5 * 1024 * 1024;

async function openStore(t: test.TestContext, server: S3rverInstance): Promise<S3BlobStore> {
  const location = parseBlobsUrl(server.blobsUrl('blobs'));
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

runBlobStoreSuite('S3BlobStore on s3rver', {
  largeBytes: PART,
  open: async (t) => openStore(t, await startS3rver(t)),
});

test('an engine on s3rver starts (the sweep warns once that it lacks ListMultipartUploads) and keeps bodies byte-exact', { timeout: 60_000 }, async (t) => {
  const server = await startS3rver(t);
  const warnings: string[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line).msg as string) });
  const dataDir = tempDir(t);
  const engine = await openStoreEngine({ dataDir, blobsUrl: server.blobsUrl('engine'), recover: true, logger });
  t.after(() => engine.close());
  assert.deepEqual(warnings.filter((w) => /does not implement ListMultipartUploads/.test(w)).length, 1);
  await engine.createBucket('bodies');
  const body = pattern(2 * PART + 4321, 5);
  const put = await engine.put('bodies', 'big', {
    stream: (async function* () {
      for (let at = 0; at < body.length; at += 1 << 20) yield body.subarray(at, at + (1 << 20));
    })(),
    length: body.length,
  });
  assert.equal(put?.size, body.length);
  const got = await engine.get('bodies', 'big', { range: { offset: PART - 10, length: 20 } });
  assert.ok(Buffer.from(body.subarray(PART - 10, PART + 10)).equals(await readAll(got?.body?.stream())));
  assert.ok(Buffer.from(body).equals(await readAll((await engine.get('bodies', 'big'))?.body?.stream())));
  // A second start on the same store: its sweep passes again.
  const again = await openStoreEngine({ dataDir: tempDir(t), blobsUrl: server.blobsUrl('engine'), recover: true, sharedSweepAgeMs: 0 });
  await again.close();
});
