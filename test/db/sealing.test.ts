/**
 * Sealing a whole database, on SQLite and on PostgreSQL (always: it fails, never skips, when
 * PostgreSQL is down): a database an earlier edgeport left clear (an S3 key, a worker secret, a log
 * job whose destination carries credentials) is sealed in one step that a second start repeats as
 * a check only; afterwards no clear value is in the table rows (nor, on SQLite, in the database
 * file or its WAL); the stores open each value for its own row only; another key is refused
 * without a write; a rotation reseals everything or, when one value cannot be opened, nothing.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Database } from 'better-sqlite3';
import { FakeClock } from '../../src/core/clock.ts';
import { generateSecretsKey, SecretBox, type SecretsKey } from '../../src/core/crypto/secret-box.ts';
import type { ControlStore } from '../../src/db/control-store.ts';
import type { MetadataStore } from '../../src/db/metadata-store.ts';
import { MIGRATIONS } from '../../src/db/migrations/index.ts';
import { openControlStore } from '../../src/db/open-control-store.ts';
import { PgDatabase } from '../../src/db/postgres/pg-database.ts';
import { PgMetadataStore } from '../../src/db/postgres/pg-metadata-store.ts';
import { openScriptRegistry } from '../../src/db/scripts/script-registry-drivers.ts';
import type { ScriptRegistry } from '../../src/db/scripts/script-registry.ts';
import {
  DatabaseInUseError,
  ensureSealed,
  holdInstanceLock,
  pgSealingTarget,
  rotateKey,
  sqliteSealingTarget,
  type SealingTarget,
} from '../../src/db/secrets/sealing.ts';
import { migrateSqlite } from '../../src/db/sqlite/migrate.ts';
import { openSqlite } from '../../src/db/sqlite/open-sqlite.ts';
import { SqliteMetadataStore } from '../../src/db/sqlite/sqlite-metadata-store.ts';
import { pgTestUrl } from '../helpers/postgres.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { job } from './control-store.case.ts';

const ACCOUNT = 'a'.repeat(32);
const ZONE = 'z'.repeat(32);
const S3_SECRET = 'clear-s3-secret-0123456789abcdef';
const WORKER_SECRET = 'clear-worker-secret-fedcba9876543210';
const LOG_SECRET = 'clear-log-destination-secret-5555';
const CONF = `s3://logs/edge?region=auto&endpoint=https://s3.example.test&access-key-id=LOGKEY&secret-access-key=${LOG_SECRET}`;
const CLEAR = [S3_SECRET, WORKER_SECRET, LOG_SECRET];

/** One dialect: the database, its raw rows, and the stores that read it with a box. */
interface Dialect {
  /** Runs SQL with `?` placeholders on the database directly (an earlier edgeport's writes, or an attacker's). */
  exec(sql: string, ...params: unknown[]): Promise<Array<Record<string, unknown>>>;
  target(): SealingTarget;
  stores(box: SecretBox): Promise<{ meta: MetadataStore; control: ControlStore; registry: ScriptRegistry }>;
  /** Every byte the database keeps on disk that a copy would hold, when it is files (SQLite). */
  files?(): Buffer[];
}

/** What an edgeport from before sealing left: the rows written clear, as it wrote them. */
async function seedClear(db: Dialect): Promise<void> {
  await db.exec(
    "INSERT INTO s3_access_keys (access_key_id, secret, created, revoked, account_id, permission, buckets) VALUES ('KEY1', ?, 1, NULL, ?, 'admin_read_write', NULL)",
    S3_SECRET,
    ACCOUNT,
  );
  await db.exec(
    "INSERT INTO s3_access_keys (access_key_id, secret, created, revoked, account_id, permission, buckets) VALUES ('KEY2', 'other-secret-0123456789', 2, NULL, ?, 'admin_read_write', NULL)",
    ACCOUNT,
  );
  await db.exec(
    "INSERT INTO worker_scripts (account_id, name, created, modified, settings, dev_enabled, secrets_stamp) VALUES (?, 'api', 1, 1, '{}', 1, 0)",
    ACCOUNT,
  );
  await db.exec("INSERT INTO worker_secrets (account_id, script, name, type, value) VALUES (?, 'api', 'MY_SECRET', 'secret_text', ?)", ACCOUNT, WORKER_SECRET);
  await db.exec("INSERT INTO worker_secrets (account_id, script, name, type, value) VALUES (?, 'api', 'OTHER', 'secret_text', 'other-value')", ACCOUNT);
  const { id: _id, ...record } = { ...job(ZONE, true, 'shipper'), destinationConf: CONF, id: 0 };
  await db.exec('INSERT INTO log_jobs (zone_id, enabled, job) VALUES (?, 1, ?)', ZONE, JSON.stringify(record));
}

async function rawValues(db: Dialect): Promise<string[]> {
  return [
    ...(await db.exec('SELECT secret AS v FROM s3_access_keys ORDER BY access_key_id')).map((row) => String(row.v)),
    ...(await db.exec('SELECT value AS v FROM worker_secrets ORDER BY name')).map((row) => String(row.v)),
    ...(await db.exec('SELECT job AS v FROM log_jobs ORDER BY id')).map((row) => String(row.v)),
  ];
}

function assertNoClear(values: readonly string[] | readonly Buffer[], where: string): void {
  for (const value of values) for (const clear of CLEAR) assert.ok(!value.includes(clear), `${where} holds ${clear} in clear`);
}

async function readAll(db: Dialect, box: SecretBox): Promise<unknown[]> {
  const { meta, control, registry } = await db.stores(box);
  try {
    return [(await meta.accessKey('KEY1'))?.secret, await registry.secretValues(ACCOUNT, 'api'), (await control.listJobs(ZONE)).map((j) => j.destinationConf)];
  } finally {
    await registry.close();
    await control.close();
    await meta.close();
  }
}

const EXPECTED = [S3_SECRET, { MY_SECRET: WORKER_SECRET, OTHER: 'other-value' }, [CONF]];

async function sealingSuite(db: Dialect): Promise<void> {
  await seedClear(db);
  assert.deepEqual(await db.exec('SELECT secret FROM s3_access_keys WHERE access_key_id = ?', 'KEY1'), [{ secret: S3_SECRET }]);
  if (db.files)
    assert.ok(
      db.files().some((bytes) => bytes.includes(S3_SECRET)),
      'before sealing, the files hold the clear value (so the search below can find one)',
    );
  const key = generateSecretsKey();
  const target = db.target();
  try {
    const sealed = await ensureSealed(target, [key], 1000);
    assert.deepEqual(sealed, { kind: 'sealed', key, counts: { accessKeys: 2, workerSecrets: 2, logJobs: 1 } });
    const rows = await rawValues(db);
    assertNoClear(rows, 'a table row');
    if (db.files) assertNoClear(db.files(), 'the database files');
    assert.deepEqual(await readAll(db, new SecretBox(key)), EXPECTED, 'each value opens for its row');

    // Every later start: a check, no write.
    assert.deepEqual(await ensureSealed(target, [key], 2000), { kind: 'verified', key });
    assert.deepEqual(await rawValues(db), rows, 'a second start seals nothing again');
    const other = generateSecretsKey();
    assert.deepEqual(await ensureSealed(target, [other], 3000), { kind: 'wrong-key', keyId: key.id });
    assert.deepEqual(
      await ensureSealed(target, [{ id: key.id, bytes: other.bytes }], 3000),
      { kind: 'wrong-key', keyId: key.id },
      'a key with a forged id does not open the check value',
    );
    assert.deepEqual(await rawValues(db), rows, 'another key writes nothing');

    // Values swapped between rows do not open: each is bound to its own row.
    const [one, two] = (await db.exec('SELECT secret FROM s3_access_keys ORDER BY access_key_id')).map((row) => String(row.secret));
    await db.exec("UPDATE s3_access_keys SET secret = ? WHERE access_key_id = 'KEY1'", two);
    const { meta, control, registry } = await db.stores(new SecretBox(key));
    await assert.rejects(meta.accessKey('KEY1'), { code: 'SECRETS_UNREADABLE' });
    await db.exec("UPDATE s3_access_keys SET secret = ? WHERE access_key_id = 'KEY1'", one);
    assert.equal((await meta.accessKey('KEY1'))?.secret, S3_SECRET);
    const secretRows = await db.exec("SELECT name, value FROM worker_secrets WHERE account_id = ? AND script = 'api' ORDER BY name", ACCOUNT);
    await db.exec("UPDATE worker_secrets SET value = ? WHERE name = 'OTHER'", secretRows[0]!.value);
    await assert.rejects(registry.secretValues(ACCOUNT, 'api'), { code: 'SECRETS_UNREADABLE' });
    await db.exec("UPDATE worker_secrets SET value = ? WHERE name = 'OTHER'", secretRows[1]!.value);
    // Stores without the key can count jobs and list keys, and refuse to open or write a secret.
    const locked = await db.stores(SecretBox.locked());
    assert.equal(await locked.control.countJobs(ZONE), 1);
    assert.deepEqual(
      (await locked.meta.listAccessKeys(ACCOUNT)).map((k) => k.accessKeyId),
      ['KEY1', 'KEY2'],
    );
    await assert.rejects(locked.meta.accessKey('KEY1'), { code: 'SECRETS_LOCKED' });
    await assert.rejects(locked.registry.setSecret(ACCOUNT, 'api', 'NEW', 'v', { asVersion: false }), { code: 'SECRETS_LOCKED' });
    await assert.rejects(
      locked.control.createJob(ZONE, () => job(ZONE, true)),
      { code: 'SECRETS_LOCKED' },
    );
    assert.equal(await locked.control.countJobs(ZONE), 1, 'a refused job left no row');
    for (const store of [locked.registry, locked.control, locked.meta, registry, control, meta]) await store.close();

    // A rotation that meets a value it cannot open changes nothing.
    const next = generateSecretsKey();
    await db.exec("UPDATE worker_secrets SET value = 'not-sealed' WHERE name = 'OTHER'");
    const before = await rawValues(db);
    await assert.rejects(rotateKey(target, key, next, 4000), { code: 'SECRETS_UNREADABLE' });
    assert.deepEqual(await rawValues(db), before, 'all or nothing');
    assert.deepEqual(await ensureSealed(target, [key], 4000), { kind: 'verified', key });
    await db.exec("UPDATE worker_secrets SET value = ? WHERE name = 'OTHER'", secretRows[1]!.value);

    assert.deepEqual(await rotateKey(target, other, next, 5000), { kind: 'wrong-key', keyId: key.id });
    assert.deepEqual(await rotateKey(target, key, next, 5000), { kind: 'rotated', counts: { accessKeys: 2, workerSecrets: 2, logJobs: 1 } });
    assert.deepEqual(await ensureSealed(target, [key], 6000), { kind: 'wrong-key', keyId: next.id }, 'the old key no longer opens the database');
    assert.deepEqual(
      await ensureSealed(target, [key, next], 6000),
      { kind: 'verified', key: next },
      'a start holding both keys (an interrupted rotation) finds the new one',
    );
    assert.deepEqual(await readAll(db, new SecretBox(next)), EXPECTED);
    await assert.rejects(readAll(db, new SecretBox(key)), { code: 'SECRETS_UNREADABLE' });
    assertNoClear(await rawValues(db), 'a row after the rotation');
    if (db.files) assertNoClear(db.files(), 'the database files after the rotation');
  } finally {
    await target.close();
  }
}

test('sqlite: a clear database is sealed at once, checked afterwards, refused with another key, rotated all or nothing', { timeout: 30_000 }, async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'metadata.sqlite');
  const clock = new FakeClock(0);
  // As an edgeport before sealing left it: migrations up to 15, and writes in the WAL not yet checkpointed.
  const raw: Database = openSqlite(file);
  raw.exec('PRAGMA journal_mode = WAL');
  raw.exec('PRAGMA wal_autocheckpoint = 0');
  migrateSqlite(
    raw,
    0,
    MIGRATIONS.filter((m) => m.version <= 15),
  );
  t.after(() => raw.close());
  await sealingSuite({
    exec: async (sql, ...params) => {
      const statement = raw.prepare(sql);
      if (statement.reader) return statement.all(...params) as Array<Record<string, unknown>>;
      statement.run(...params);
      return [];
    },
    target: () => sqliteSealingTarget(file, 0),
    stores: async (box) => ({
      meta: new SqliteMetadataStore({ file, clock, reclaimGraceMs: 0, secrets: box }),
      control: await openControlStore({ dataDir: dir, clock, secrets: box }),
      registry: openScriptRegistry({ dataDir: dir, clock, secrets: box }),
    }),
    files: () =>
      ['metadata.sqlite', 'metadata.sqlite-wal'].map((name) => {
        try {
          return readFileSync(join(dir, name));
        } catch {
          return Buffer.alloc(0);
        }
      }),
  });
});

test('postgres: a clear schema is sealed at once, checked afterwards, refused with another key, rotated all or nothing', { timeout: 60_000 }, async (t) => {
  const url = await pgTestUrl(t);
  const database = await PgDatabase.open({ url, now: 0 });
  t.after(() => database.close());
  const clock = new FakeClock(0);
  await sealingSuite({
    exec: async (sql, ...params) => {
      let n = 0;
      return database.query(
        sql.replace(/\?/g, () => `$${++n}`),
        params,
      );
    },
    target: () => pgSealingTarget(database),
    stores: async (box) => ({
      meta: new PgMetadataStore({ database, clock, reclaimGraceMs: 0, secrets: box }),
      control: await openControlStore({ dataDir: '/nonexistent', clock, database, secrets: box }),
      registry: openScriptRegistry({ dataDir: '/nonexistent', clock, database, secrets: box }),
    }),
  });
});

test('postgres: a rotation is refused while an instance runs on the schema, and instances of other schemas do not count', { timeout: 60_000 }, async (t) => {
  const [url, elsewhere] = [await pgTestUrl(t), await pgTestUrl(t)];
  const [database, instance, other] = await Promise.all([url, url, elsewhere].map((u) => PgDatabase.open({ url: u, now: 0 })));
  t.after(async () => {
    for (const db of [database, instance, other]) await db!.close();
  });
  const key: SecretsKey = generateSecretsKey();
  assert.equal((await ensureSealed(pgSealingTarget(database!), [key], 0)).kind, 'sealed');
  await holdInstanceLock(other!);
  await holdInstanceLock(instance!);
  await assert.rejects(rotateKey(pgSealingTarget(database!), key, generateSecretsKey(), 1), DatabaseInUseError);
  assert.deepEqual(await ensureSealed(pgSealingTarget(database!), [key], 2), { kind: 'verified', key }, 'the refused rotation changed nothing');
  await instance!.close();
  const next = generateSecretsKey();
  assert.deepEqual(await rotateKey(pgSealingTarget(database!), key, next, 3), { kind: 'rotated', counts: { accessKeys: 0, workerSecrets: 0, logJobs: 0 } });
});
