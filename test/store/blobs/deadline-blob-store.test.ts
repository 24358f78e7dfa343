/**
 * A file:// blob store's deadline (deadline-blob-store.ts): the BlobStore contract through it, and
 * a file that hangs its reader for real (a FIFO with no writer: open() blocks in a worker thread
 * until one comes) answered with a BackendFault within the deadline; past `maxStuck` hung calls,
 * calls fail at once without touching the directory, and work again once the mount answers.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, constants, openSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { backendFaultOf } from '../../../src/core/errors/backend-fault.ts';
import { DeadlineBlobStore } from '../../../src/store/blobs/deadline-blob-store.ts';
import { FsBlobStore } from '../../../src/store/blobs/fs-blob-store.ts';
import { openBlobStore } from '../../../src/store/blobs/open-blob-store.ts';
import { readAll } from '../../helpers/engine.ts';
import { tempDir } from '../../helpers/temp-dir.ts';
import { pattern, runBlobStoreSuite } from './blob-store.case.ts';

runBlobStoreSuite('DeadlineBlobStore over FsBlobStore', {
  largeBytes: 300_000,
  open: async (t) => {
    const root = tempDir(t);
    const store = await DeadlineBlobStore.open(() => FsBlobStore.open(root), { timeoutMs: 5_000 });
    t.after(() => store.close());
    return store;
  },
});

/** Puts a FIFO where blob `blobId`'s file is: opening it for reading hangs until a writer opens it. */
function hangBlob(t: TestContext, root: string, blobId: string): () => void {
  const path = join(root, 'blobs', blobId);
  rmSync(path);
  execFileSync('mkfifo', [path]);
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    // A writer opens and closes it: every reader blocked in open() returns, then reads the end.
    closeSync(openSync(path, constants.O_WRONLY | constants.O_NONBLOCK));
  };
  // The hung opens hold worker threads: the test process could not end with them blocked.
  t.after(release);
  return release;
}

async function storedBlob(store: DeadlineBlobStore, bytes: Uint8Array): Promise<string> {
  const writer = await store.createWriter({ size: bytes.byteLength });
  await writer.write(bytes);
  return (await writer.commit()).blobId;
}

async function rejectsWithFault(promise: Promise<unknown>, why: RegExp): Promise<number> {
  const started = performance.now();
  await assert.rejects(promise, (error: unknown) => {
    const fault = backendFaultOf(error);
    assert.ok(fault, `a BackendFault, not ${String(error)}`);
    assert.equal(fault.code, 'BACKEND_UNAVAILABLE');
    assert.equal(fault.retryAfterS, 1);
    assert.match(fault.message, why);
    return true;
  });
  return performance.now() - started;
}

test(
  'a read that hangs fails within the deadline; past two hung calls, calls fail at once; once the mount answers, all works',
  { timeout: 30_000 },
  async (t) => {
    const root = tempDir(t);
    const store = await DeadlineBlobStore.open(() => FsBlobStore.open(root), { timeoutMs: 300 });
    t.after(() => store.close());
    assert.equal(store.dir, undefined, 'reads go through read(), with the deadline');
    const hung = await storedBlob(store, pattern(1000));
    const fine = await storedBlob(store, pattern(2000, 3));
    const release = hangBlob(t, root, hung);

    const first = await rejectsWithFault(readAll(store.read(hung, 0, 1000)), /^The blob store did not answer read within 300 ms$/);
    assert.ok(first >= 290 && first < 2_000, `the first hung read failed after ${Math.round(first)} ms`);
    assert.equal(store.stuck, 1);
    // One hung call does not stop the others.
    assert.deepEqual(Uint8Array.from(await readAll(store.read(fine, 0, 2000))), pattern(2000, 3));
    await rejectsWithFault(readAll(store.read(hung, 0, 1000)), /did not answer read within 300 ms/);
    assert.equal(store.stuck, 2);

    // Two worker threads held: nothing more is sent to the directory, reads and writes fail at once.
    const refused = await rejectsWithFault(readAll(store.read(fine, 0, 2000)), /^The blob store has 2 calls unanswered for over 300 ms$/);
    assert.ok(refused < 100, `refused after ${Math.round(refused)} ms`);
    await rejectsWithFault(store.createWriter(), /has 2 calls unanswered/);
    await rejectsWithFault(store.checkReachable(), /has 2 calls unanswered/);

    release();
    for (let i = 0; i < 100 && store.stuck > 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(store.stuck, 0, 'the late calls returned and are no longer counted');
    assert.deepEqual(Uint8Array.from(await readAll(store.read(fine, 0, 2000))), pattern(2000, 3));
    const again = await storedBlob(store, pattern(500));
    assert.deepEqual(Uint8Array.from(await readAll(store.read(again, 100, 400))), pattern(500).subarray(100));
  },
);

test('a reader that stops early leaves no call counted and no file open', { timeout: 10_000 }, async (t) => {
  const root = tempDir(t);
  const store = await DeadlineBlobStore.open(() => FsBlobStore.open(root), { timeoutMs: 1_000 });
  t.after(() => store.close());
  const blobId = await storedBlob(store, pattern(1024 * 1024));
  for await (const chunk of store.read(blobId, 0, 1024 * 1024)) {
    assert.ok(chunk.byteLength > 0);
    break;
  }
  assert.equal(store.stuck, 0);
  // The file was closed: a descriptor still open on it would show under /proc/self/fd.
  await new Promise((resolve) => setTimeout(resolve, 50));
  const open = readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return execFileSync('readlink', [`/proc/self/fd/${fd}`])
        .toString()
        .includes(blobId);
    } catch {
      return false;
    }
  });
  assert.deepEqual(open, []);
});

test('[blobs] url = "file:///dir" opens a store with the deadline; no url, the data dir streams its files directly', { timeout: 10_000 }, async (t) => {
  const dir = tempDir(t);
  const shared = await openBlobStore({ url: `file://${join(dir, 'shared')}`, dataDir: join(dir, 'data'), timeoutMs: 700 });
  t.after(() => shared.store.close());
  assert.ok(shared.store instanceof DeadlineBlobStore);
  assert.equal(shared.shared, true);
  const own = await openBlobStore({ dataDir: join(dir, 'data') });
  t.after(() => own.store.close());
  assert.ok(own.store instanceof FsBlobStore);
  assert.equal(own.store.dir, join(dir, 'data', 'blobs'));
});
