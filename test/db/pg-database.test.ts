import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MIGRATIONS } from '../../src/db/migrations/index.ts';
import { PgDatabase, parsePgUrl, redact } from '../../src/db/postgres/pg-database.ts';
import { pgTestUrl } from '../helpers/postgres.ts';

test('PostgreSQL URLs: schema and pool are edgeport parameters, the rest goes to pg', { timeout: 10_000 }, () => {
  const parsed = parsePgUrl('postgres://u:p@db.example:5433/app?schema=edge_a&pool=3&sslmode=disable');
  assert.equal(parsed.schema, 'edge_a');
  assert.equal(parsed.poolSize, 3);
  assert.equal(parsed.config.connectionString, 'postgres://u:p@db.example:5433/app?sslmode=disable');
  assert.equal(parsePgUrl('postgresql://h/db').schema, 'public');
  assert.throws(() => parsePgUrl('mysql://h/db'), /must start with postgres:\/\//);
  assert.throws(() => parsePgUrl('postgres://h/db?schema=Bad-Name'), /lower case letters/);
  assert.throws(() => parsePgUrl('postgres://h/db?pool=0'), /whole number/);
  assert.equal(redact('postgres://u:secret@h/db'), 'postgres://u:***@h/db');
});

test('PgDatabase migrates once, even when two instances open the same schema together', { timeout: 10_000 }, async (t) => {
  const url = await pgTestUrl(t);
  const [a, b] = await Promise.all([PgDatabase.open({ url, now: 1 }), PgDatabase.open({ url, now: 2 })]);
  t.after(() => Promise.all([a.close(), b.close()]));
  const versions = await a.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
  assert.deepEqual(
    versions.map((row) => row.version),
    MIGRATIONS.map((migration) => migration.version),
  );
  // BIGINT columns come back as numbers.
  await a.query('INSERT INTO buckets (name, created, storage_class) VALUES ($1, $2, $3)', ['b', Date.UTC(2026, 0, 1), 'Standard']);
  const [bucket] = await b.query<{ created: unknown }>('SELECT created FROM buckets');
  assert.equal(bucket?.created, Date.UTC(2026, 0, 1));
});

test('PgDatabase transactions roll back on error and notifications reach every instance', { timeout: 10_000 }, async (t) => {
  const url = await pgTestUrl(t);
  const a = await PgDatabase.open({ url, now: 1 });
  const b = await PgDatabase.open({ url, now: 1 });
  t.after(() => Promise.all([a.close(), b.close()]));
  await assert.rejects(
    a.transaction(async (client) => {
      await client.query('INSERT INTO buckets (name, created, storage_class) VALUES ($1, 1, $2)', ['gone', 'Standard']);
      throw new Error('refused');
    }),
    /refused/,
  );
  assert.equal((await b.query('SELECT * FROM buckets')).length, 0);

  const heard: string[] = [];
  const heardOnB = new Promise<void>((resolve) => {
    void b.listen('zones', (payload) => {
      heard.push(payload);
      resolve();
    });
  });
  await new Promise((resolve) => setTimeout(resolve, 50));
  await a.transaction(async (client) => {
    await a.notify('zones', 'changed', client);
  });
  await heardOnB;
  assert.deepEqual(heard, ['changed']);
});
