/**
 * SQLite migrations applied to a database that already holds data: what earlier versions stored
 * reads the same afterwards.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { FakeClock } from '../../src/core/clock.ts';
import { MIGRATIONS } from '../../src/db/migrations/index.ts';
import { migrateSqlite } from '../../src/db/sqlite/migrate.ts';
import { ensureSealed, sqliteSealingTarget } from '../../src/db/secrets/sealing.ts';
import { openSqlite } from '../../src/db/sqlite/open-sqlite.ts';
import { SqliteMetadataStore } from '../../src/db/sqlite/sqlite-metadata-store.ts';
import { objectMeta } from '../helpers/engine.ts';
import { TEST_SECRETS, TEST_SECRETS_KEY } from '../helpers/secrets.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { openScriptRegistry } from '../../src/db/scripts/script-registry-drivers.ts';
import { checkUsage, seedVersion15 } from './version-15-data.ts';
import { checkAdoption, seedVersion6 } from './version-6-data.ts';

/** A database file at schema `version`, as an edgeport of that version left it. */
function databaseAt(file: string, version: number): ReturnType<typeof openSqlite> {
  const db = openSqlite(file);
  migrateSqlite(
    db,
    0,
    MIGRATIONS.filter((m) => m.version <= version),
  );
  return db;
}

test('migration 6 moves inline bodies into a rowid table, every body intact', { timeout: 10_000 }, async (t) => {
  const file = join(tempDir(t), 'metadata.sqlite');
  const old = databaseAt(file, 5);
  assert.match(old.prepare("SELECT sql FROM sqlite_master WHERE name = 'inline_bodies'").pluck().get() as string, /WITHOUT ROWID/);
  old.prepare('INSERT INTO buckets (name, created, storage_class) VALUES (?, 0, ?)').run('b', 'Standard');
  const bodies = new Map<string, Buffer>();
  for (const [i, size] of [0, 1, 1500, 4096, 65_536].entries()) {
    const key = `k${i}`;
    const bytes = Buffer.alloc(size, i + 1);
    bodies.set(key, bytes);
    old
      .prepare(
        `INSERT INTO objects (bucket, key, version, size, etag, uploaded, http_metadata, custom_metadata, checksums, storage_class,
      has_inline, blob_id, part_count) VALUES ('b', ?, ?, ?, 'e', 0, '{}', '{}', '{}', 'Standard', 1, NULL, 0)`,
      )
      .run(key, `v${i}`, size);
    old.prepare('INSERT INTO inline_bodies (version, bytes) VALUES (?, ?)').run(`v${i}`, bytes);
  }
  old.close();

  const store = new SqliteMetadataStore({ file, clock: new FakeClock(0), reclaimGraceMs: 0 });
  t.after(() => store.close());
  for (const [key, bytes] of bodies) {
    const stored = await store.getObject('b', key);
    assert.equal(stored?.data.kind, 'inline', key);
    assert.deepEqual(Buffer.from(stored.data.kind === 'inline' ? stored.data.bytes : []), bytes, key);
  }
  const check = openSqlite(file);
  t.after(() => check.close());
  assert.doesNotMatch(check.prepare("SELECT sql FROM sqlite_master WHERE name = 'inline_bodies'").pluck().get() as string, /WITHOUT ROWID/);
  assert.equal(check.prepare('SELECT max(version) FROM schema_migrations').pluck().get(), MIGRATIONS.at(-1)!.version);
});

test(
  "migration 7 and the first start after it: buckets, objects, uploads and S3 keys of earlier versions become the first account's",
  { timeout: 10_000 },
  async (t) => {
    const file = join(tempDir(t), 'metadata.sqlite');
    const old = databaseAt(file, 6);
    await seedVersion6((sql, ...values) => {
      old.prepare(sql).run(...values);
    });
    old.close();

    // As a start does before any store opens: the clear secrets of earlier versions are sealed.
    const sealing = sqliteSealingTarget(file, 0);
    assert.equal((await ensureSealed(sealing, [TEST_SECRETS_KEY], 0)).kind, 'sealed');
    await sealing.close();
    const store = new SqliteMetadataStore({ file, clock: new FakeClock(0), reclaimGraceMs: 0, secrets: TEST_SECRETS });
    t.after(() => store.close());
    await checkAdoption(store);
  },
);

test("migration 16 counts what each account already stores: objects, open uploads' parts, scripts' versions", { timeout: 10_000 }, async (t) => {
  const dataDir = tempDir(t);
  const file = join(dataDir, 'metadata.sqlite');
  const old = databaseAt(file, 15);
  await seedVersion15((sql, ...values) => {
    old.prepare(sql).run(...values);
  });
  old.close();

  const store = new SqliteMetadataStore({ file, clock: new FakeClock(0), reclaimGraceMs: 0 });
  t.after(() => store.close());
  const registry = openScriptRegistry({ dataDir, clock: new FakeClock(0) });
  t.after(() => registry.close());
  await checkUsage(store, registry);
});

test('migration 20: bodies stored before stay readable by version; new ones, and those replacing them, go by row id', { timeout: 10_000 }, async (t) => {
  const file = join(tempDir(t), 'metadata.sqlite');
  const old = databaseAt(file, 19);
  old.prepare('INSERT INTO buckets (name, created, storage_class) VALUES (?, 0, ?)').run('b', 'Standard');
  const before = new Map<string, Buffer>();
  for (const [i, size] of [0, 1, 1500, 65_536].entries()) {
    const key = `old${i}`;
    before.set(key, Buffer.alloc(size, i + 1));
    old
      .prepare(
        `INSERT INTO objects (bucket, key, version, size, etag, uploaded, http_metadata, custom_metadata, checksums, storage_class,
      has_inline, blob_id, part_count) VALUES ('b', ?, ?, ?, 'e', 0, '{}', '{}', '{}', 'Standard', 1, NULL, 0)`,
      )
      .run(key, `v${i}`, size);
    old.prepare('INSERT INTO inline_bodies (version, bytes) VALUES (?, ?)').run(`v${i}`, before.get(key)!);
  }
  old.close();

  const store = new SqliteMetadataStore({ file, clock: new FakeClock(0), reclaimGraceMs: 0 });
  t.after(() => store.close());
  const bodyOf = async (key: string) => {
    const stored = await store.getObject('b', key);
    assert.equal(stored?.data.kind, 'inline', key);
    return Buffer.from(stored.data.kind === 'inline' ? stored.data.bytes : []);
  };
  for (const [key, bytes] of before) assert.deepEqual(await bodyOf(key), bytes, key);

  const meta = objectMeta;
  // A new object, one replacing an old one, an old one replaced by a blob, an old one deleted.
  assert.equal(await store.putObject('b', meta('new', 'n1', 3), { kind: 'inline', bytes: Buffer.from('new') }), 'written');
  assert.equal(await store.putObject('b', meta('old0', 'n2', 4), { kind: 'inline', bytes: Buffer.from('repl') }), 'written');
  assert.equal(await store.putObject('b', meta('old1', 'n3', 1), { kind: 'blob', blobId: 'blob-1' }), 'written');
  await store.deleteObjects('b', ['old2']);
  assert.deepEqual(await bodyOf('new'), Buffer.from('new'));
  assert.deepEqual(await bodyOf('old0'), Buffer.from('repl'));
  assert.deepEqual(await bodyOf('old3'), before.get('old3'));
  assert.deepEqual((await store.getObject('b', 'old1'))?.data, { kind: 'blob', blobId: 'blob-1' });
  assert.equal(await store.getObject('b', 'old2'), null);

  // Only the bodies of live objects are kept, each in one table: the untouched old one by version, the rest by id.
  const check = openSqlite(file);
  t.after(() => check.close());
  assert.deepEqual(check.prepare('SELECT version FROM inline_bodies').pluck().all(), ['v3']);
  assert.deepEqual(check.prepare('SELECT o.key FROM object_bodies n JOIN objects o ON o.body_id = n.id ORDER BY o.key').pluck().all(), ['new', 'old0']);
  assert.equal(check.prepare('SELECT count(*) FROM object_bodies').pluck().get(), 2);

  // Replacing and deleting an object stored this way frees its row.
  assert.equal(await store.putObject('b', meta('new', 'n4', 5), { kind: 'inline', bytes: Buffer.from('newer') }), 'written');
  await store.deleteObjects('b', ['old0']);
  assert.deepEqual(await bodyOf('new'), Buffer.from('newer'));
  assert.equal(check.prepare('SELECT count(*) FROM object_bodies').pluck().get(), 1);
});
