/**
 * PostgreSQL migrations applied to a schema that already holds data: what an earlier version stored
 * reads the same afterwards (the SQLite twin is sqlite-migrations.test.ts).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { FakeClock } from '../../src/core/clock.ts';
import { MIGRATIONS } from '../../src/db/migrations/index.ts';
import { PgDatabase, parsePgUrl } from '../../src/db/postgres/pg-database.ts';
import { PgMetadataStore } from '../../src/db/postgres/pg-metadata-store.ts';
import { ensureSealed, pgSealingTarget } from '../../src/db/secrets/sealing.ts';
import { pgTestUrl } from '../helpers/postgres.ts';
import { openScriptRegistry } from '../../src/db/scripts/script-registry-drivers.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { checkUsage, seedVersion15 } from './version-15-data.ts';
import { TEST_SECRETS, TEST_SECRETS_KEY } from '../helpers/secrets.ts';
import { checkAdoption, seedVersion6 } from './version-6-data.ts';

test(
  "migration 7 and the first start after it on PostgreSQL: buckets, objects, uploads and S3 keys become the first account's",
  { timeout: 60_000 },
  async (t) => {
    const url = await pgTestUrl(t);
    const { config, schema } = parsePgUrl(url);
    // A schema as version 6 left it: its migrations, recorded as applied, and its rows.
    const client = new pg.Client(config);
    await client.connect();
    try {
      await client.query(`SET search_path TO ${schema}`);
      await client.query('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied BIGINT NOT NULL)');
      for (const migration of MIGRATIONS.filter((m) => m.version <= 6)) {
        await client.query(migration.postgres);
        await client.query('INSERT INTO schema_migrations (version, name, applied) VALUES ($1, $2, 0)', [migration.version, migration.name]);
      }
      await seedVersion6(
        (sql, ...values) => client.query(sql, values),
        (n) => `$${n}`,
      );
    } finally {
      await client.end();
    }

    const database = await PgDatabase.open({ url, now: 0 });
    t.after(() => database.close());
    // As a start does before any store opens: the clear secrets of earlier versions are sealed.
    assert.equal((await ensureSealed(pgSealingTarget(database), [TEST_SECRETS_KEY], 0)).kind, 'sealed');
    const store = new PgMetadataStore({ database, clock: new FakeClock(0), reclaimGraceMs: 0, secrets: TEST_SECRETS });
    t.after(() => store.close());
    await checkAdoption(store);
  },
);

test("migration 16 on PostgreSQL counts what each account already stores: objects, open uploads' parts, scripts' versions", { timeout: 60_000 }, async (t) => {
  const url = await pgTestUrl(t);
  const { config, schema } = parsePgUrl(url);
  const client = new pg.Client(config);
  await client.connect();
  try {
    await client.query(`SET search_path TO ${schema}`);
    await client.query('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied BIGINT NOT NULL)');
    for (const migration of MIGRATIONS.filter((m) => m.version <= 15)) {
      await client.query(migration.postgres);
      await client.query('INSERT INTO schema_migrations (version, name, applied) VALUES ($1, $2, 0)', [migration.version, migration.name]);
    }
    await seedVersion15(
      (sql, ...values) => client.query(sql, values),
      (n) => `$${n}`,
    );
  } finally {
    await client.end();
  }

  const database = await PgDatabase.open({ url, now: 0 });
  t.after(() => database.close());
  const store = new PgMetadataStore({ database, clock: new FakeClock(0), reclaimGraceMs: 0 });
  t.after(() => store.close());
  await checkUsage(store, openScriptRegistry({ dataDir: tempDir(t), clock: new FakeClock(0), database }));
});
