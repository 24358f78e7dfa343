/**
 * The BlobStore contract, run against each implementation (fs-blob-store.test.ts, and the S3
 * backend in ../s3-blob-store.test.ts): durable writes read back by range, callers' reused
 * chunk buffers, list/delete, abort, and the age-limited sweep of abandoned writes (what a sweep
 * without an age removes differs: see each implementation's tests).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test, type TestContext } from 'node:test';
import { randomHexId } from '../../../src/core/ids.ts';
import type { BlobStore } from '../../../src/store/blobs/blob-store.ts';
import { readAll } from '../../helpers/engine.ts';

export interface BlobStoreSuiteOptions {
  /** A fresh, empty store, closed when the test ends. */
  open(t: TestContext): Promise<BlobStore>;
  /** A body size that the store cannot keep in memory alone (S3: above one part); bigger than 64 KiB. */
  largeBytes: number;
}

const md5 = (data: Uint8Array): string => createHash('md5').update(data).digest('hex');

export function pattern(size: number, seed = 7): Uint8Array {
  const out = new Uint8Array(size);
  for (let i = 0; i < size; i++) out[i] = (i * seed + (i >>> 11)) % 251;
  return out;
}

/** Writes `data` in `chunkBytes` pieces through one reused buffer, as a socket stream hands them over. */
export async function writeThroughScratch(store: BlobStore, data: Uint8Array, chunkBytes: number, sizeHint?: number) {
  const writer = await store.createWriter(sizeHint === undefined ? undefined : { size: sizeHint });
  const scratch = new Uint8Array(chunkBytes);
  for (let at = 0; at < data.byteLength; at += chunkBytes) {
    const chunk = data.subarray(at, Math.min(at + chunkBytes, data.byteLength));
    scratch.set(chunk);
    await writer.write(scratch.subarray(0, chunk.byteLength));
    scratch.fill(0xee);
  }
  return writer;
}

export function runBlobStoreSuite(name: string, { open, largeBytes }: BlobStoreSuiteOptions): void {
  test(`${name}: a committed blob reads back whole and by range; chunk buffers may be reused at once`, { timeout: 10_000 }, async (t) => {
    const store = await open(t);
    for (const size of [0, 1, 100_000, largeBytes + 12_345]) {
      const data = pattern(size, (size % 13) + 3);
      const { blobId, size: written } = await (await writeThroughScratch(store, data, 65_536)).commit();
      assert.equal(written, size);
      assert.match(blobId, /^[0-9a-f]{32}$/);
      assert.equal(md5(await readAll(store.read(blobId, 0, size))), md5(data), `${size} bytes`);
      if (size > 10) {
        const from = Math.floor(size / 3);
        assert.ok(Buffer.from(data.subarray(from, size - 1)).equals(await readAll(store.read(blobId, from, size - 1 - from))));
        assert.ok(Buffer.from(data.subarray(size - 1)).equals(await readAll(store.read(blobId, size - 1, 1))));
      }
      assert.equal((await readAll(store.read(blobId, 0, 0))).length, 0);
    }
  });

  test(`${name}: a writer told the size stores exactly the bytes written, whether more or fewer came`, { timeout: 10_000 }, async (t) => {
    const store = await open(t);
    const size = largeBytes + 4321;
    for (const hint of [size, 1, size - 1000, size + 1, size * 2]) {
      const data = pattern(size, (hint % 11) + 2);
      const { blobId, size: written } = await (await writeThroughScratch(store, data, 65_536, hint)).commit();
      assert.equal(written, size, `hint ${hint}`);
      assert.equal(md5(await readAll(store.read(blobId, 0, size))), md5(data), `hint ${hint}`);
      assert.equal((await readAll(store.read(blobId, size - 10, 10))).length, 10, `hint ${hint}`);
    }
  });

  test(`${name}: list shows committed blobs only; delete ignores missing ids; bad ids are refused`, { timeout: 10_000 }, async (t) => {
    const store = await open(t);
    const a = await (await writeThroughScratch(store, pattern(1000), 1000)).commit();
    const b = await (await writeThroughScratch(store, pattern(70_000), 8192)).commit();
    const pending = await writeThroughScratch(store, pattern(5000), 5000);
    assert.deepEqual((await store.list()).sort(), [a.blobId, b.blobId].sort());
    assert.deepEqual(await store.list({ olderThanMs: 60_000 }), [], 'both were just written');
    await store.delete([a.blobId, randomHexId()]);
    assert.deepEqual(await store.list(), [b.blobId]);
    await store.delete([]);
    await assert.rejects(store.delete(['../etc/passwd']), /Not a blob id/);
    await assert.rejects(readAll(store.read('../x', 0, 1)), /Not a blob id/);
    await pending.abort();
  });

  test(`${name}: abort leaves nothing behind, is idempotent, and closes the writer`, { timeout: 10_000 }, async (t) => {
    const store = await open(t);
    const writer = await writeThroughScratch(store, pattern(largeBytes + 1), 1 << 20);
    await writer.abort();
    await writer.abort();
    await assert.rejects(async () => {
      await writer.write(new Uint8Array(1));
      await writer.commit();
    });
    assert.deepEqual(await store.list(), []);
    assert.equal(await store.clearTemporary(), 0);
  });

  test(`${name}: clearTemporary with an age keeps fresh abandoned writes; published blobs are not temporary`, { timeout: 10_000 }, async (t) => {
    const store = await open(t);
    const abandoned = await writeThroughScratch(store, pattern(largeBytes + 1), 1 << 20);
    const committed = await (await writeThroughScratch(store, pattern(2000), 2000)).commit();
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(await store.clearTemporary({ olderThanMs: 60 * 60 * 1000 }), 0, "a fresh one may be another instance's");
    assert.deepEqual(await store.list(), [committed.blobId], 'published blobs are not temporary');
    await abandoned.abort();
    assert.equal(await store.clearTemporary(), 0);
  });
}
