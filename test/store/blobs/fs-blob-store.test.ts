/** The BlobStore contract on local disk (blob-store.case.ts), and where its files go. */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { FsBlobStore } from '../../../src/store/blobs/fs-blob-store.ts';
import { tempDir } from '../../helpers/temp-dir.ts';
import { runBlobStoreSuite } from './blob-store.case.ts';

runBlobStoreSuite('FsBlobStore', {
  largeBytes: 300_000,
  open: async (t) => {
    const store = await FsBlobStore.open(tempDir(t));
    t.after(() => store.close());
    return store;
  },
});

test('FsBlobStore: bytes go to tmp/<id> while written, then blobs/<id>; dir names the blobs', async (t) => {
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
