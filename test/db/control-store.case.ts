/**
 * The ControlStore contract, run against each implementation (sqlite-control-store.test.ts,
 * pg-control-store.test.ts): accounts, zones, rulesets, jobs, challenges, sessions and
 * change events, each behaving the same whichever database holds them.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { FakeClock } from '../../src/core/clock.ts';
import type { ApiTokenRecord } from '../../src/db/api-tokens/api-token-store.ts';
import type { ControlStore, LogJobRecord, NewLogJob, RuleRecord, RulesetRecord, ZoneRecord } from '../../src/db/control-store.ts';
import { jobFields, ndjsonOutput } from '../helpers/log-fixtures.ts';

export interface ControlStoreSuiteOptions {
  /** A fresh, empty store for the test, closed when it ends. */
  open(t: TestContext): Promise<{ store: ControlStore; clock: FakeClock }>;
}

export const zone = (id: string, accountId: string, name: string, created = 1): ZoneRecord => ({
  id,
  accountId,
  name,
  origin: null,
  paused: false,
  created,
  modified: created,
});
export const account = (id: string, email: string) => ({ id, email, name: email, keyHash: 'scrypt$x', created: 1 });
export const rule = (id: string, names: Partial<RuleRecord['actionParameters']>, enabled = true): RuleRecord => ({
  id,
  version: 1,
  ref: id,
  action: 'log_custom_field',
  expression: 'true',
  description: '',
  enabled,
  actionParameters: names,
  lastUpdated: 1,
});
export const ruleset = (id: string, zoneId: string, rules: RuleRecord[], phase = 'http_log_custom_fields'): RulesetRecord => ({
  id,
  zoneId,
  name: 'default',
  description: '',
  kind: 'zone',
  phase,
  version: 1,
  lastUpdated: 1,
  rules,
});
export const job = (zoneId: string, enabled: boolean, name = 'j'): NewLogJob => ({
  ...jobFields(zoneId, 'file:///tmp/x', { ...ndjsonOutput(['RayID']), timestampFormat: 'unixnano' }, 1),
  name,
  enabled,
});
/** A 32-hex id from a short tag (`hex(7)` -> `000…07`). */
export const hex = (n: number): string => n.toString(16).padStart(32, '0');

export const apiToken = (id: string, accountId: string, valueHash: string, issuedOn = 1): ApiTokenRecord => ({
  id,
  accountId,
  valueHash,
  name: `token ${id.slice(-2)}`,
  status: 'active',
  issuedOn,
  modifiedOn: issuedOn,
  expiresOn: null,
  notBefore: null,
  policies: [
    {
      id: hex(99),
      effect: 'allow',
      resources: { [`com.cloudflare.api.account.${accountId}`]: '*' },
      permissionGroups: [{ id: 'b4992e1108244f5d8bfbd5744320c2e1', name: 'Workers R2 Storage Read' }],
    },
  ],
});

export function runControlStoreSuite({ open }: ControlStoreSuiteOptions): void {
  test(
    'API tokens: per account, found by value hash, the per-account limit held under concurrent creates, updates and deletes scoped',
    { timeout: 10_000 },
    async (t) => {
      const { store } = await open(t);
      const [a, b] = [hex(1), hex(2)];
      const tokens = store.apiTokens;
      assert.equal(await tokens.create(apiToken(hex(11), a, 'hash-11', 5), 3), 'created');
      assert.equal(await tokens.create(apiToken(hex(12), a, 'hash-12', 3), 3), 'created');
      assert.equal(await tokens.create(apiToken(hex(21), b, 'hash-21'), 3), 'created');
      const racing = await Promise.all([hex(13), hex(14), hex(15)].map((id, i) => tokens.create(apiToken(id, a, `hash-${id}`, 10 + i), 3)));
      assert.deepEqual(racing.filter((r) => r === 'created').length, 1, 'one of three concurrent creates fits under the limit of 3');
      assert.deepEqual((await tokens.list(a)).map((tk) => tk.id).slice(0, 2), [hex(12), hex(11)], 'oldest first');
      assert.equal((await tokens.list(a)).length, 3);
      assert.deepEqual(await tokens.get(a, hex(11)), apiToken(hex(11), a, 'hash-11', 5));
      assert.equal(await tokens.get(b, hex(11)), null, "another account's token is not found");
      assert.equal((await tokens.findByValueHash('hash-21'))?.accountId, b);
      assert.equal(await tokens.findByValueHash('nope'), null);

      const rolled = await tokens.update(a, hex(11), (current) => ({ ...current, valueHash: 'hash-11b', status: 'disabled' }));
      assert.equal(rolled?.status, 'disabled');
      assert.equal(await tokens.findByValueHash('hash-11'), null, 'the old value is gone');
      assert.equal((await tokens.findByValueHash('hash-11b'))?.id, hex(11));
      assert.equal(await tokens.update(b, hex(11), (current) => current), null);
      await assert.rejects(
        tokens.update(a, hex(11), (current) => ({ ...current, accountId: b })),
        /keeps its id and account/,
      );
      assert.equal(await tokens.delete(b, hex(11)), false);
      assert.equal(await tokens.delete(a, hex(11)), true);
      assert.equal(await tokens.get(a, hex(11)), null);
      assert.equal((await tokens.list(b)).length, 1);
    },
  );

  test('accounts: unique e-mail (case-insensitive), key hash updates', { timeout: 10_000 }, async (t) => {
    const { store } = await open(t);
    assert.equal(await store.createAccount(account('a'.repeat(32), 'Ann@Example.com')), 'created');
    assert.equal(await store.createAccount(account('b'.repeat(32), 'ann@example.COM')), 'exists');
    assert.equal(await store.createAccount(account('a'.repeat(32), 'other@example.com')), 'exists', 'the id is taken too');
    assert.equal((await store.findAccountByEmail('ANN@example.com'))?.id, 'a'.repeat(32));
    assert.equal((await store.findAccountByEmail('ANN@example.com'))?.email, 'Ann@Example.com', 'kept as given');
    assert.equal(await store.findAccountByEmail('nobody@example.com'), null);
    await store.setAccountKeyHash('a'.repeat(32), 'scrypt$y');
    assert.deepEqual(await store.getAccount('a'.repeat(32)), { ...account('a'.repeat(32), 'Ann@Example.com'), keyHash: 'scrypt$y' });
    assert.equal(await store.getAccount('c'.repeat(32)), null);
    assert.equal(await store.countAccounts(), 1);
  });

  test(
    'accounts: the sign-in (e-mail and key) changes together unless another account holds the e-mail; list oldest first; delete with sessions',
    { timeout: 10_000 },
    async (t) => {
      const { store, clock } = await open(t);
      const [a, b] = ['a'.repeat(32), 'b'.repeat(32)];
      await store.createAccount({ ...account(a, 'ann@example.com'), created: 2 });
      await store.createAccount({ ...account(b, 'bob@example.com'), created: 1 });
      assert.equal(await store.setAccountSignIn(a, 'BOB@example.com', 'scrypt$new'), 'exists');
      assert.deepEqual(await store.getAccount(a), { ...account(a, 'ann@example.com'), created: 2 }, 'nothing changed');
      assert.equal(await store.setAccountSignIn(a, 'Ann.New@example.com', 'scrypt$new'), 'updated');
      assert.deepEqual(
        await store.getAccount(a),
        { ...account(a, 'ann@example.com'), email: 'Ann.New@example.com', keyHash: 'scrypt$new', created: 2 },
        'its name stays',
      );
      assert.equal(await store.findAccountByEmail('ann@example.com'), null);
      assert.equal(await store.setAccountSignIn(a, 'ANN.NEW@example.com', 'scrypt$newer'), 'updated', 'its own e-mail, in another case');
      // The name made from the e-mail at creation follows a new e-mail.
      const c = 'c'.repeat(32);
      await store.createAccount({ ...account(c, 'ops@example.com'), name: "ops@example.com's Account", created: 3 });
      assert.equal(await store.setAccountSignIn(c, 'it@example.com', 'scrypt$c'), 'updated');
      assert.equal((await store.getAccount(c))?.name, "it@example.com's Account");
      assert.equal(await store.deleteAccount(c), true);
      assert.deepEqual(
        (await store.listAccounts()).map(({ id }) => id),
        [b, a],
      );
      const expires = clock.now() + 60_000;
      await store.createSession({ id: 's-a', accountId: a, keyHash: 'scrypt$newer', csrfToken: 'c', created: clock.now(), expires }, 3);
      await store.createSession({ id: 's-b', accountId: b, keyHash: 'scrypt$x', csrfToken: 'c', created: clock.now(), expires }, 3);
      await store.apiTokens.create(apiToken(hex(31), a, 'hash-of-a'), 5);
      await store.apiTokens.create(apiToken(hex(32), b, 'hash-of-b'), 5);
      assert.equal(await store.deleteAccount(a), true);
      assert.equal(await store.apiTokens.findByValueHash('hash-of-a'), null, 'its API tokens go with it');
      assert.ok(await store.apiTokens.findByValueHash('hash-of-b'));
      assert.equal(await store.deleteAccount(a), false);
      assert.equal(await store.getAccount(a), null);
      assert.equal(await store.getSession('s-a'), null, 'its sessions go with it');
      assert.ok(await store.getSession('s-b'), "another account's stay");
      assert.deepEqual(
        (await store.listAccounts()).map(({ id }) => id),
        [b],
      );
    },
  );

  test('the first account is the oldest, whatever the order of ids', { timeout: 10_000 }, async (t) => {
    const { store } = await open(t);
    assert.equal(await store.firstAccount(), null);
    await store.createAccount({ ...account('f'.repeat(32), 'late@example.com'), created: 20 });
    await store.createAccount({ ...account('e'.repeat(32), 'early@example.com'), created: 10 });
    await store.createAccount({ ...account('d'.repeat(32), 'latest@example.com'), created: 30 });
    assert.equal((await store.firstAccount())?.email, 'early@example.com');
  });

  test('zones: scoped by account, unique names server-wide, name filters, paging, order', { timeout: 10_000 }, async (t) => {
    const { store } = await open(t);
    const [a, b] = ['a'.repeat(32), 'b'.repeat(32)];
    for (const [i, name] of ['beta.test', 'alpha.test', 'gamma.example'].entries())
      assert.equal(await store.createZone(zone(`${i}`.repeat(32), a, name, 10 - i)), 'created');
    assert.equal(await store.createZone(zone('9'.repeat(32), b, 'alpha.test')), 'exists', 'another account cannot take the name');
    assert.equal(await store.getZone(b, '1'.repeat(32)), null, 'another account does not see the zone');
    assert.equal(await store.zoneAccount('1'.repeat(32)), a);
    assert.equal(await store.zoneAccount('9'.repeat(32)), null);
    assert.deepEqual(await store.getZone(a, '1'.repeat(32)), zone('1'.repeat(32), a, 'alpha.test', 9));
    const page = (query: Partial<Parameters<typeof store.listZones>[1]>) =>
      store.listZones(a, { order: 'name', direction: 'asc', offset: 0, limit: 10, ...query }).then(({ zones, total }) => [zones.map((z) => z.name), total]);
    assert.deepEqual(await page({}), [['alpha.test', 'beta.test', 'gamma.example'], 3]);
    assert.deepEqual(await page({ direction: 'desc', limit: 2 }), [['gamma.example', 'beta.test'], 3]);
    assert.deepEqual(await page({ offset: 2 }), [['gamma.example'], 3]);
    assert.deepEqual(await page({ offset: 5 }), [[], 3], 'past the end: no zones, the total still counted');
    assert.deepEqual(await page({ order: 'created' }), [['gamma.example', 'alpha.test', 'beta.test'], 3]);
    assert.deepEqual(await page({ order: 'created', direction: 'desc' }), [['beta.test', 'alpha.test', 'gamma.example'], 3]);
    assert.deepEqual(await page({ name: { op: 'equal', value: 'beta.test' } }), [['beta.test'], 1]);
    assert.deepEqual(await page({ name: { op: 'ends_with', value: '.test' } }), [['alpha.test', 'beta.test'], 2]);
    assert.deepEqual(await page({ name: { op: 'starts_with', value: 'gam' } }), [['gamma.example'], 1]);
    assert.deepEqual(await page({ name: { op: 'contains', value: 'ta.t' } }), [['beta.test'], 1]);
    assert.deepEqual(await page({ name: { op: 'contains', value: '%' } }), [[], 0], 'no wildcards');
    assert.deepEqual(await page({ name: { op: 'starts_with', value: '_' } }), [[], 0], 'no wildcards');
    assert.deepEqual((await store.listZones(b, { order: 'name', direction: 'asc', offset: 0, limit: 10 })).total, 0);
    assert.equal((await store.findZoneByName('gamma.example'))?.id, '2'.repeat(32));
    assert.equal(await store.findZoneByName('GAMMA.example'), null, 'names are stored lower case and matched exactly');
    assert.equal(await store.updateZone(b, '0'.repeat(32), (z) => z), null);
    assert.equal((await store.updateZone(a, '0'.repeat(32), (z) => ({ ...z, origin: 'http://o', paused: true, modified: 20 })))?.origin, 'http://o');
    assert.deepEqual(await store.getZone(a, '0'.repeat(32)), { ...zone('0'.repeat(32), a, 'beta.test', 10), origin: 'http://o', paused: true, modified: 20 });
  });

  test('zones: another account cannot take a name equal to, under or above one of yours; the same account can', { timeout: 10_000 }, async (t) => {
    const { store } = await open(t);
    const [a, b] = [hex(0xa), hex(0xb)];
    let next = 0;
    const create = (accountId: string, name: string) => store.createZone(zone(hex(++next), accountId, name));
    assert.equal(await create(a, 'shop.test'), 'created');
    assert.equal(await create(b, 'shop.test'), 'exists');
    assert.deepEqual(await create(b, 'www.shop.test'), { conflict: 'inside', zoneName: 'shop.test' });
    assert.deepEqual(await create(b, 'api.www.shop.test'), { conflict: 'inside', zoneName: 'shop.test' }, 'any depth');
    assert.equal(await create(a, 'www.shop.test'), 'created', 'the same account may hold a zone under its own');
    assert.equal(await create(a, 'api.www.shop.test'), 'created');
    assert.deepEqual(await create(b, 'x.api.www.shop.test'), { conflict: 'inside', zoneName: 'api.www.shop.test' }, 'the nearest one is named');
    assert.equal(await create(b, 'myshop.test'), 'created', 'a name that only ends with the same characters is not under it');
    assert.equal(await create(b, 'shop.testing'), 'created');
    assert.equal(await create(b, 'hop.test'), 'created');

    assert.equal(await create(a, 'deep.inside.parent.test'), 'created');
    assert.deepEqual(await create(b, 'parent.test'), { conflict: 'contains', zoneName: 'deep.inside.parent.test' });
    assert.deepEqual(await create(b, 'inside.parent.test'), { conflict: 'contains', zoneName: 'deep.inside.parent.test' });
    assert.equal(await create(b, 'other.parent.test'), 'created', 'a sibling is neither above nor under');
    assert.equal(await create(a, 'inside.parent.test'), 'created', 'the same account may hold a zone above its own');
    assert.deepEqual(
      await create(a, 'parent.test'),
      { conflict: 'contains', zoneName: 'other.parent.test' },
      '...unless another account holds one under it too',
    );

    const names = async (accountId: string) =>
      (await store.listZones(accountId, { order: 'name', direction: 'asc', offset: 0, limit: 50 })).zones.map((z) => z.name);
    assert.deepEqual(await names(b), ['hop.test', 'myshop.test', 'other.parent.test', 'shop.testing'], 'refused names wrote nothing');
    for (const name of ['shop.test', 'www.shop.test', 'api.www.shop.test']) await store.deleteZone(a, (await store.findZoneByName(name))!.id);
    assert.equal(await create(b, 'www.shop.test'), 'created', 'free once the other account deleted its zones');
    await assert.rejects(
      store.updateZone(b, (await store.findZoneByName('www.shop.test'))!.id, (z) => ({ ...z, name: 'shop.test' })),
      /keeps its name/,
    );
    assert.equal(await store.findZoneByName('shop.test'), null, 'a zone cannot be renamed around the check');
  });

  test('zones: two accounts creating a name and its subdomain at once: exactly one gets it', { timeout: 10_000 }, async (t) => {
    const { store } = await open(t);
    for (let round = 0; round < 10; round++) {
      const [parent, child] = [`r${round}.test`, `www.r${round}.test`];
      const [first, second] = round % 2 === 0 ? [hex(0xa), hex(0xb)] : [hex(0xb), hex(0xa)];
      const results = await Promise.all([store.createZone(zone(hex(2 * round + 1), first, parent)), store.createZone(zone(hex(2 * round + 2), second, child))]);
      assert.equal(results.filter((r) => r === 'created').length, 1, `round ${round}: ${JSON.stringify(results)}`);
    }
  });

  test('zone names order byte-wise', { timeout: 10_000 }, async (t) => {
    const { store } = await open(t);
    const a = 'a'.repeat(32);
    for (const [i, name] of ['b.test', 'a-b.test', 'a.test', 'ab.test', '0.test'].entries()) await store.createZone(zone(hex(i), a, name));
    const { zones } = await store.listZones(a, { order: 'name', direction: 'asc', offset: 0, limit: 10 });
    assert.deepEqual(
      zones.map((z) => z.name),
      ['0.test', 'a-b.test', 'a.test', 'ab.test', 'b.test'],
    );
  });

  test('deleting a zone deletes its rulesets, jobs and challenges', { timeout: 10_000 }, async (t) => {
    const { store } = await open(t);
    const a = 'a'.repeat(32);
    const z = '1'.repeat(32);
    await store.createZone(zone(z, a, 'example.test'));
    await store.createRuleset(ruleset('e'.repeat(32), z, [rule('c'.repeat(32), { requestFields: ['x'] })]));
    await store.createJob(z, () => job(z, true));
    await store.putOwnershipChallenge({ zoneId: z, destinationConf: 'file:///x', tokenHash: 'ab', expires: Date.now() * 2 });
    assert.equal(await store.deleteZone('b'.repeat(32), z), false, "not the account's zone");
    assert.equal(await store.deleteZone(a, z), true);
    assert.equal(await store.deleteZone(a, z), false, 'gone');
    assert.deepEqual(
      [await store.listRulesets(z), await store.listJobs(z), await store.getCustomFieldsRule(z), await store.getOwnershipChallenge(z, 'file:///x')],
      [[], [], null, null],
    );
    assert.equal(await store.findZoneByName('example.test'), null);
    assert.equal(await store.createZone(zone('2'.repeat(32), a, 'example.test')), 'created', 'the name is free again');
  });

  test('rulesets: one zone ruleset per phase; the edge reads the enabled rules merged', { timeout: 10_000 }, async (t) => {
    const { store } = await open(t);
    const z = '1'.repeat(32);
    assert.equal(await store.getCustomFieldsRule(z), null);
    assert.equal(
      await store.createRuleset(
        ruleset('e'.repeat(32), z, [
          rule('c'.repeat(32), { requestFields: ['x-a'], cookieFields: ['Session'] }),
          rule('d'.repeat(32), { responseFields: ['server'] }, false),
        ]),
      ),
      'created',
    );
    assert.equal(await store.createRuleset(ruleset('f'.repeat(32), z, [])), 'phase-taken');
    assert.equal(await store.createRuleset(ruleset('f'.repeat(32), z, [], 'http_request_firewall_custom')), 'created', 'another phase');
    assert.equal(await store.createRuleset({ ...ruleset('0'.repeat(32), z, []), kind: 'custom' }), 'created', 'not an entry point: no limit per phase');
    assert.equal(await store.createRuleset(ruleset('1'.repeat(32), '2'.repeat(32), [])), 'created', 'another zone');
    assert.deepEqual(
      (await store.listRulesets(z)).map((r) => r.id),
      ['0'.repeat(32), 'e'.repeat(32), 'f'.repeat(32)],
    );
    assert.deepEqual(await store.getCustomFieldsRule(z), { requestFields: ['x-a'], responseFields: [], cookieFields: ['Session'] });
    const updated = await store.putEntrypoint(z, 'http_log_custom_fields', (current) => ({
      ...current!,
      version: 2,
      rules: [rule('d'.repeat(32), { responseFields: ['server'] })],
    }));
    assert.equal(updated.id, 'e'.repeat(32));
    assert.deepEqual(await store.getCustomFieldsRule(z), { requestFields: [], responseFields: ['server'], cookieFields: [] }, 'visible at once');
    assert.equal((await store.getEntrypoint(z, 'http_log_custom_fields'))?.version, 2);
    assert.deepEqual(await store.getRuleset(z, 'e'.repeat(32)), updated);
    assert.equal(await store.getRuleset('2'.repeat(32), 'e'.repeat(32)), null, 'scoped by zone');
    assert.equal(await store.updateRuleset(z, '9'.repeat(32), (r) => r), null);
    const renamed = await store.updateRuleset(z, 'f'.repeat(32), (r) => ({ ...r, name: 'renamed', version: r.version + 1 }));
    assert.deepEqual([renamed?.name, (await store.getRuleset(z, 'f'.repeat(32)))?.version], ['renamed', 2]);
    assert.equal(await store.deleteRuleset('2'.repeat(32), 'e'.repeat(32)), false, 'scoped by zone');
    assert.equal(await store.deleteRuleset(z, 'e'.repeat(32)), true);
    assert.equal(await store.deleteRuleset(z, 'e'.repeat(32)), false);
    assert.equal(await store.getCustomFieldsRule(z), null);
    const created = await store.putEntrypoint(z, 'http_log_custom_fields', (current) => {
      assert.equal(current, null);
      return ruleset('a'.repeat(32), z, []);
    });
    assert.equal((await store.getRuleset(z, created.id))?.name, 'default');
    assert.deepEqual(
      await store.getCustomFieldsRule(z),
      { requestFields: [], responseFields: [], cookieFields: [] },
      'an entry point without rules logs no fields',
    );
  });

  test('a plan that throws writes nothing', { timeout: 10_000 }, async (t) => {
    const { store } = await open(t);
    const z = '1'.repeat(32);
    await store.createZone(zone(z, 'a'.repeat(32), 'example.test'));
    await store.createRuleset(ruleset('e'.repeat(32), z, [rule('c'.repeat(32), { requestFields: ['x-a'] })]));
    await assert.rejects(
      store.updateRuleset(z, 'e'.repeat(32), () => {
        throw new Error('refused');
      }),
      /refused/,
    );
    await assert.rejects(
      store.putEntrypoint(z, 'http_log_custom_fields', () => {
        throw new Error('refused');
      }),
      /refused/,
    );
    await assert.rejects(
      store.putEntrypoint(z, 'http_request_firewall_custom', () => {
        throw new Error('refused');
      }),
      /refused/,
    );
    await assert.rejects(
      store.createJob(z, () => {
        throw new Error('limit');
      }),
      /limit/,
    );
    await assert.rejects(
      store.updateZone('a'.repeat(32), z, () => {
        throw new Error('refused');
      }),
      /refused/,
    );
    assert.equal((await store.getRuleset(z, 'e'.repeat(32)))?.version, 1);
    assert.equal((await store.listRulesets(z)).length, 1);
    assert.deepEqual(await store.listJobs(z), []);
    assert.equal((await store.createJob(z, () => job(z, true))).id, 1, 'a refused job used no id');
  });

  test('jobs: integer ids never reused, enabled listing, status written by the pipeline', { timeout: 10_000 }, async (t) => {
    const { store } = await open(t);
    const z = '1'.repeat(32);
    const first = await store.createJob(z, (count) => {
      assert.equal(count, 0);
      return job(z, false, 'one');
    });
    const second = await store.createJob(z, (count) => {
      assert.equal(count, 1);
      return job(z, true, 'two');
    });
    assert.deepEqual([first.id, second.id], [1, 2]);
    assert.deepEqual(first, { ...job(z, false, 'one'), id: 1 });
    assert.deepEqual(await store.getJob(z, 1), first);
    assert.equal(await store.getJob('2'.repeat(32), 1), null, 'scoped by zone');
    assert.deepEqual(
      (await store.listEnabledJobs(z)).map((j) => j.name),
      ['two'],
    );
    await store.updateJob(z, 1, (current) => ({ ...current, enabled: true }));
    assert.deepEqual(
      (await store.listEnabledJobs(z)).map((j) => j.id),
      [1, 2],
      'enabling is seen by the next read',
    );
    assert.equal(await store.updateJob('2'.repeat(32), 1, (c) => c), null, 'scoped by zone');
    assert.equal(await store.deleteJob('2'.repeat(32), 2), false, 'scoped by zone');
    assert.equal(await store.deleteJob(z, 2), true);
    assert.equal(await store.deleteJob(z, 2), false);
    assert.equal((await store.createJob(z, () => job(z, false))).id, 3);
    assert.equal(
      (
        await store.createJob('2'.repeat(32), (count) => {
          assert.equal(count, 0, 'counted per zone');
          return job('2'.repeat(32), false);
        })
      ).id,
      4,
    );
    await store.setJobStatus(1, { lastComplete: 5, lastError: null, errorMessage: null });
    await store.setJobStatus(99, { lastComplete: 5, lastError: null, errorMessage: null });
    const read = (await store.getJob(z, 1)) as LogJobRecord;
    assert.deepEqual([read.lastComplete, read.name, read.enabled], [5, 'one', true]);
    await store.setJobStatus(1, { lastComplete: 5, lastError: 7, errorMessage: 'refused' });
    assert.deepEqual(await store.getJob(z, 1), { ...read, lastError: 7, errorMessage: 'refused' });
    assert.deepEqual(
      (await store.listJobs(z)).map((j) => j.id),
      [1, 3],
    );
    assert.deepEqual([await store.countJobs(z), await store.countJobs('2'.repeat(32)), await store.countJobs('3'.repeat(32))], [2, 1, 0]);
  });

  test('ownership challenges replace each other and expire', { timeout: 10_000 }, async (t) => {
    const { store, clock } = await open(t);
    const z = '1'.repeat(32);
    await store.putOwnershipChallenge({ zoneId: z, destinationConf: 'store://b', tokenHash: 'aa', expires: clock.now() + 10 });
    await store.putOwnershipChallenge({ zoneId: z, destinationConf: 'store://b', tokenHash: 'bb', expires: clock.now() + 10 });
    assert.deepEqual(await store.getOwnershipChallenge(z, 'store://b'), {
      zoneId: z,
      destinationConf: 'store://b',
      tokenHash: 'bb',
      expires: clock.now() + 10,
    });
    assert.equal(await store.getOwnershipChallenge(z, 'store://c'), null);
    clock.advance(10);
    await store.putOwnershipChallenge({ zoneId: z, destinationConf: 'store://c', tokenHash: 'cc', expires: clock.now() + 10 });
    assert.equal(await store.getOwnershipChallenge(z, 'store://b'), null, 'expired ones are dropped by the next put');
  });

  test('file:// challenge claims: refused while another account holds the location, one above or one below it', { timeout: 10_000 }, async (t) => {
    const { store, clock } = await open(t);
    const [a, b] = ['a'.repeat(32), 'b'.repeat(32)];
    const [a1, a2, b1] = [hex(1), hex(2), hex(3)];
    await store.createZone(zone(a1, a, 'one.test'));
    await store.createZone(zone(a2, a, 'two.test'));
    await store.createZone(zone(b1, b, 'other.test'));
    const claim = (zoneId: string, account: string, location: string, tokenHash = 'aa') =>
      store.claimOwnershipChallenge({ zoneId, destinationConf: location, tokenHash, expires: clock.now() + 100 }, account);
    assert.equal(await claim(a1, a, 'file:///r/a'), 'stored');
    assert.deepEqual(await store.getOwnershipChallenge(a1, 'file:///r/a'), {
      zoneId: a1,
      destinationConf: 'file:///r/a',
      tokenHash: 'aa',
      expires: clock.now() + 100,
    });
    for (const location of ['file:///r/a', 'file:///r', 'file:///', 'file:///r/a/x/y']) {
      assert.equal(await claim(b1, b, location, 'bb'), 'taken', `${location} overlaps the other account's file:///r/a`);
      assert.equal(await store.getOwnershipChallenge(b1, location), null, 'nothing written');
    }
    assert.equal((await store.getOwnershipChallenge(a1, 'file:///r/a'))?.tokenHash, 'aa', "the holder's challenge is untouched");
    assert.equal(await claim(b1, b, 'file:///r/ab', 'bb'), 'stored', 'a sibling whose name starts alike is not below');
    assert.equal(await claim(b1, b, 'file:///r/b', 'bb'), 'stored');
    assert.equal(await claim(a2, a, 'file:///r/a', 'cc'), 'stored', 'zones of one account share their locations');
    assert.equal(await claim(a1, a, 'file:///r/a', 'dd'), 'stored', 'a zone replaces its own challenge');
    assert.equal((await store.getOwnershipChallenge(a1, 'file:///r/a'))?.tokenHash, 'dd');
    await store.putOwnershipChallenge({ zoneId: a1, destinationConf: 'store://r', tokenHash: 'ee', expires: clock.now() + 100 });
    assert.equal(await claim(b1, b, 'file:///s', 'bb'), 'stored', 'store:// challenges hold no directory');
    clock.advance(100);
    assert.equal(await claim(b1, b, 'file:///r/a', 'bb'), 'stored', 'an expired challenge holds nothing');
    assert.equal(await claim(a1, a, 'file:///r', 'aa'), 'taken', 'now the other account holds a location below');
    const raced = await Promise.all([
      claim(a1, a, 'file:///race/x'),
      claim(b1, b, 'file:///race'),
      claim(a2, a, 'file:///race/x/y'),
      claim(b1, b, 'file:///race/x'),
    ]);
    const winners = new Set(raced.flatMap((outcome, i) => (outcome === 'stored' ? [[a, b, a, b][i]] : [])));
    assert.equal(winners.size, 1, `one account gets the contested directories (${raced.join(', ')})`);
  });

  test(
    "file:// claims: another account's log job holds its location (and those above and below it) for as long as it exists, whatever its challenge's age",
    { timeout: 10_000 },
    async (t) => {
      const { store, clock } = await open(t);
      const [a, b] = ['a'.repeat(32), 'b'.repeat(32)];
      const [a1, b1] = [hex(1), hex(3)];
      await store.createZone(zone(a1, a, 'one.test'));
      await store.createZone(zone(b1, b, 'other.test'));
      const claim = (zoneId: string, account: string, location: string) =>
        store.claimOwnershipChallenge({ zoneId, destinationConf: location, tokenHash: 'aa', expires: clock.now() + 100 }, account);
      assert.equal(await claim(a1, a, 'file:///r/a'), 'stored');
      const held = await store.createJob(a1, () => ({ ...job(a1, false), destinationConf: 'file:///r/a/{DATE}', heldLocation: 'file:///r/a' }));
      await store.createJob(a1, () => ({ ...job(a1, true), destinationConf: 's3://bucket/x', heldLocation: null }));
      clock.advance(1_000);
      for (const location of ['file:///r/a', 'file:///r', 'file:///', 'file:///r/a/x']) assert.equal(await claim(b1, b, location), 'taken', location);
      assert.equal(await claim(b1, b, 'file:///r/ab'), 'stored', 'a sibling whose name starts alike is free');
      assert.equal(await claim(a1, a, 'file:///r/a/x'), 'stored', "the job's own account is not refused");
      // Moving the job releases the old location and holds the new one.
      await store.updateJob(a1, held.id, (current) => ({ ...current, destinationConf: 'file:///q', heldLocation: 'file:///q' }));
      clock.advance(1_000);
      assert.equal(await claim(b1, b, 'file:///r/a'), 'stored');
      assert.equal(await claim(b1, b, 'file:///q/sub'), 'taken');
      assert.equal(await store.deleteJob(a1, held.id), true);
      assert.equal(await claim(b1, b, 'file:///q/sub'), 'stored', 'a deleted job holds nothing');
    },
  );

  test("sessions: capped per account, newest kept; one account signing in over and over never drops another's", { timeout: 30_000 }, async (t) => {
    const { store, clock } = await open(t);
    const a = 'a'.repeat(32);
    const b = 'b'.repeat(32);
    const session = (id: string, accountId: string) => ({
      id,
      accountId,
      keyHash: 'scrypt$x',
      csrfToken: `csrf-${id}`,
      created: clock.now(),
      expires: clock.now() + 60_000,
    });
    await store.createSession(session('a-only', a), 3);
    for (let i = 0; i < 50; i++) {
      clock.advance(1);
      await store.createSession(session(`b${String(i).padStart(2, '0')}`, b), 3);
    }
    assert.deepEqual(
      await store.getSession('a-only'),
      { ...session('a-only', a), created: clock.now() - 50, expires: clock.now() - 50 + 60_000 },
      'account A keeps its session through 50 sign-ins of B',
    );
    const kept = [];
    for (let i = 0; i < 50; i++) if (await store.getSession(`b${String(i).padStart(2, '0')}`)) kept.push(i);
    assert.deepEqual(kept, [47, 48, 49], 'B keeps its newest 3');

    // Same creation time: the cap still holds exactly, and the sign-in just made is always kept.
    for (const id of ['t4', 't3', 't2', 't1']) {
      await store.createSession(session(id, a), 2);
      assert.ok(await store.getSession(id), `the new session ${id} is kept`);
    }
    const left = [];
    for (const id of ['a-only', 't1', 't2', 't3', 't4']) if (await store.getSession(id)) left.push(id);
    assert.equal(left.length, 2, `A keeps 2: ${left.join(', ')}`);
    assert.ok(left.includes('t1') && !left.includes('a-only'), 'the newest sign-in is kept, the oldest went first');

    // Expired sessions of any account are dropped by the next sign-in.
    clock.advance(60_000);
    await store.createSession(session('fresh', b), 3);
    assert.equal(await store.getSession('b49'), null);
    assert.equal(await store.getSession(left[0]!), null);
    assert.equal((await store.getSession('fresh'))?.accountId, b);
  });

  test('onZoneChange: fires after each committed change to zones, rulesets and jobs, before the write resolves', { timeout: 10_000 }, async (t) => {
    const { store } = await open(t);
    let changes = 0;
    store.onZoneChange(() => {
      changes += 1;
    });
    const a = 'a'.repeat(32);
    const z = '1'.repeat(32);
    const steps: Array<[string, () => Promise<unknown>]> = [
      ['createZone', () => store.createZone(zone(z, a, 'example.test'))],
      ['updateZone', () => store.updateZone(a, z, (current) => ({ ...current, paused: true }))],
      ['createRuleset', () => store.createRuleset(ruleset('e'.repeat(32), z, []))],
      ['putEntrypoint', () => store.putEntrypoint(z, 'http_log_custom_fields', (current) => ({ ...current!, version: 2 }))],
      ['updateRuleset', () => store.updateRuleset(z, 'e'.repeat(32), (current) => ({ ...current, version: 3 }))],
      ['deleteRuleset', () => store.deleteRuleset(z, 'e'.repeat(32))],
      ['createJob', () => store.createJob(z, () => job(z, true))],
      ['updateJob', () => store.updateJob(z, 1, (current) => ({ ...current, enabled: false }))],
      ['deleteJob', () => store.deleteJob(z, 1)],
      ['deleteZone', () => store.deleteZone(a, z)],
    ];
    for (const [name, step] of steps) {
      const before = changes;
      await step();
      assert.ok(changes > before, `${name} fired the listener`);
    }
  });

  test('concurrent writes on one store: one entry point per phase, distinct job ids, exact job counts', { timeout: 10_000 }, async (t) => {
    const { store } = await open(t);
    const z = '1'.repeat(32);
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => store.createRuleset(ruleset(hex(i), z, []))));
    assert.deepEqual(results.filter((r) => r === 'created').length, 1);
    const puts = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        store.putEntrypoint(z, 'http_request_firewall_custom', (current) =>
          current ? { ...current, version: current.version + 1 } : ruleset(hex(100 + i), z, [], 'http_request_firewall_custom'),
        ),
      ),
    );
    assert.equal(new Set(puts.map((r) => r.id)).size, 1);
    assert.equal((await store.getEntrypoint(z, 'http_request_firewall_custom'))?.version, 8, 'every put applied, one after another');
    assert.equal((await store.listRulesets(z)).length, 2);
    const counts: number[] = [];
    const jobs = await Promise.all(
      Array.from({ length: 10 }, () =>
        store.createJob(z, (count) => {
          counts.push(count);
          return job(z, true);
        }),
      ),
    );
    assert.equal(new Set(jobs.map((j) => j.id)).size, 10);
    assert.deepEqual(
      counts.sort((x, y) => x - y),
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
      'each plan saw the jobs committed before it',
    );
  });
}
