/**
 * The S3 blob backend when its store fails: a store that accepts and never answers, one that
 * answers 503 SlowDown or 507 (full), one that resets connections, and one that lacks an optional
 * call (501). Each call ends within its deadline with a BackendFault naming the blob store (or,
 * for what is not an outage, STORE_INTERNAL), and failures at start name the store, the call,
 * the HTTP status and what to check.
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import { BackendFault } from '../../src/core/errors/backend-fault.ts';
import { pino } from 'pino';
import { S3BlobStore } from '../../src/store/blobs/s3-blob-store.ts';
import { parseBlobsUrl } from '../../src/store/blobs/open-blob-store.ts';
import { StoreError } from '../../src/store/engine/errors.ts';
import { openStoreEngine } from '../../src/store/engine/open-store-engine.ts';
import { readAll } from '../helpers/engine.ts';
import { startFaultyS3, type FaultyS3 } from '../helpers/faulty-s3.ts';
import { startS3Endpoint } from '../helpers/s3-endpoint.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { pattern, writeThroughScratch } from './blobs/blob-store.case.ts';

const TIMEOUT_MS = 600;
const PART = 5 * 1024 * 1024;

async function faultyStore(
  t: test.TestContext,
  options: { timeoutMs?: number } = {},
): Promise<{ store: S3BlobStore; faulty: FaultyS3; url: string; warnings: string[] }> {
  const endpoint = await startS3Endpoint(t);
  const faulty = await startFaultyS3(t, endpoint.endpoint);
  const url = endpoint.blobsUrl('faults').replace(endpoint.endpoint, faulty.endpoint);
  const location = parseBlobsUrl(url);
  if (location.kind !== 's3') throw new Error('unreachable');
  const warnings: string[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line).msg as string) });
  const store = await S3BlobStore.open({
    bucket: location.bucket,
    prefix: location.prefix,
    partBytes: PART,
    timeoutMs: options.timeoutMs ?? TIMEOUT_MS,
    logger,
    client: { endpoint: location.endpoint!, region: location.region!, credentials: location.credentials!, forcePathStyle: true },
  });
  t.after(() => store.close());
  return { store, faulty, url, warnings };
}

/** Runs `call`, which must fail with a BackendFault of the blob store; answers it and how long it took. */
async function faultOf(call: () => Promise<unknown>): Promise<{ fault: BackendFault; ms: number }> {
  const started = performance.now();
  try {
    await call();
  } catch (error) {
    assert.ok(error instanceof BackendFault, `a BackendFault, not ${String(error)}`);
    assert.equal(error.backend, 'blob store');
    return { fault: error, ms: performance.now() - started };
  }
  assert.fail('the call succeeded');
}

test('a store that accepts and never answers: every call fails within its deadline, as unavailable', { timeout: 60_000 }, async (t) => {
  const { store, faulty } = await faultyStore(t);
  const committed = await (await writeThroughScratch(store, pattern(1000), 1000)).commit();
  faulty.set({ kind: 'hang' });
  const put = await faultOf(async () => (await writeThroughScratch(store, pattern(100_000), 65_536)).commit());
  assert.equal(put.fault.code, 'BACKEND_UNAVAILABLE');
  assert.match(put.fault.message, /^The blob store did not answer PutObject within 600 ms$/);
  const get = await faultOf(() => readAll(store.read(committed.blobId, 0, 1000)));
  assert.match(get.fault.message, /did not answer GetObject within 600 ms/);
  const list = await faultOf(() => store.list());
  const del = await faultOf(() => store.delete([committed.blobId]));
  const large = await faultOf(async () => (await writeThroughScratch(store, pattern(PART + 1000), 1 << 20)).commit());
  assert.match(large.fault.message, /did not answer (CreateMultipartUpload|UploadPart) within 600 ms/);
  await faultOf(() => store.checkReachable());
  for (const [name, { ms }] of Object.entries({ put, get, list, del, large })) {
    t.diagnostic(`${name}: failed after ${Math.round(ms)} ms`);
    // Two tries of 600 ms at most each, and the SDK's short backoff between them; a busy machine adds some.
    assert.ok(ms < 6_000, `${name} took ${Math.round(ms)} ms`);
  }
  faulty.set({ kind: 'pass' });
  assert.equal(await readAll(store.read(committed.blobId, 0, 1000)).then((b) => b.length), 1000, 'back once the store answers');
});

test('503 SlowDown, 500 and reset connections are unavailable; 507 and QuotaExceeded are full; 404 is no fault', { timeout: 60_000 }, async (t) => {
  const { store, faulty } = await faultyStore(t);
  faulty.set({ kind: 'answer', status: 503, code: 'SlowDown', message: 'Please reduce your request rate.' });
  assert.match(
    (await faultOf(async () => (await writeThroughScratch(store, pattern(70_000), 70_000)).commit())).fault.message,
    /^The blob store answered PutObject with HTTP 503 SlowDown$/,
  );
  faulty.set({ kind: 'answer', status: 500, code: 'InternalError' });
  assert.equal((await faultOf(() => store.list())).fault.code, 'BACKEND_UNAVAILABLE');
  faulty.set({ kind: 'reset' });
  assert.equal((await faultOf(() => store.list())).fault.code, 'BACKEND_UNAVAILABLE');
  faulty.set({ kind: 'answer', status: 507, code: 'XMinioStorageFull', message: 'Storage backend has reached its minimum free drive threshold.' });
  const full = await faultOf(async () => (await writeThroughScratch(store, pattern(70_000), 70_000)).commit());
  assert.equal(full.fault.code, 'BACKEND_FULL');
  assert.equal(full.fault.message, 'The blob store is full');
  faulty.set({ kind: 'answer', status: 403, code: 'QuotaExceeded' });
  assert.equal((await faultOf(async () => (await writeThroughScratch(store, pattern(10), 10)).commit())).fault.code, 'BACKEND_FULL');
  faulty.set({ kind: 'answer', status: 404, code: 'NoSuchKey' });
  await assert.rejects(
    readAll(store.read('0123456789abcdef0123456789abcdef', 0, 1)),
    (error: unknown) => error instanceof StoreError && error.code === 'STORE_INTERNAL',
  );
});

test(
  'a store without ListMultipartUploads (501): the sweep warns once and aborts nothing; a start-up failure names store, call and status',
  { timeout: 60_000 },
  async (t) => {
    const { store, faulty, url, warnings } = await faultyStore(t);
    faulty.set(
      { kind: 'answer', status: 501, code: 'NotImplemented', message: 'A parameter you provided implies functionality that is not implemented' },
      (method, path) => method === 'GET' && /[?&]uploads/.test(path),
    );
    assert.equal(await store.clearTemporary(), 0);
    assert.equal(await store.clearTemporary({ olderThanMs: 1000 }), 0);
    assert.equal(warnings.filter((w) => w.includes('does not implement ListMultipartUploads')).length, 1, 'warned once');
    assert.match(warnings[0]!, /lifecycle rule AbortIncompleteMultipartUpload/);
    // The whole start-up sweep passes too (orphans by the engine's records).
    const engine = await openStoreEngine({ dataDir: tempDir(t), blobsUrl: url, recover: true, blobsTimeoutMs: TIMEOUT_MS });
    await engine.close();

    // Any other failure at start: the store (secret hidden), the call, the status, what to check.
    faulty.set({ kind: 'answer', status: 403, code: 'AccessDenied' }, (method, path) => method === 'GET' && /list-type=2/.test(path));
    await assert.rejects(openStoreEngine({ dataDir: tempDir(t), blobsUrl: url, recover: true, blobsTimeoutMs: TIMEOUT_MS }), (error: unknown) => {
      assert.ok(error instanceof Error);
      assert.match(
        error.message,
        /^The blob store s3:\/\/blobs\/faults\?endpoint=http:\/\/127\.0\.0\.1:\d+&.*secret-access-key=\*\*\* could not be swept of what a crash left at start: ListObjectsV2 was answered HTTP 403 \(AccessDenied.*\)\. Check access-key-id and secret-access-key/,
      );
      return true;
    });
    faulty.set({ kind: 'hang' });
    const started = performance.now();
    await assert.rejects(
      openStoreEngine({ dataDir: tempDir(t), blobsUrl: url, recover: true, blobsTimeoutMs: TIMEOUT_MS }),
      /could not be opened: HeadBucket got no HTTP answer \(.*\)\. Check the endpoint \(scheme, host and port\)/,
    );
    t.diagnostic(`a silent store failed the start after ${Math.round(performance.now() - started)} ms`);
  },
);
