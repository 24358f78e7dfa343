/** The BlobStore contract on local disk (blob-store.case.ts), and where its files go. */
import assert from 'node:assert/strict';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { FsBlobStore } from '../../../src/store/blobs/fs-blob-store.ts';
import { tempDir } from '../../helpers/temp-dir.ts';
import { readAll } from '../../helpers/engine.ts';
import { pattern, runBlobStoreSuite, writeThroughScratch } from './blob-store.case.ts';

runBlobStoreSuite('FsBlobStore', {
  largeBytes: 300_000,
  open: async (t) => {
    const store = await FsBlobStore.open(tempDir(t));
    t.after(() => store.close());
    return store;
  },
});

test('FsBlobStore: bytes go to tmp/<id> while written, then blobs/<id>; dir names the blobs', { timeout: 10_000 }, async (t) => {
  const root = tempDir(t);
  const store = await FsBlobStore.open(root);
  assert.equal(store.dir, join(root, 'blobs'));
  const writer = await store.createWriter();
  await writer.write(new Uint8Array(10));
  assert.equal(readdirSync(join(root, 'tmp')).length, 1);
  const { blobId } = await writer.commit();
  assert.deepEqual(readdirSync(join(root, 'tmp')), []);
  assert.deepEqual(readdirSync(join(root, 'blobs')), [blobId]);
});

test('FsBlobStore: a file sized up front ends at the bytes written: nothing past them when fewer came', { timeout: 10_000 }, async (t) => {
  const store = await FsBlobStore.open(tempDir(t));
  t.after(() => store.close());
  for (const hint of [500_000, 400_000, 1]) {
    const { blobId } = await (await writeThroughScratch(store, pattern(400_000), 65_536, hint)).commit();
    assert.equal(statSync(join(store.dir, blobId)).size, 400_000, `hint ${hint}`);
  }
});

test('FsBlobStore: any chunking, through one reused buffer, stores exactly the bytes written (writes are staged behind the caller)', { timeout: 10_000 }, async (t) => {
  const store = await FsBlobStore.open(tempDir(t));
  t.after(() => store.close());
  await fc.assert(fc.asyncProperty(fc.array(fc.integer({ min: 0, max: 700_000 }), { maxLength: 8 }), async (sizes) => {
    const data = pattern(sizes.reduce((a, b) => a + b, 0), sizes.length + 3);
    const writer = await store.createWriter();
    const scratch = new Uint8Array(Math.max(1, ...sizes));
    let at = 0;
    for (const size of sizes) {
      scratch.set(data.subarray(at, at + size));
      await writer.write(scratch.subarray(0, size));
      scratch.fill(0xee);
      at += size;
    }
    const { blobId, size } = await writer.commit();
    assert.equal(size, data.byteLength);
    assert.ok(Buffer.from(data).equals(await readAll(store.read(blobId, 0, size))));
  }), { numRuns: 25 });
});

test('FsBlobStore: abort while a staged write is on the disk leaves nothing behind', { timeout: 10_000 }, async (t) => {
  const root = tempDir(t);
  const store = await FsBlobStore.open(root);
  t.after(() => store.close());
  const writer = await store.createWriter();
  await writer.write(new Uint8Array(600_000));
  await writer.abort();
  assert.deepEqual(readdirSync(join(root, 'tmp')), []);
  assert.deepEqual(await store.list(), []);
});
