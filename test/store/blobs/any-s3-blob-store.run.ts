/**
 * The BlobStore contract (blob-store.case.ts) and an engine's start-up sweep against any S3 server
 * named by EDGEPORT_BLOBS_TEST_URL (an `s3://bucket/prefix?endpoint=...` [blobs] url), each test
 * under a prefix of its own. Not part of `npm test` (its name is not *.test.ts): run by
 * bin/radosgw-one-node.sh against Ceph's radosgw, or by hand:
 *   EDGEPORT_BLOBS_TEST_URL='s3://...' node --import tsx --test test/store/blobs/any-s3-blob-store.run.ts
 * It fails, never skips, without the variable.
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import { randomHexId } from '../../../src/core/ids.ts';
import { openBlobStore, parseBlobsUrl } from '../../../src/store/blobs/open-blob-store.ts';
import { openStoreEngine } from '../../../src/store/engine/open-store-engine.ts';
import { readAll } from '../../helpers/engine.ts';
import { tempDir } from '../../helpers/temp-dir.ts';
import { pattern, runBlobStoreSuite } from './blob-store.case.ts';

const PART = 8 * 1024 * 1024;
const base = process.env.EDGEPORT_BLOBS_TEST_URL;

/** The URL under a fresh prefix of its own. */
function freshUrl(): string {
  if (base === undefined) throw new Error('Set EDGEPORT_BLOBS_TEST_URL to an s3:// [blobs] url (bin/radosgw-one-node.sh does).');
  const location = parseBlobsUrl(base);
  assert.equal(location.kind, 's3');
  return base.replace(
    /^(s3:\/\/[^/?]+)(\/[^?]*)?/,
    `$1/${location.kind === 's3' && location.prefix ? `${location.prefix}/` : ''}run-${randomHexId().slice(0, 12)}`,
  );
}

runBlobStoreSuite('S3BlobStore on EDGEPORT_BLOBS_TEST_URL', {
  largeBytes: PART,
  open: async (t) => {
    const { store } = await openBlobStore({ url: freshUrl(), dataDir: tempDir(t) });
    t.after(() => store.close());
    return store;
  },
});

test('an engine starts on it (the start-up sweep) and keeps a multipart body byte-exact', { timeout: 120_000 }, async (t) => {
  const engine = await openStoreEngine({ dataDir: tempDir(t), blobsUrl: freshUrl(), recover: true });
  t.after(() => engine.close());
  await engine.createBucket('contract');
  const body = pattern(2 * PART + 12_345, 7);
  await engine.put('contract', 'big', {
    stream: (async function* () {
      for (let at = 0; at < body.length; at += 1 << 20) yield body.subarray(at, at + (1 << 20));
    })(),
    length: body.length,
  });
  assert.ok(Buffer.from(body).equals(await readAll((await engine.get('contract', 'big'))?.body?.stream())));
  await engine.delete('contract', ['big']);
});
