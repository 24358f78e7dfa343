/** SqliteControlStore: the ControlStore contract, and what only SQLite has (one file with the object store). */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { FakeClock } from '../../src/core/clock.ts';
import { MIGRATIONS } from '../../src/db/migrations/index.ts';
import { migrateSqlite } from '../../src/db/sqlite/migrate.ts';
import { openSqlite } from '../../src/db/sqlite/open-sqlite.ts';
import { openSqliteControlStore } from '../../src/db/sqlite/sqlite-control-store.ts';
import { SqliteMetadataStore } from '../../src/db/sqlite/sqlite-metadata-store.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { account, hex, job, runControlStoreSuite, zone } from './control-store.case.ts';
import { TEST_SECRETS } from '../helpers/secrets.ts';

runControlStoreSuite({
  async open(t) {
    const clock = new FakeClock();
    const store = openSqliteControlStore({ dataDir: tempDir(t), clock, secrets: TEST_SECRETS });
    t.after(() => store.close());
    return { store, clock };
  },
});

test('shares metadata.sqlite with the object store; everything survives a reopen', { timeout: 10_000 }, async (t) => {
  const dataDir = tempDir(t);
  const clock = new FakeClock();
  const meta = new SqliteMetadataStore({ file: join(dataDir, 'metadata.sqlite'), clock, reclaimGraceMs: 0, secrets: TEST_SECRETS });
  const first = openSqliteControlStore({ dataDir, clock, secrets: TEST_SECRETS });
  await first.createAccount(account('a'.repeat(32), 'a@example.com'));
  await first.createJob('1'.repeat(32), () => job('1'.repeat(32), true));
  await meta.putAccessKey({
    accessKeyId: 'KEYKEYKEY',
    secret: 's',
    accountId: 'a'.repeat(32),
    permission: 'admin_read_write',
    buckets: null,
    created: 1,
    revoked: null,
  });
  await first.close();
  await meta.close();
  const again = openSqliteControlStore({ dataDir, clock, secrets: TEST_SECRETS });
  t.after(() => again.close());
  assert.equal((await again.getAccount('a'.repeat(32)))?.email, 'a@example.com');
  assert.equal((await again.listEnabledJobs('1'.repeat(32))).length, 1);
});

test('two connections to one file: accounts creating a name and its subdomain at once: exactly one gets it', { timeout: 10_000 }, async (t) => {
  const dataDir = tempDir(t);
  const clock = new FakeClock();
  const [first, second] = [
    openSqliteControlStore({ dataDir, clock, secrets: TEST_SECRETS }),
    openSqliteControlStore({ dataDir, clock, secrets: TEST_SECRETS }),
  ];
  t.after(async () => {
    await first.close();
    await second.close();
  });
  for (let round = 0; round < 20; round++) {
    const [parent, child] = [`r${round}.test`, `www.r${round}.test`];
    const [onFirst, onSecond] = round % 2 === 0 ? [parent, child] : [child, parent];
    const results = await Promise.all([
      first.createZone(zone(hex(2 * round + 1), hex(0xa), onFirst)),
      second.createZone(zone(hex(2 * round + 2), hex(0xb), onSecond)),
    ]);
    assert.equal(results.filter((r) => r === 'created').length, 1, `round ${round}: ${JSON.stringify(results)}`);
  }
});

test('migration 8 on a database with zones: their reversed names are filled in, and creates check against them', { timeout: 10_000 }, async (t) => {
  const dataDir = tempDir(t);
  // The file as an edgeport before migration 8 left it, with zones in it.
  const old = openSqlite(join(dataDir, 'metadata.sqlite'));
  migrateSqlite(
    old,
    0,
    MIGRATIONS.filter((m) => m.version < 8),
  );
  const longest = ['a'.repeat(63), 'b'.repeat(63), 'c'.repeat(63), 'd'.repeat(61)].join('.');
  for (const [i, name] of ['shop.test', 'deep.inside.parent.test', longest].entries()) {
    old.prepare('INSERT INTO zones (id, account_id, name, origin, paused, created, modified) VALUES (?, ?, ?, NULL, 0, 1, 1)').run(hex(i + 1), hex(0xa), name);
  }
  old.close();
  const store = openSqliteControlStore({ dataDir, clock: new FakeClock(), secrets: TEST_SECRETS });
  t.after(() => store.close());
  const check = openSqlite(join(dataDir, 'metadata.sqlite'));
  t.after(() => check.close());
  assert.deepEqual(check.prepare('SELECT name_reversed FROM zones ORDER BY name').pluck().all(), [
    [...longest].reverse().join(''),
    'tset.tnerap.edisni.peed',
    'tset.pohs',
  ]);
  assert.deepEqual(await store.createZone(zone(hex(4), hex(0xb), 'parent.test')), { conflict: 'contains', zoneName: 'deep.inside.parent.test' });
  assert.deepEqual(await store.createZone(zone(hex(5), hex(0xb), 'www.shop.test')), { conflict: 'inside', zoneName: 'shop.test' });
  assert.equal(await store.createZone(zone(hex(6), hex(0xa), 'parent.test')), 'created');
});
