/**
 * The MetadataStore contract on SQLite (metadata-store.case.ts, account-usage.case.ts), and how
 * SQLite reads a bucket's usage: in chunks.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import Database from 'better-sqlite3';
import type { AccountQuotas } from '../../src/config/quotas.ts';
import { FakeClock } from '../../src/core/clock.ts';
import { SqliteMetadataStore } from '../../src/db/sqlite/sqlite-metadata-store.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { runAccountUsageSuite } from './account-usage.case.ts';
import { GRACE_MS, runMetadataStoreSuite } from './metadata-store.case.ts';
import { TEST_SECRETS } from '../helpers/secrets.ts';

const suite = {
  clock: () => new FakeClock(Date.UTC(2026, 0, 1)),
  async open(t: TestContext, clock: FakeClock, quotas?: AccountQuotas) {
    const store = new SqliteMetadataStore({
      file: join(tempDir(t), 'metadata.sqlite'),
      clock,
      reclaimGraceMs: GRACE_MS,
      ...(quotas ? { quotas } : {}),
      secrets: TEST_SECRETS,
    });
    t.after(() => store.close());
    return store;
  },
};
runMetadataStoreSuite(suite);
runAccountUsageSuite(suite);

test("a bucket's usage is read in chunks, the event loop running between them, and counts every row once", { timeout: 60_000 }, async (t) => {
  const file = join(tempDir(t), 'metadata.sqlite');
  const store = new SqliteMetadataStore({ file, clock: new FakeClock(Date.UTC(2026, 0, 1)), reclaimGraceMs: GRACE_MS });
  t.after(() => store.close());
  await store.insertBucket({ name: 'b1', created: 1, storageClass: 'Standard' });
  // 25,001 objects (three chunks and one more row), and as many active uploads, most under one key.
  const writer = new Database(file);
  try {
    const object =
      writer.prepare(`INSERT INTO objects (bucket, key, version, size, etag, uploaded, http_metadata, custom_metadata, checksums, storage_class, has_inline, blob_id, part_count)
      VALUES ('b1', ?, ?, 2, 'e', 0, '{}', '{"k":"v"}', '{}', 'Standard', 0, ?, 0)`);
    const upload = writer.prepare(`INSERT INTO uploads (upload_id, bucket, key, created, http_metadata, custom_metadata, storage_class, state)
      VALUES (?, 'b1', ?, 0, '{}', '{}', 'Standard', ?)`);
    writer.transaction(() => {
      for (let i = 0; i < 25_001; i++) {
        object.run(`k/${String(i).padStart(6, '0')}`, `v${i}`, `b${i}`);
        upload.run(`u${String(i).padStart(6, '0')}`, i < 100 ? `k/01-${i}` : 'k/same', 'active');
      }
      upload.run('done', 'k/same', 'aborted');
    })();
  } finally {
    writer.close();
  }
  let turns = 0;
  const counter = setInterval(() => turns++, 0);
  t.after(() => clearInterval(counter));
  const usage = (await store.bucketUsage('b1', 1_000_000))!;
  assert.deepEqual(usage, { objectCount: 25_001, payloadSize: 50_002, metadataSize: 25_001 * 11, uploadCount: 25_001, complete: true });
  assert.ok(turns >= 2, `timers ran ${turns} times while it counted`);
  const bounded = (await store.bucketUsage('b1', 25_001))!;
  assert.deepEqual([bounded.objectCount, bounded.uploadCount, bounded.complete], [25_001, 25_001, false]);
  const under = (await store.bucketUsage('b1', 12_345))!;
  assert.deepEqual([under.objectCount, under.payloadSize, under.uploadCount, under.complete], [12_345, 24_690, 12_345, false]);
  const folder = (await store.bucketUsage('b1', 1_000_000, 'k/01'))!;
  assert.deepEqual([folder.objectCount, folder.uploadCount, folder.complete], [10_000, 100, true]);
});
