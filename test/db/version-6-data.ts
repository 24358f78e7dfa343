/**
 * What an edgeport of schema version 6 (before buckets and S3 keys belonged to accounts) left in its
 * database, written with plain SQL, and what the first start after migration 7 must make of it: the
 * same rows on SQLite and PostgreSQL (sqlite-migrations.test.ts, pg-migrations.test.ts).
 */
import assert from 'node:assert/strict';
import type { MetadataStore } from '../../src/db/metadata-store.ts';
import { adoptUnowned } from '../../src/store/engine/adopt-unowned.ts';

export const FIRST = 'f'.repeat(32);
export const SECOND = 'c'.repeat(32);

type Run = (sql: string, ...values: unknown[]) => unknown;

/** Two accounts (FIRST is the older), two buckets with an object and an upload, three keys: one made by SECOND, one by FIRST, the bootstrap key of none. */
export async function seedVersion6(run: Run, placeholder: (n: number) => string = () => '?'): Promise<void> {
  const p = (count: number) => Array.from({ length: count }, (_, i) => placeholder(i + 1)).join(', ');
  const utf8 = (text: string) => (placeholder(1) === '?' ? text : Buffer.from(text));
  await run(`INSERT INTO accounts (id, email, name, key_hash, created) VALUES (${p(5)})`, SECOND, 'second@example.com', 'second', 'scrypt$x', 20);
  await run(`INSERT INTO accounts (id, email, name, key_hash, created) VALUES (${p(5)})`, FIRST, 'first@example.com', 'first', 'scrypt$x', 10);
  for (const bucket of ['photos', 'logs']) await run(`INSERT INTO buckets (name, created, storage_class) VALUES (${p(3)})`, bucket, 5, 'InfrequentAccess');
  await run(
    `INSERT INTO objects (bucket, key, version, size, etag, uploaded, http_metadata, custom_metadata, checksums, storage_class, has_inline, blob_id, part_count)
    VALUES (${p(13)})`,
    'photos',
    utf8('cats/tom.jpg'),
    'v1',
    3,
    'etag1',
    7,
    '{"contentType":"image/jpeg"}',
    '{}',
    '{"md5":"etag1"}',
    'Standard',
    0,
    'blob-1',
    0,
  );
  await run(
    `INSERT INTO uploads (upload_id, bucket, key, created, http_metadata, custom_metadata, storage_class, state)
    VALUES (${p(8)})`,
    'upload-1',
    'logs',
    utf8('big.bin'),
    8,
    '{}',
    '{}',
    'Standard',
    'active',
  );
  for (const [id, created] of [
    ['KEYOFSECOND', 1],
    ['KEYOFFIRST', 2],
    ['BOOTSTRAPKEY', 0],
  ] as const) {
    await run(`INSERT INTO s3_access_keys (access_key_id, secret, created, revoked) VALUES (${p(4)})`, id, `secret-of-${id}`, created, null);
  }
  await run(`INSERT INTO s3_access_key_owners (access_key_id, account_id) VALUES (${p(2)})`, 'KEYOFSECOND', SECOND);
  await run(`INSERT INTO s3_access_key_owners (access_key_id, account_id) VALUES (${p(2)})`, 'KEYOFFIRST', FIRST);
}

/** After migration 7 (already applied by opening `store`), the start's adoption gives FIRST what had no owner, with every row intact. */
export async function checkAdoption(store: MetadataStore): Promise<void> {
  const owners = async () => (await store.listAccessKeys()).map((key) => [key.accessKeyId, key.accountId, key.permission, key.buckets]);
  assert.deepEqual(
    await owners(),
    [
      ['BOOTSTRAPKEY', null, 'admin_read_write', null],
      ['KEYOFSECOND', SECOND, 'admin_read_write', null],
      ['KEYOFFIRST', FIRST, 'admin_read_write', null],
    ],
    'the migration moves the owners into the keys; the bootstrap key has none yet',
  );
  assert.deepEqual(await adoptUnowned(store, FIRST), { buckets: ['logs', 'photos'], conflicts: [], accessKeys: 1 });
  assert.deepEqual(await adoptUnowned(store, FIRST), { buckets: [], conflicts: [], accessKeys: 0 }, 'a second start changes nothing');
  assert.deepEqual(
    (await owners()).map(([id, owner]) => [id, owner]),
    [
      ['BOOTSTRAPKEY', FIRST],
      ['KEYOFSECOND', SECOND],
      ['KEYOFFIRST', FIRST],
    ],
  );
  assert.equal((await store.accessKey('BOOTSTRAPKEY'))?.secret, 'secret-of-BOOTSTRAPKEY');
  assert.deepEqual(
    (await store.listBuckets({ account: FIRST })).map((b) => [b.name, b.created, b.storageClass]),
    [
      [`${FIRST}/logs`, 5, 'InfrequentAccess'],
      [`${FIRST}/photos`, 5, 'InfrequentAccess'],
    ],
  );
  assert.deepEqual(await store.listBuckets({ unowned: true }), []);
  assert.deepEqual(await store.listBuckets({ account: SECOND }), []);
  const object = await store.getObject(`${FIRST}/photos`, 'cats/tom.jpg');
  assert.deepEqual([object?.meta.etag, object?.meta.httpMetadata, object?.data], ['etag1', { contentType: 'image/jpeg' }, { kind: 'blob', blobId: 'blob-1' }]);
  assert.equal(await store.getObject('photos', 'cats/tom.jpg'), null);
  assert.equal((await store.getUpload(`${FIRST}/logs`, 'big.bin', 'upload-1'))?.state, 'active');
  assert.deepEqual(
    (await store.listUploads(`${FIRST}/logs`, '')).map((u) => u.uploadId),
    ['upload-1'],
  );
}
