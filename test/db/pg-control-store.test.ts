/**
 * PgControlStore, always on PostgreSQL (fails, never skips, when it is down): the ControlStore
 * contract, then two instances (two PgDatabases on one schema) racing for the same rows and hearing
 * each other's changes.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { FakeClock } from '../../src/core/clock.ts';
import type { ControlStore } from '../../src/db/control-store.ts';
import { openControlStore } from '../../src/db/open-control-store.ts';
import { PgControlStore } from '../../src/db/postgres/pg-control-store.ts';
import pg from 'pg';
import { MIGRATIONS } from '../../src/db/migrations/index.ts';
import { PgDatabase, parsePgUrl } from '../../src/db/postgres/pg-database.ts';
import { pgTestUrl } from '../helpers/postgres.ts';
import { hex, job, runControlStoreSuite, ruleset, zone } from './control-store.case.ts';
import { TEST_SECRETS } from '../helpers/secrets.ts';

async function openInstance(t: TestContext, url: string, clock: FakeClock): Promise<{ db: PgDatabase; store: PgControlStore }> {
  const db = await PgDatabase.open({ url, now: clock.now() });
  const store = await PgControlStore.open({ database: db, clock, secrets: TEST_SECRETS });
  t.after(async () => {
    await store.close();
    await db.close();
  });
  return { db, store };
}

/** Two instances of edgeport on one database. */
async function openTwo(t: TestContext): Promise<{ a: PgControlStore; b: PgControlStore; dbA: PgDatabase }> {
  const url = await pgTestUrl(t, { pool: 6 });
  const clock = new FakeClock();
  const [first, second] = await Promise.all([openInstance(t, url, clock), openInstance(t, url, clock)]);
  return { a: first.store, b: second.store, dbA: first.db };
}

/** Resolves when `store` fires its change listeners, rejects after `ms`. */
function nextChange(store: ControlStore, ms = 1000): { heard: Promise<number> } {
  const started = performance.now();
  let resolve: (elapsed: number) => void = () => undefined;
  let waiting = true;
  const heard = new Promise<number>((done, fail) => {
    resolve = done;
    setTimeout(() => {
      if (waiting) fail(new Error(`no change heard within ${ms} ms`));
    }, ms).unref();
  });
  store.onZoneChange(() => {
    if (!waiting) return;
    waiting = false;
    resolve(performance.now() - started);
  });
  return { heard };
}

runControlStoreSuite({
  async open(t) {
    const clock = new FakeClock();
    const { store } = await openInstance(t, await pgTestUrl(t), clock);
    return { store, clock };
  },
});

test('openControlStore picks PostgreSQL when given a database; close() leaves the database open', { timeout: 10_000 }, async (t) => {
  const clock = new FakeClock();
  const db = await PgDatabase.open({ url: await pgTestUrl(t), now: clock.now() });
  t.after(() => db.close());
  const store = await openControlStore({ dataDir: '/nonexistent', clock, database: db });
  assert.ok(store instanceof PgControlStore);
  await store.createZone(zone(hex(1), hex(2), 'example.test'));
  await store.close();
  await store.close();
  await assert.rejects(store.findZoneByName('example.test'), /closed/);
  assert.equal((await db.query('SELECT name FROM zones')).length, 1, 'the pool still answers');
});

test('two instances: the same zone entry point created concurrently on A and B leaves exactly one', { timeout: 10_000 }, async (t) => {
  const { a, b } = await openTwo(t);
  for (let round = 0; round < 10; round++) {
    const z = hex(round);
    const plan = (instance: string) => (current: Parameters<Parameters<ControlStore['putEntrypoint']>[2]>[0]) =>
      current
        ? { ...current, version: current.version + 1, name: instance }
        : { ...ruleset(hex(1000 * round + (instance === 'a' ? 1 : 2)), z, []), name: instance };
    const [fromA, fromB] = await Promise.all([
      a.putEntrypoint(z, 'http_log_custom_fields', plan('a')),
      b.putEntrypoint(z, 'http_log_custom_fields', plan('b')),
    ]);
    const stored = await a.listRulesets(z);
    assert.equal(stored.length, 1, `round ${round}: one entry point`);
    assert.equal(fromA.id, fromB.id, 'the later put updated the entry point the earlier one made');
    assert.equal(stored[0]!.version, 2, 'both puts applied, one after the other');
    assert.deepEqual(await b.getCustomFieldsRule(z), { requestFields: [], responseFields: [], cookieFields: [] });
  }
});

test('two instances: createRuleset of the same phase concurrently on A and B: one created, one phase-taken', { timeout: 10_000 }, async (t) => {
  const { a, b } = await openTwo(t);
  for (let round = 0; round < 10; round++) {
    const z = hex(round);
    const results = await Promise.all([a.createRuleset(ruleset(hex(1000 + round), z, [])), b.createRuleset(ruleset(hex(2000 + round), z, []))]);
    assert.deepEqual([...results].sort(), ['created', 'phase-taken'], `round ${round}`);
    assert.equal((await b.listRulesets(z)).length, 1);
  }
});

test('two instances: one account per e-mail and one zone per name, whichever instance asks', { timeout: 10_000 }, async (t) => {
  const { a, b } = await openTwo(t);
  const accounts = await Promise.all([
    a.createAccount({ id: hex(1), email: 'ops@example.com', name: 'a', keyHash: 'x', created: 1 }),
    b.createAccount({ id: hex(2), email: 'OPS@example.com', name: 'b', keyHash: 'x', created: 1 }),
  ]);
  assert.deepEqual([...accounts].sort(), ['created', 'exists']);
  const zones = await Promise.all([a.createZone(zone(hex(3), hex(1), 'example.test')), b.createZone(zone(hex(4), hex(1), 'example.test'))]);
  assert.deepEqual([...zones].sort(), ['created', 'exists']);
  assert.equal(await b.countAccounts(), 1);
});

test('two instances: accounts creating a name and its subdomain at once, on A and B: exactly one gets it', { timeout: 10_000 }, async (t) => {
  const { a, b } = await openTwo(t);
  for (let round = 0; round < 20; round++) {
    const [parent, child] = [`r${round}.test`, `api.www.r${round}.test`];
    // Alternate which instance creates which name, and which account is the parent's.
    const [onA, onB] = round % 2 === 0 ? [parent, child] : [child, parent];
    const results = await Promise.all([a.createZone(zone(hex(2 * round + 1), hex(0xa), onA)), b.createZone(zone(hex(2 * round + 2), hex(0xb), onB))]);
    assert.equal(results.filter((r) => r === 'created').length, 1, `round ${round}: ${JSON.stringify(results)}`);
    assert.equal(results.filter((r) => typeof r === 'object').length, 1, `round ${round}: the other is told why`);
  }
});

test("two instances: a zone, ruleset or job change on A reaches B's listeners within a second", { timeout: 10_000 }, async (t) => {
  const { a, b } = await openTwo(t);
  const acc = hex(1);
  const z = hex(2);
  let heardOnA = 0;
  a.onZoneChange(() => {
    heardOnA += 1;
  });
  const steps: Array<[string, () => Promise<unknown>]> = [
    ['createZone', () => a.createZone(zone(z, acc, 'example.test'))],
    ['updateZone', () => a.updateZone(acc, z, (current) => ({ ...current, origin: 'http://127.0.0.1:1' }))],
    ['putEntrypoint', () => a.putEntrypoint(z, 'http_log_custom_fields', () => ruleset(hex(3), z, []))],
    ['updateRuleset', () => a.updateRuleset(z, hex(3), (current) => ({ ...current, version: 2 }))],
    ['deleteRuleset', () => a.deleteRuleset(z, hex(3))],
    ['createJob', () => a.createJob(z, () => job(z, true))],
    ['updateJob', () => a.updateJob(z, 1, (current) => ({ ...current, enabled: false }))],
    ['deleteJob', () => a.deleteJob(z, 1)],
    ['deleteZone', () => a.deleteZone(acc, z)],
  ];
  const elapsed: number[] = [];
  for (const [name, step] of steps) {
    const before = heardOnA;
    const { heard } = nextChange(b);
    await step();
    assert.equal(heardOnA, before + 1, `${name}: A's own listener fired at commit`);
    elapsed.push(await heard.catch((error: Error) => assert.fail(`${name}: ${error.message}`)));
  }
  assert.ok(Math.max(...elapsed) < 1000, `heard within ${Math.max(...elapsed).toFixed(1)} ms`);
  // A's own notifications come back to A too: they must not fire its listeners a second time.
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(heardOnA, steps.length);
});

test("two instances: what does not change the edge's view is not announced", { timeout: 10_000 }, async (t) => {
  const { a, b } = await openTwo(t);
  let heard = 0;
  b.onZoneChange(() => {
    heard += 1;
  });
  await a.createZone(zone(hex(1), hex(9), 'example.test'));
  assert.equal(await a.createZone(zone(hex(2), hex(9), 'example.test')), 'exists');
  assert.equal(await a.deleteZone(hex(8), hex(1)), false);
  assert.equal(await a.updateZone(hex(8), hex(1), (current) => current), null);
  assert.equal(await a.deleteRuleset(hex(1), hex(3)), false);
  assert.equal(await a.deleteJob(hex(1), 7), false);
  await a.setJobStatus(7, { lastComplete: 1, lastError: null, errorMessage: null });
  await a.putOwnershipChallenge({ zoneId: hex(1), destinationConf: 'file:///x', tokenHash: 'aa', expires: 10 });
  await a.updateZone(hex(9), hex(1), (current) => current);
  // Notifications arrive in commit order: once the last change is heard, any earlier one would have been.
  const deadline = Date.now() + 1000;
  while (heard < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(heard, 2, 'the create and the update only');
});

test('two instances: 20 concurrent createJob calls across A and B get distinct ids and exact counts', { timeout: 10_000 }, async (t) => {
  const { a, b } = await openTwo(t);
  const z = hex(1);
  const counts: number[] = [];
  const jobs = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      (i % 2 === 0 ? a : b).createJob(z, (count) => {
        counts.push(count);
        return job(z, true, `job ${i}`);
      }),
    ),
  );
  assert.equal(new Set(jobs.map((j) => j.id)).size, 20);
  assert.deepEqual(
    counts.sort((x, y) => x - y),
    Array.from({ length: 20 }, (_, i) => i),
    'each plan saw every job committed before it',
  );
  assert.deepEqual(
    (await b.listJobs(z)).map((j) => j.id),
    jobs.map((j) => j.id).sort((x, y) => x - y),
  );
  // A zone's job limit holds across instances: with 3 allowed, 10 racing creates make 3 jobs.
  const limited = hex(2);
  const outcomes = await Promise.allSettled(
    Array.from({ length: 10 }, (_, i) =>
      (i % 2 === 0 ? a : b).createJob(limited, (count) => {
        if (count >= 3) throw new Error('limit');
        return job(limited, true);
      }),
    ),
  );
  assert.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 3);
  assert.equal((await a.listJobs(limited)).length, 3);
});

test("two instances: a job status written on B is read on A; a deleted job's id is not reused by either", { timeout: 10_000 }, async (t) => {
  const { a, b } = await openTwo(t);
  const z = hex(1);
  const first = await a.createJob(z, () => job(z, true));
  await b.setJobStatus(first.id, { lastComplete: 42, lastError: null, errorMessage: null });
  assert.equal((await a.getJob(z, first.id))?.lastComplete, 42);
  assert.equal(await b.deleteJob(z, first.id), true);
  const second = await b.createJob(z, () => job(z, true));
  const third = await a.createJob(z, () => job(z, true));
  assert.ok(second.id > first.id && third.id > second.id);
});

test('migration 8 on a database with zones: their reversed names are filled in, and creates check against them', { timeout: 10_000 }, async (t) => {
  const url = await pgTestUrl(t);
  const { config, schema } = parsePgUrl(url);
  const old = new pg.Client({ ...config, options: `-c search_path=${schema}` });
  await old.connect();
  try {
    // The schema as an edgeport before migration 8 left it, with zones in it.
    await old.query('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied BIGINT NOT NULL)');
    for (const migration of MIGRATIONS.filter((m) => m.version < 8)) {
      await old.query(migration.postgres);
      await old.query('INSERT INTO schema_migrations (version, name, applied) VALUES ($1, $2, 0)', [migration.version, migration.name]);
    }
    for (const [i, name] of ['shop.test', 'deep.inside.parent.test'].entries()) {
      await old.query('INSERT INTO zones (id, account_id, name, origin, paused, created, modified) VALUES ($1, $2, $3, NULL, 0, 1, 1)', [
        hex(i + 1),
        hex(0xa),
        name,
      ]);
    }
  } finally {
    await old.end();
  }
  const { db, store } = await openInstance(t, url, new FakeClock());
  assert.deepEqual(
    (await db.query<{ name_reversed: string }>('SELECT name_reversed FROM zones ORDER BY name')).map((row) => row.name_reversed),
    ['tset.tnerap.edisni.peed', 'tset.pohs'],
  );
  assert.deepEqual(await store.createZone(zone(hex(3), hex(0xb), 'parent.test')), { conflict: 'contains', zoneName: 'deep.inside.parent.test' });
  assert.deepEqual(await store.createZone(zone(hex(4), hex(0xb), 'www.shop.test')), { conflict: 'inside', zoneName: 'shop.test' });
  assert.equal(await store.createZone(zone(hex(5), hex(0xa), 'parent.test')), 'created');
});
