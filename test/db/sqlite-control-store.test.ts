import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { FakeClock } from '../../src/core/clock.ts';
import type { LogJobRecord, NewLogJob, RuleRecord, RulesetRecord, ZoneRecord } from '../../src/db/control-store.ts';
import { openSqliteControlStore } from '../../src/db/sqlite/sqlite-control-store.ts';
import { SqliteMetadataStore } from '../../src/db/sqlite/sqlite-metadata-store.ts';
import { tempDir } from '../helpers/temp-dir.ts';

function open(t: TestContext, dataDir = tempDir(t)) {
  const clock = new FakeClock();
  const store = openSqliteControlStore({ dataDir, clock });
  t.after(() => store.close());
  return { store, clock, dataDir };
}

const zone = (id: string, accountId: string, name: string): ZoneRecord => ({ id, accountId, name, origin: null, paused: false, created: 1, modified: 1 });
const account = (id: string, email: string) => ({ id, email, name: email, keyHash: 'scrypt$x', created: 1 });
const rule = (id: string, names: Partial<RuleRecord['actionParameters']>, enabled = true): RuleRecord => ({
  id, version: 1, ref: id, action: 'log_custom_field', expression: 'true', description: '', enabled, actionParameters: names, lastUpdated: 1,
});
const ruleset = (id: string, zoneId: string, rules: RuleRecord[]): RulesetRecord => ({
  id, zoneId, name: 'default', description: '', kind: 'zone', phase: 'http_log_custom_fields', version: 1, lastUpdated: 1, rules,
});
const job = (zoneId: string, enabled: boolean, name = 'j'): NewLogJob => ({
  zoneId, name, enabled, dataset: 'http_requests', kind: '', frequency: 'high', destinationConf: 'file:///tmp/x', filter: null,
  outputOptions: {
    fieldNames: ['RayID'], outputType: 'ndjson', batchPrefix: '', batchSuffix: '', recordPrefix: '{', recordSuffix: '}\n', recordDelimiter: '',
    fieldDelimiter: ',', recordTemplate: null, timestampFormat: 'unixnano', sampleRate: 1, cve202144228: false,
  },
  logpullOptions: null, maxUploadBytes: null, maxUploadRecords: null, maxUploadIntervalSeconds: null,
  lastComplete: null, lastError: null, errorMessage: null, created: 1, modified: 1,
});

test('accounts: unique e-mail (case-insensitive), key hash updates', async (t) => {
  const { store } = open(t);
  assert.equal(await store.createAccount(account('a'.repeat(32), 'Ann@Example.com')), 'created');
  assert.equal(await store.createAccount(account('b'.repeat(32), 'ann@example.COM')), 'exists');
  assert.equal((await store.findAccountByEmail('ANN@example.com'))?.id, 'a'.repeat(32));
  await store.setAccountKeyHash('a'.repeat(32), 'scrypt$y');
  assert.equal((await store.getAccount('a'.repeat(32)))?.keyHash, 'scrypt$y');
  assert.equal(await store.countAccounts(), 1);
});

test('zones: scoped by account, unique names server-wide, name filters, paging, order', async (t) => {
  const { store } = open(t);
  const [a, b] = ['a'.repeat(32), 'b'.repeat(32)];
  for (const [i, name] of ['beta.test', 'alpha.test', 'gamma.example'].entries()) assert.equal(await store.createZone(zone(`${i}`.repeat(32), a, name)), 'created');
  assert.equal(await store.createZone(zone('9'.repeat(32), b, 'alpha.test')), 'exists', 'another account cannot take the name');
  assert.equal(await store.getZone(b, '1'.repeat(32)), null, 'another account does not see the zone');
  const page = (query: Partial<Parameters<typeof store.listZones>[1]>) => store.listZones(a, { order: 'name', direction: 'asc', offset: 0, limit: 10, ...query })
    .then(({ zones, total }) => [zones.map((z) => z.name), total]);
  assert.deepEqual(await page({}), [['alpha.test', 'beta.test', 'gamma.example'], 3]);
  assert.deepEqual(await page({ direction: 'desc', limit: 2 }), [['gamma.example', 'beta.test'], 3]);
  assert.deepEqual(await page({ offset: 2 }), [['gamma.example'], 3]);
  assert.deepEqual(await page({ name: { op: 'equal', value: 'beta.test' } }), [['beta.test'], 1]);
  assert.deepEqual(await page({ name: { op: 'ends_with', value: '.test' } }), [['alpha.test', 'beta.test'], 2]);
  assert.deepEqual(await page({ name: { op: 'starts_with', value: 'gam' } }), [['gamma.example'], 1]);
  assert.deepEqual(await page({ name: { op: 'contains', value: 'ta.t' } }), [['beta.test'], 1]);
  assert.deepEqual((await store.listZones(b, { order: 'name', direction: 'asc', offset: 0, limit: 10 })).total, 0);
  assert.equal((await store.findZoneByName('gamma.example'))?.id, '2'.repeat(32));
  assert.equal(await store.updateZone(b, '0'.repeat(32), (z) => z), null);
  assert.equal((await store.updateZone(a, '0'.repeat(32), (z) => ({ ...z, origin: 'http://o' })))?.origin, 'http://o');
});

test('deleting a zone deletes its rulesets, jobs and challenges', async (t) => {
  const { store } = open(t);
  const a = 'a'.repeat(32);
  const z = '1'.repeat(32);
  await store.createZone(zone(z, a, 'example.test'));
  await store.createRuleset(ruleset('r'.repeat(32).replace(/r/g, 'e'), z, [rule('c'.repeat(32), { requestFields: ['x'] })]));
  await store.createJob(z, () => job(z, true));
  await store.putOwnershipChallenge({ zoneId: z, destinationConf: 'file:///x', tokenHash: 'ab', expires: Date.now() * 2 });
  assert.equal(await store.deleteZone('b'.repeat(32), z), false, 'not the account\'s zone');
  assert.equal(await store.deleteZone(a, z), true);
  assert.deepEqual([await store.listRulesets(z), await store.listJobs(z), await store.getCustomFieldsRule(z), await store.getOwnershipChallenge(z, 'file:///x')],
    [[], [], null, null]);
});

test('rulesets: one zone ruleset per phase; the edge reads the enabled rules merged', async (t) => {
  const { store } = open(t);
  const z = '1'.repeat(32);
  assert.equal(await store.getCustomFieldsRule(z), null);
  assert.equal(await store.createRuleset(ruleset('e'.repeat(32), z, [
    rule('c'.repeat(32), { requestFields: ['x-a'], cookieFields: ['Session'] }),
    rule('d'.repeat(32), { responseFields: ['server'] }, false),
  ])), 'created');
  assert.equal(await store.createRuleset(ruleset('f'.repeat(32), z, [])), 'phase-taken');
  assert.deepEqual(await store.getCustomFieldsRule(z), { requestFields: ['x-a'], responseFields: [], cookieFields: ['Session'] });
  const updated = await store.putEntrypoint(z, 'http_log_custom_fields', (current) => ({ ...current!, version: 2, rules: [rule('d'.repeat(32), { responseFields: ['server'] })] }));
  assert.equal(updated.id, 'e'.repeat(32));
  assert.deepEqual(await store.getCustomFieldsRule(z), { requestFields: [], responseFields: ['server'], cookieFields: [] }, 'visible at once');
  assert.equal((await store.getEntrypoint(z, 'http_log_custom_fields'))?.version, 2);
  assert.equal(await store.updateRuleset(z, 'f'.repeat(32), (r) => r), null);
  assert.equal(await store.deleteRuleset(z, 'e'.repeat(32)), true);
  assert.equal(await store.getCustomFieldsRule(z), null);
  const created = await store.putEntrypoint(z, 'http_log_custom_fields', (current) => {
    assert.equal(current, null);
    return ruleset('a'.repeat(32), z, []);
  });
  assert.equal((await store.getRuleset(z, created.id))?.name, 'default');
});

test('a plan that throws writes nothing', async (t) => {
  const { store } = open(t);
  const z = '1'.repeat(32);
  await store.createRuleset(ruleset('e'.repeat(32), z, [rule('c'.repeat(32), { requestFields: ['x-a'] })]));
  await assert.rejects(store.updateRuleset(z, 'e'.repeat(32), () => { throw new Error('refused'); }), /refused/);
  await assert.rejects(store.createJob(z, () => { throw new Error('limit'); }), /limit/);
  assert.equal((await store.getRuleset(z, 'e'.repeat(32)))?.version, 1);
  assert.deepEqual(await store.listJobs(z), []);
});

test('jobs: integer ids never reused, enabled listing, status written by the pipeline', async (t) => {
  const { store } = open(t);
  const z = '1'.repeat(32);
  const first = await store.createJob(z, (count) => { assert.equal(count, 0); return job(z, false, 'one'); });
  const second = await store.createJob(z, (count) => { assert.equal(count, 1); return job(z, true, 'two'); });
  assert.deepEqual([first.id, second.id], [1, 2]);
  assert.deepEqual((await store.listEnabledJobs(z)).map((j) => j.name), ['two']);
  await store.updateJob(z, 1, (current) => ({ ...current, enabled: true }));
  assert.deepEqual((await store.listEnabledJobs(z)).map((j) => j.id), [1, 2], 'enabling is seen by the next read');
  assert.equal(await store.updateJob('2'.repeat(32), 1, (c) => c), null, 'scoped by zone');
  assert.equal(await store.deleteJob(z, 2), true);
  assert.equal((await store.createJob(z, () => job(z, false))).id, 3);
  await store.setJobStatus(1, { lastComplete: 5, lastError: null, errorMessage: null });
  const read = await store.getJob(z, 1) as LogJobRecord;
  assert.deepEqual([read.lastComplete, read.name, read.enabled], [5, 'one', true]);
});

test('ownership challenges replace each other; access key owners', async (t) => {
  const { store, clock } = open(t);
  const z = '1'.repeat(32);
  await store.putOwnershipChallenge({ zoneId: z, destinationConf: 'store://b', tokenHash: 'aa', expires: clock.now() + 10 });
  await store.putOwnershipChallenge({ zoneId: z, destinationConf: 'store://b', tokenHash: 'bb', expires: clock.now() + 10 });
  assert.equal((await store.getOwnershipChallenge(z, 'store://b'))?.tokenHash, 'bb');
  await store.recordAccessKeyOwner('KEY1', 'a'.repeat(32));
  assert.equal(await store.accessKeyOwner('KEY1'), 'a'.repeat(32));
  assert.equal(await store.accessKeyOwner('KEY2'), null);
  assert.deepEqual(await store.listAccessKeyIds('a'.repeat(32)), ['KEY1']);
});

test('shares metadata.sqlite with the object store; everything survives a reopen', async (t) => {
  const dataDir = tempDir(t);
  const clock = new FakeClock();
  const meta = new SqliteMetadataStore({ file: join(dataDir, 'metadata.sqlite'), clock, reclaimGraceMs: 0 });
  const first = openSqliteControlStore({ dataDir, clock });
  await first.createAccount(account('a'.repeat(32), 'a@example.com'));
  await first.createJob('1'.repeat(32), () => job('1'.repeat(32), true));
  await meta.putAccessKey({ accessKeyId: 'KEYKEYKEY', secret: 's', created: 1, revoked: null });
  await first.close();
  await meta.close();
  const again = open(t, dataDir).store;
  assert.equal((await again.getAccount('a'.repeat(32)))?.email, 'a@example.com');
  assert.equal((await again.listEnabledJobs('1'.repeat(32))).length, 1);
});
