/**
 * Every method the official `cloudflare` SDK (7.3) has in the groups edgeport implements (zones,
 * rulesets, logpush, r2, workers, user, accounts, memberships), called through the SDK against
 * `edgeport start`. The methods edgeport serves are called in a scenario that checks each one's
 * effect (a script deployed, its settings changed, a bucket made public and read through its URL,
 * ...); every other method is called with placeholder arguments and must be refused by name
 * (`403 / 10015 not entitled: edgeport does not provide ...`). A method with an account and a
 * zone form (rulesets, log jobs) counts once per form. The test prints each method's verdict
 * that is not `works`, and the counts: in all, and over the resources edgeport implements (the
 * SDK classes of which it serves at least one method).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import Cloudflare, { APIError } from 'cloudflare';
import { startEdgeport } from '../helpers/edgeport-server.ts';
import { sdkRoutes, type SdkRoute } from '../helpers/sdk-routes.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { moduleFile, sdkFor, servedWithin, viaEdge } from '../helpers/workers-upload.ts';

const ADMIN = { email: 'sdk@example.test', key: 'sdk-methods-admin-key-0123' };
type Verdict = 'works' | 'refused by name' | 'wrong';
type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any -- the SDK's many result shapes

const SCRIPT = (version: string) =>
  `export default { async fetch(request, env) { return new Response([env.GREETING ?? '-', env.TOKEN ?? '-', '${version}'].join(' ')); } };`;

/** Reads an SDK list (a page promise) whole. */
async function all(pages: AsyncIterable<unknown>): Promise<Json[]> {
  const items: Json[] = [];
  for await (const item of pages) items.push(item);
  return items;
}

/** The SDK function at `name` (`workers.scripts.secrets.bulkUpdate`) bound to its resource. */
function methodAt(client: Cloudflare, name: string): (...args: unknown[]) => Promise<unknown> {
  const path = name.replace(/\((account|zone)\)$/, '').split('.');
  let target: Json = client;
  for (const part of path.slice(0, -1)) target = target[part];
  const fn = target[path.at(-1)!] as (...args: unknown[]) => Promise<unknown>;
  return fn.bind(target);
}

/** A method called with placeholders: its own arguments before `params` are ids; path parameters not among them go in `params`. */
function placeholderCall(client: Cloudflare, route: SdkRoute, ids: { account: string; zone: string }): Promise<unknown> {
  const names = [...route.template.matchAll(/\$\{(\w+)\}/g)].map((match) => match[1]!);
  const params: Record<string, unknown> = {};
  for (const name of names) {
    if (name === 'account_id') params.account_id = ids.account;
    else if (name === 'zone_id') params.zone_id = ids.zone;
    else if (!route.args.includes(name)) params[name] = 'f'.repeat(32);
  }
  const args = route.args
    .filter((arg) => arg !== 'options')
    .map((arg) => (arg === 'params' ? params : arg === 'body' || arg === 'query' ? {} : 'f'.repeat(32)));
  return methodAt(client, route.name)(...args);
}

test('every SDK method of the implemented groups works or is refused by name', { timeout: 300_000 }, async (t) => {
  const dir = tempDir(t);
  const server = await startEdgeport({
    owner: t,
    dataDir: join(dir, 'data'),
    // Load shedding off: this test checks every call's answer, and a busy machine would shed some (tested in test/cli/load-shedding.test.ts).
    env: { EDGEPORT_ADMIN_EMAIL: ADMIN.email, EDGEPORT_ADMIN_KEY: ADMIN.key, EDGEPORT_LOGS_FILE_ROOTS: dir },
    shedding: false,
  });
  const apiUrl = server.urls['management API']!;
  const edge = server.urls.edge!;
  const cf = sdkFor(apiUrl, ADMIN.email, ADMIN.key);
  const tokenClient = (value: string) =>
    new Cloudflare({ baseURL: apiUrl, apiToken: value, apiEmail: null, apiKey: null, userServiceKey: null, maxRetries: 0 });
  const [account] = (await cf.accounts.list()).result as Json[];
  const account_id = account.id as string;

  const verdicts = new Map<string, { verdict: Verdict; detail: string }>();
  /** Runs the served method `name`'s call and check; a throw is `wrong`. */
  async function served<T>(name: string, call: () => Promise<T>, check: (result: T) => unknown | Promise<unknown> = () => {}): Promise<T | undefined> {
    const began = performance.now();
    try {
      const result = await call();
      await check(result);
      verdicts.set(name, { verdict: 'works', detail: '' });
      if (performance.now() - began > 3_000) console.log(`slow: ${name} ${Math.round(performance.now() - began)} ms`);
      return result;
    } catch (error) {
      const detail = error instanceof APIError ? `${error.status} ${JSON.stringify(error.errors)}` : ((error as Error).stack ?? String(error));
      verdicts.set(name, { verdict: 'wrong', detail });
      return undefined;
    }
  }
  /** A served method whose right answer is an error (a lookup of what is not there). */
  async function servedError(name: string, call: () => Promise<unknown>, status: number): Promise<void> {
    await served(name, async () => {
      try {
        await call();
      } catch (error) {
        if (error instanceof APIError && error.status === status && (error.errors[0] as Json)?.code !== 10015) return;
        throw error;
      }
      throw new Error(`succeeded; expected ${status}`);
    });
  }

  // ---- Accounts, user, memberships, tokens ----
  await served(
    'accounts.list',
    () => cf.accounts.list().then((page) => page.result as Json[]),
    (list) =>
      assert.deepEqual(
        list.map((a) => a.id),
        [account_id],
      ),
  );
  await served(
    'accounts.get',
    () => cf.accounts.get({ account_id }) as Promise<Json>,
    (got) => assert.equal(got.id, account_id),
  );
  const members = await served(
    'accounts.members.list',
    () => all(cf.accounts.members.list({ account_id })),
    (list) => assert.equal(list[0].email, ADMIN.email),
  );
  await served(
    'accounts.members.get',
    () => cf.accounts.members.get(members![0].id, { account_id }) as Promise<Json>,
    (got) => assert.equal(got.status, 'accepted'),
  );
  const roles = await served(
    'accounts.roles.list',
    () => all(cf.accounts.roles.list({ account_id })),
    (list) => assert.equal(list[0].name, 'Super Administrator - All Privileges'),
  );
  await served(
    'accounts.roles.get',
    () => cf.accounts.roles.get(roles![0].id, { account_id }) as Promise<Json>,
    (got) => assert.equal(got.permissions.zones.write, true),
  );
  await served(
    'user.get',
    () => cf.user.get() as Promise<Json>,
    (user) => assert.equal(user.email, ADMIN.email),
  );
  const memberships = await served(
    'memberships.list',
    () => all(cf.memberships.list()),
    (list) => assert.equal(list[0].account.id, account_id),
  );
  await served(
    'memberships.get',
    () => cf.memberships.get(memberships![0].id) as Promise<Json>,
    (got) => assert.equal(got.status, 'accepted'),
  );
  await served(
    'memberships.update',
    () => cf.memberships.update(memberships![0].id, { status: 'accepted' }) as Promise<Json>,
    (got) => assert.equal(got.status, 'accepted'),
  );

  const accountResource = { [`com.cloudflare.api.account.${account_id}`]: '*' };
  const R2_READ = { id: 'b4992e1108244f5d8bfbd5744320c2e1' };
  for (const [group, tokens] of [
    ['user.tokens', cf.user.tokens],
    ['accounts.tokens', cf.accounts.tokens],
  ] as const) {
    const scope = group === 'accounts.tokens' ? { account_id } : {};
    const made = await served(
      `${group}.create`,
      () =>
        (tokens as Json).create({
          ...scope,
          name: `${group} ci`,
          policies: [{ effect: 'allow', resources: accountResource, permission_groups: [R2_READ] }],
        }) as Promise<Json>,
      (token) => assert.match(token.value, /^[A-Za-z0-9_-]{40,}$/),
    );
    await served(
      `${group}.list`,
      () => all((tokens as Json).list(scope)),
      (list) =>
        assert.deepEqual(
          list.map((t: Json) => t.id),
          [made!.id],
        ),
    );
    await served(
      `${group}.get`,
      () => (tokens as Json).get(made!.id, scope) as Promise<Json>,
      (got) => assert.equal(got.name, `${group} ci`),
    );
    await served(
      `${group}.verify`,
      () =>
        (group === 'user.tokens'
          ? tokenClient(made!.value).user.tokens.verify()
          : tokenClient(made!.value).accounts.tokens.verify({ account_id })) as Promise<Json>,
      (got) => assert.deepEqual([got.id, got.status], [made!.id, 'active']),
    );
    await served(
      `${group}.permissionGroups.list`,
      () => (tokens as Json).permissionGroups.list(scope).then((page: Json) => page.result as Json[]) as Promise<Json[]>,
      (groups: Json[]) => assert.ok(groups.some((g: Json) => g.id === R2_READ.id)),
    );
    if (group === 'accounts.tokens') {
      await served(
        'accounts.tokens.permissionGroups.get',
        () => cf.accounts.tokens.permissionGroups.get({ account_id, name: 'Workers R2 Storage Read' }) as Promise<Json>,
        (groups) =>
          assert.deepEqual(
            (Array.isArray(groups) ? groups : groups.result).map((g: Json) => g.id),
            [R2_READ.id],
          ),
      );
    }
    await served(
      `${group}.update`,
      () =>
        (tokens as Json).update(made!.id, {
          ...scope,
          name: 'renamed',
          status: 'disabled',
          policies: [{ effect: 'allow', resources: accountResource, permission_groups: [R2_READ] }],
        }) as Promise<Json>,
      (got) => assert.deepEqual([got.name, got.status], ['renamed', 'disabled']),
    );
    await served(
      `${group}.value.update`,
      () => (tokens as Json).value.update(made!.id, group === 'accounts.tokens' ? { account_id } : {}) as Promise<string>,
      async (value) => {
        assert.notEqual(value, made!.value);
        assert.equal(
          (await fetch(`${apiUrl}/user/tokens/verify`, { headers: { authorization: `Bearer ${made!.value}` } })).status,
          401,
          'the old value is refused',
        );
      },
    );
    await served(
      `${group}.delete`,
      () => (tokens as Json).delete(made!.id, scope) as Promise<Json>,
      async () => assert.equal((await all((tokens as Json).list(scope))).length, 0),
    );
  }

  // ---- Zones, rulesets, log jobs ----
  const zone = await served(
    'zones.create',
    () => cf.zones.create({ account: { id: account_id }, name: 'sdk.test' }) as Promise<Json>,
    (z) => assert.equal(z.name, 'sdk.test'),
  );
  const zone_id = zone!.id as string;
  await served(
    'zones.list',
    () => all(cf.zones.list()),
    (list) =>
      assert.deepEqual(
        list.map((z: Json) => z.name),
        ['sdk.test'],
      ),
  );
  await served(
    'zones.get',
    () => cf.zones.get({ zone_id }) as Promise<Json>,
    (got) => assert.equal(got.id, zone_id),
  );
  await served(
    'zones.edit',
    () => cf.zones.edit({ zone_id, paused: true } as never) as Promise<Json>,
    async (got) => {
      assert.equal(got.paused, true);
      assert.equal(((await cf.zones.get({ zone_id })) as Json).paused, true);
    },
  );
  const PHASE = 'http_log_custom_fields';
  const rule = (name: string) => ({ action: 'log_custom_field' as const, expression: 'true', action_parameters: { request_fields: [{ name }] } });
  const ruleset = await served(
    'rulesets.create(zone)',
    () => cf.rulesets.create({ zone_id, name: 'fields', kind: 'zone', phase: PHASE }) as Promise<Json>,
    (r) => assert.equal(r.version, '1'),
  );
  await served(
    'rulesets.list(zone)',
    () => all(cf.rulesets.list({ zone_id })),
    (list) =>
      assert.deepEqual(
        list.map((r: Json) => r.id),
        [ruleset!.id],
      ),
  );
  await served(
    'rulesets.update(zone)',
    () => cf.rulesets.update(ruleset!.id, { zone_id, rules: [rule('a-header')] }) as Promise<Json>,
    (r) => assert.equal(r.rules.length, 1),
  );
  await served(
    'rulesets.get(zone)',
    () => cf.rulesets.get(ruleset!.id, { zone_id }) as Promise<Json>,
    (r) => assert.equal(r.version, '2'),
  );
  await served(
    'rulesets.phases.update(zone)',
    () => cf.rulesets.phases.update(PHASE, { zone_id, rules: [rule('a-header'), rule('b-header')] }) as Promise<Json>,
    (r) => assert.equal(r.rules.length, 2),
  );
  await served(
    'rulesets.phases.get(zone)',
    () => cf.rulesets.phases.get(PHASE, { zone_id }) as Promise<Json>,
    (r) => assert.equal(r.version, '3'),
  );
  const added = await served(
    'rulesets.rules.create(zone)',
    () => cf.rulesets.rules.create(ruleset!.id, { zone_id, ...rule('c-header') }) as Promise<Json>,
    (r) => assert.equal(r.rules.length, 3),
  );
  const cRule = added!.rules[2].id as string;
  await served(
    'rulesets.rules.edit(zone)',
    () => cf.rulesets.rules.edit(cRule, { zone_id, ruleset_id: ruleset!.id, ...rule('d-header') }) as Promise<Json>,
    (r) => assert.equal(r.rules[2].action_parameters.request_fields[0].name, 'd-header'),
  );
  await served(
    'rulesets.rules.delete(zone)',
    () => cf.rulesets.rules.delete(cRule, { zone_id, ruleset_id: ruleset!.id }) as Promise<Json>,
    (r) => assert.equal(r.rules.length, 2),
  );
  await served(
    'rulesets.versions.list(zone)',
    () => all(cf.rulesets.versions.list(ruleset!.id, { zone_id })),
    (list) =>
      assert.deepEqual(
        list.map((v: Json) => v.version),
        ['6', '5', '4', '3', '2', '1'],
      ),
  );
  await served(
    'rulesets.versions.get(zone)',
    () => cf.rulesets.versions.get('2', { zone_id, ruleset_id: ruleset!.id }) as Promise<Json>,
    (v) => assert.equal(v.rules.length, 1),
  );
  await served(
    'rulesets.phases.versions.list(zone)',
    () => all(cf.rulesets.phases.versions.list(PHASE, { zone_id })),
    (list) => assert.equal(list.length, 6),
  );
  await served(
    'rulesets.phases.versions.get(zone)',
    () => cf.rulesets.phases.versions.get('3', { zone_id, ruleset_phase: PHASE }) as Promise<Json>,
    (v) => assert.equal(v.rules.length, 2),
  );
  await served(
    'rulesets.versions.delete(zone)',
    () => cf.rulesets.versions.delete('1', { zone_id, ruleset_id: ruleset!.id }),
    async () => {
      assert.deepEqual(
        (await all(cf.rulesets.versions.list(ruleset!.id, { zone_id }))).map((v: Json) => v.version),
        ['6', '5', '4', '3', '2'],
      );
    },
  );

  const destination = `file://${join(dir, 'logs')}/{DATE}`;
  const challenge = await served(
    'logpush.ownership.create(zone)',
    () => cf.logpush.ownership.create({ zone_id, destination_conf: destination }) as Promise<Json>,
    (c) => assert.equal(c.valid, true),
  );
  const token = readFileSync(challenge!.filename as string, 'utf8').trim();
  await served(
    'logpush.ownership.validate(zone)',
    () => cf.logpush.ownership.validate({ zone_id, destination_conf: destination, ownership_challenge: token }) as Promise<Json>,
    (v) => assert.equal(v.valid, true),
  );
  await served(
    'logpush.validate.destination(zone)',
    () => cf.logpush.validate.destination({ zone_id, destination_conf: destination }) as Promise<Json>,
    (v) => assert.equal(v.valid, true),
  );
  await served(
    'logpush.validate.origin(zone)',
    () => cf.logpush.validate.origin({ zone_id, logpull_options: 'fields=RayID,ClientIP&timestamps=rfc3339' }) as Promise<Json>,
    (v) => assert.equal(v.valid, true),
  );
  await served(
    'logpush.validate.destinationExists(zone)',
    () => cf.logpush.validate.destinationExists({ zone_id, destination_conf: destination }) as Promise<Json>,
    (v) => assert.equal(v.exists, false),
  );
  const job = await served(
    'logpush.jobs.create(zone)',
    () =>
      cf.logpush.jobs.create({
        zone_id,
        destination_conf: destination,
        dataset: 'http_requests',
        ownership_challenge: token,
        output_options: { field_names: ['RayID'] },
      }) as Promise<Json>,
    (j) => assert.equal(j.enabled, false),
  );
  await served(
    'logpush.jobs.list(zone)',
    () => all(cf.logpush.jobs.list({ zone_id })),
    (list) =>
      assert.deepEqual(
        list.map((j: Json) => j.id),
        [job!.id],
      ),
  );
  await served(
    'logpush.jobs.get(zone)',
    () => cf.logpush.jobs.get(job!.id, { zone_id }) as Promise<Json>,
    (j) => assert.equal(j.dataset, 'http_requests'),
  );
  await served(
    'logpush.jobs.update(zone)',
    () => cf.logpush.jobs.update(job!.id, { zone_id, enabled: true }) as Promise<Json>,
    (j) => assert.equal(j.enabled, true),
  );
  await served(
    'logpush.datasets.fields.get(zone)',
    () => cf.logpush.datasets.fields.get('http_requests', { zone_id }) as Promise<Json>,
    (fields) => assert.ok('RayID' in fields),
  );
  await served(
    'logpush.datasets.jobs.get(zone)',
    () => all(cf.logpush.datasets.jobs.get('http_requests', { zone_id })),
    (list) => assert.equal(list.length, 1),
  );
  await served(
    'logpush.jobs.delete(zone)',
    () => cf.logpush.jobs.delete(job!.id, { zone_id }) as Promise<Json>,
    async () => assert.equal((await all(cf.logpush.jobs.list({ zone_id }))).length, 0),
  );

  // ---- R2 ----
  await served(
    'r2.buckets.create',
    () => cf.r2.buckets.create({ account_id, name: 'files' }) as Promise<Json>,
    (b) => assert.equal(b.name, 'files'),
  );
  await served(
    'r2.buckets.list',
    () => cf.r2.buckets.list({ account_id }) as Promise<Json>,
    (list) =>
      assert.deepEqual(
        list.buckets.map((b: Json) => b.name),
        ['files'],
      ),
  );
  await served(
    'r2.buckets.get',
    () => cf.r2.buckets.get('files', { account_id }) as Promise<Json>,
    (b) => assert.equal(b.storage_class, 'Standard'),
  );
  await served(
    'r2.buckets.edit',
    () => cf.r2.buckets.edit('files', { account_id, storage_class: 'InfrequentAccess' }) as Promise<Json>,
    async () => {
      assert.equal(((await cf.r2.buckets.get('files', { account_id })) as Json).storage_class, 'InfrequentAccess');
      await cf.r2.buckets.edit('files', { account_id, storage_class: 'Standard' });
    },
  );
  await served('r2.buckets.cors.update', () =>
    cf.r2.buckets.cors.update('files', { account_id, rules: [{ allowed: { origins: ['https://app.test'], methods: ['GET'] } }] }),
  );
  await served(
    'r2.buckets.cors.get',
    () => cf.r2.buckets.cors.get('files', { account_id }) as Promise<Json>,
    (c) => assert.deepEqual(c.rules[0].allowed.origins, ['https://app.test']),
  );
  await served(
    'r2.buckets.cors.delete',
    () => cf.r2.buckets.cors.delete('files', { account_id }),
    async () => {
      assert.equal(((await cf.r2.buckets.cors.get('files', { account_id }).catch((error: APIError) => error)) as APIError).status, 404);
    },
  );
  await served('r2.buckets.lifecycle.update', () =>
    cf.r2.buckets.lifecycle.update('files', {
      account_id,
      rules: [{ id: 'expire-tmp', enabled: true, conditions: { prefix: 'tmp/' }, deleteObjectsTransition: { condition: { type: 'Age', maxAge: 86_400 } } }],
    }),
  );
  await served(
    'r2.buckets.lifecycle.get',
    () => cf.r2.buckets.lifecycle.get('files', { account_id }) as Promise<Json>,
    (l) => assert.equal(l.rules[0].id, 'expire-tmp'),
  );
  await served('r2.buckets.objects.upload', () => cf.r2.buckets.objects.upload('docs/a.txt', 'public text', { account_id, bucket_name: 'files' } as never));
  await served(
    'r2.buckets.objects.get',
    () => cf.r2.buckets.objects.get('docs/a.txt', { account_id, bucket_name: 'files' }) as Promise<Response>,
    async (response) => assert.equal(await response.text(), 'public text'),
  );
  await served(
    'r2.buckets.objects.list',
    () => all(cf.r2.buckets.objects.list('files', { account_id })),
    (list) =>
      assert.deepEqual(
        list.map((o: Json) => o.key),
        ['docs/a.txt'],
      ),
  );
  const managed = await served(
    'r2.buckets.domains.managed.update',
    () => cf.r2.buckets.domains.managed.update('files', { account_id, enabled: true }) as Promise<Json>,
    async (m) => {
      assert.equal(m.enabled, true);
      const deadline = Date.now() + 5_000;
      while ((await viaEdge(edge, m.domain, '/docs/a.txt')).body !== 'public text') {
        assert.ok(Date.now() < deadline, 'the managed URL serves the bucket');
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    },
  );
  await served(
    'r2.buckets.domains.managed.list',
    () => cf.r2.buckets.domains.managed.list('files', { account_id }) as Promise<Json>,
    (m) => assert.deepEqual(m, managed),
  );
  await served(
    'r2.buckets.domains.custom.create',
    () => cf.r2.buckets.domains.custom.create('files', { account_id, domain: 'cdn.sdk.test', zoneId: zone_id, enabled: true }) as Promise<Json>,
    async () => {
      await cf.zones.edit({ zone_id, paused: false } as never);
      const deadline = Date.now() + 5_000;
      for (;;) {
        const answer = await viaEdge(edge, 'cdn.sdk.test', '/docs/a.txt');
        if (answer.body === 'public text') return;
        assert.ok(Date.now() < deadline, `cdn.sdk.test answered ${answer.status}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    },
  );
  await served(
    'r2.buckets.domains.custom.list',
    () => cf.r2.buckets.domains.custom.list('files', { account_id }) as Promise<Json>,
    (list) =>
      assert.deepEqual(
        list.domains.map((d: Json) => d.domain),
        ['cdn.sdk.test'],
      ),
  );
  await served(
    'r2.buckets.domains.custom.get',
    () => cf.r2.buckets.domains.custom.get('cdn.sdk.test', { account_id, bucket_name: 'files' }) as Promise<Json>,
    (d) => assert.equal(d.zoneName, 'sdk.test'),
  );
  await served(
    'r2.buckets.domains.custom.update',
    () => cf.r2.buckets.domains.custom.update('cdn.sdk.test', { account_id, bucket_name: 'files', enabled: false }) as Promise<Json>,
    (d) => assert.equal(d.enabled, false),
  );
  await served(
    'r2.buckets.domains.custom.delete',
    () => cf.r2.buckets.domains.custom.delete('cdn.sdk.test', { account_id, bucket_name: 'files' }),
    async () => {
      assert.deepEqual(((await cf.r2.buckets.domains.custom.list('files', { account_id })) as Json).domains, []);
    },
  );
  await served(
    'r2.buckets.locks.get',
    () => cf.r2.buckets.locks.get('files', { account_id }) as Promise<Json>,
    (locks) => assert.deepEqual(locks.rules, []),
  );
  await served(
    'r2.buckets.sippy.get',
    () => cf.r2.buckets.sippy.get('files', { account_id }) as Promise<Json>,
    (sippy) => assert.equal(sippy.enabled, false),
  );
  await served(
    'r2.buckets.sippy.delete',
    () => cf.r2.buckets.sippy.delete('files', { account_id }) as Promise<Json>,
    (sippy) => assert.equal(sippy.enabled, false),
  );
  await served(
    'r2.buckets.eventNotifications.list',
    () => cf.r2.buckets.eventNotifications.list('files', { account_id }) as Promise<Json>,
    (config) => assert.deepEqual(config.queues, []),
  );
  await servedError('r2.buckets.eventNotifications.get', () => cf.r2.buckets.eventNotifications.get('f'.repeat(32), { account_id, bucket_name: 'files' }), 404);
  await servedError(
    'r2.buckets.eventNotifications.delete',
    () => cf.r2.buckets.eventNotifications.delete('f'.repeat(32), { account_id, bucket_name: 'files' }),
    404,
  );
  await served(
    'r2.buckets.objects.delete',
    () => cf.r2.buckets.objects.delete('docs/a.txt', { account_id, bucket_name: 'files' }),
    async () => assert.equal((await all(cf.r2.buckets.objects.list('files', { account_id }))).length, 0),
  );

  // ---- Workers ----
  await served(
    'workers.accountSettings.get',
    () => cf.workers.accountSettings.get({ account_id }) as Promise<Json>,
    (s) => assert.equal(s.default_usage_model, 'standard'),
  );
  await served(
    'workers.accountSettings.update',
    () => cf.workers.accountSettings.update({ account_id, default_usage_model: 'standard' } as never) as Promise<Json>,
    (s) => assert.equal(s.green_compute, false),
  );
  await served(
    'workers.subdomains.update',
    () => cf.workers.subdomains.update({ account_id, subdomain: 'sdkuser' }) as Promise<Json>,
    (s) => assert.equal(s.subdomain, 'sdkuser'),
  );
  await served(
    'workers.subdomains.get',
    () => cf.workers.subdomains.get({ account_id }) as Promise<Json>,
    (s) => assert.equal(s.subdomain, 'sdkuser'),
  );
  await served(
    'workers.scripts.update',
    async () =>
      cf.workers.scripts.update('hello', {
        account_id,
        metadata: {
          main_module: 'index.js',
          compatibility_date: '2025-01-01',
          bindings: [{ type: 'plain_text', name: 'GREETING', text: 'hi' }],
          logpush: true,
          observability: { enabled: true },
        },
        files: [await moduleFile(SCRIPT('v1'))],
      }) as Promise<Json>,
    async (script) => {
      assert.deepEqual([script.logpush, script.observability.enabled], [true, true], 'the upload keeps logpush and observability');
      await servedWithin(edge, 'hello.sdkuser.workers.localhost', 'hi - v1', 5_000);
    },
  );
  await served(
    'workers.scripts.list',
    () => all(cf.workers.scripts.list({ account_id })),
    (list) =>
      assert.deepEqual(
        list.map((s: Json) => s.id),
        ['hello'],
      ),
  );
  await served(
    'workers.scripts.get',
    () => cf.workers.scripts.get('hello', { account_id }) as unknown as Promise<Json>,
    async (got) => {
      const text = typeof got === 'string' ? got : ((await (got as Response).text?.()) ?? String(got));
      assert.match(String(text), /v1/);
    },
  );
  await served(
    'workers.scripts.search',
    () => cf.workers.scripts.search({ account_id, name: 'hel' }) as Promise<Json>,
    (found) =>
      assert.deepEqual(
        found.map((s: Json) => s.script_name),
        ['hello'],
      ),
  );
  await served(
    'workers.beta.workers.get',
    () => cf.workers.beta.workers.get('hello', { account_id }) as Promise<Json>,
    (w) => assert.equal(w.name, 'hello'),
  );
  await served(
    'workers.beta.workers.list',
    () => all(cf.workers.beta.workers.list({ account_id })),
    (list) =>
      assert.deepEqual(
        list.map((w: Json) => w.name),
        ['hello'],
      ),
  );
  await served(
    'workers.beta.workers.edit',
    () => cf.workers.beta.workers.edit('hello', { account_id, tags: ['beta'] } as never) as Promise<Json>,
    async (w) => {
      assert.deepEqual([w.tags, w.logpush], [['beta'], true], 'PATCH changes what it gives');
      assert.deepEqual(((await cf.workers.scripts.settings.get('hello', { account_id })) as Json).tags, ['beta']);
    },
  );
  await served(
    'workers.beta.workers.update',
    () => cf.workers.beta.workers.update('hello', { account_id, name: 'hello', logpush: true, observability: { enabled: true } } as never) as Promise<Json>,
    (w) => assert.deepEqual([w.tags, w.logpush, w.observability.enabled], [[], true, true], 'PUT replaces: the tags left out are gone'),
  );
  await served(
    'workers.scripts.content.get',
    () => cf.workers.scripts.content.get('hello', { account_id }) as Promise<Response>,
    async (response) => assert.match(await response.text(), /v1/),
  );
  await served(
    'workers.scripts.content.update',
    async () =>
      cf.workers.scripts.content.update('hello', {
        account_id,
        metadata: { main_module: 'index.js' },
        files: [await moduleFile(SCRIPT('v2'))],
      } as never) as Promise<Json>,
    async () => servedWithin(edge, 'hello.sdkuser.workers.localhost', 'hi - v2', 5_000),
  );
  await served(
    'workers.scripts.settings.get',
    () => cf.workers.scripts.settings.get('hello', { account_id }) as Promise<Json>,
    (s) => assert.equal(s.logpush, true),
  );
  await served(
    'workers.scripts.settings.edit',
    () => cf.workers.scripts.settings.edit('hello', { account_id, logpush: false, tags: ['team:web'] } as never) as Promise<Json>,
    async () => assert.deepEqual(((await cf.workers.scripts.settings.get('hello', { account_id })) as Json).tags, ['team:web']),
  );
  await served(
    'workers.scripts.scriptAndVersionSettings.edit',
    () =>
      cf.workers.scripts.scriptAndVersionSettings.edit('hello', {
        account_id,
        settings: { compatibility_date: '2025-02-01', bindings: [{ type: 'plain_text', name: 'GREETING', text: 'hey' }], logpush: true },
      } as never) as Promise<Json>,
    async (s) => {
      assert.deepEqual([s.compatibility_date, s.logpush], ['2025-02-01', true]);
      await servedWithin(edge, 'hello.sdkuser.workers.localhost', 'hey - v2', 5_000);
    },
  );
  await served(
    'workers.scripts.scriptAndVersionSettings.get',
    () => cf.workers.scripts.scriptAndVersionSettings.get('hello', { account_id }) as Promise<Json>,
    (s) => assert.deepEqual(s.bindings, [{ type: 'plain_text', name: 'GREETING', text: 'hey' }]),
  );
  // The same settings as JSON (curl's way): a versioned change takes, a setting edgeport does not apply is refused by name.
  const patchSettings = (body: unknown) =>
    fetch(`${apiUrl}/accounts/${account_id}/workers/scripts/hello/settings`, {
      method: 'PATCH',
      headers: { 'x-auth-email': ADMIN.email, 'x-auth-key': ADMIN.key, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const flagged = await patchSettings({ compatibility_flags: ['nodejs_compat'] });
  assert.equal(flagged.status, 200);
  assert.deepEqual(((await cf.workers.scripts.scriptAndVersionSettings.get('hello', { account_id })) as Json).compatibility_flags, ['nodejs_compat']);
  const placement = await patchSettings({ placement: { mode: 'smart' } });
  assert.equal(placement.status, 403);
  assert.match(JSON.stringify(await placement.json()), /10015.*Smart Placement/);
  await served(
    'workers.scripts.secrets.update',
    () => cf.workers.scripts.secrets.update('hello', { account_id, name: 'TOKEN', text: 't1', type: 'secret_text' } as never) as Promise<Json>,
    async () => servedWithin(edge, 'hello.sdkuser.workers.localhost', 'hey t1 v2', 5_000),
  );
  await served(
    'workers.scripts.secrets.list',
    () => all(cf.workers.scripts.secrets.list('hello', { account_id })),
    (list) =>
      assert.deepEqual(
        list.map((s: Json) => s.name),
        ['TOKEN'],
      ),
  );
  await served(
    'workers.scripts.secrets.get',
    () => cf.workers.scripts.secrets.get('TOKEN', { account_id, script_name: 'hello' }) as Promise<Json>,
    (s) => assert.deepEqual(s, { name: 'TOKEN', type: 'secret_text' }),
  );
  await served(
    'workers.scripts.secrets.bulkUpdate',
    () =>
      cf.workers.scripts.secrets.bulkUpdate('hello', {
        account_id,
        secrets: { TOKEN: { name: 'TOKEN', type: 'secret_text', text: 't2' }, EXTRA: { name: 'EXTRA', type: 'secret_text', text: 'x' } },
      } as never) as Promise<Json>,
    async (result) => {
      assert.deepEqual(Object.keys(result).sort(), ['EXTRA', 'TOKEN']);
      await servedWithin(edge, 'hello.sdkuser.workers.localhost', 'hey t2 v2', 5_000);
    },
  );
  await served(
    'workers.scripts.secrets.delete',
    () => cf.workers.scripts.secrets.delete('EXTRA', { account_id, script_name: 'hello' }),
    async () => {
      assert.deepEqual(
        (await all(cf.workers.scripts.secrets.list('hello', { account_id }))).map((s: Json) => s.name),
        ['TOKEN'],
      );
    },
  );
  const version = await served(
    'workers.scripts.versions.create',
    async () =>
      cf.workers.scripts.versions.create('hello', {
        account_id,
        metadata: { main_module: 'index.js', compatibility_date: '2025-02-01', bindings: [{ type: 'plain_text', name: 'GREETING', text: 'hey' }] },
        files: [await moduleFile(SCRIPT('v3'))],
      } as never) as Promise<Json>,
    (v) => assert.ok(v.id),
  );
  await served(
    'workers.scripts.versions.list',
    () => all(cf.workers.scripts.versions.list('hello', { account_id })),
    (list) => assert.equal(list[0].id, version!.id),
  );
  await served(
    'workers.scripts.versions.get',
    () => cf.workers.scripts.versions.get(version!.id, { account_id, script_name: 'hello' }) as Promise<Json>,
    (v) => {
      assert.deepEqual(
        v.resources.bindings.filter((b: Json) => b.type === 'secret_text'),
        [{ type: 'secret_text', name: 'TOKEN' }],
        'the version lists the secret',
      );
      assert.equal(v.metadata.author_email, ADMIN.email);
    },
  );
  const deployment = await served(
    'workers.scripts.deployments.create',
    () =>
      cf.workers.scripts.deployments.create('hello', {
        account_id,
        strategy: 'percentage',
        versions: [{ version_id: version!.id, percentage: 100 }],
      }) as Promise<Json>,
    async () => servedWithin(edge, 'hello.sdkuser.workers.localhost', 'hey t2 v3', 5_000),
  );
  const deployments = await served(
    'workers.scripts.deployments.list',
    () => all(cf.workers.scripts.deployments.list('hello', { account_id })),
    (list) => assert.equal(list[0].id, deployment!.id),
  );
  await served(
    'workers.scripts.deployments.get',
    () => cf.workers.scripts.deployments.get(deployment!.id, { account_id, script_name: 'hello' }) as Promise<Json>,
    (d) => assert.equal(d.versions[0].version_id, version!.id),
  );
  await served(
    'workers.scripts.deployments.delete',
    () => cf.workers.scripts.deployments.delete(deployments!.at(-1).id, { account_id, script_name: 'hello' }),
    async () => {
      assert.equal((await all(cf.workers.scripts.deployments.list('hello', { account_id }))).length, deployments!.length - 1);
    },
  );
  await served(
    'workers.scripts.subdomain.delete',
    () => cf.workers.scripts.subdomain.delete('hello', { account_id }),
    async () => {
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      assert.equal((await viaEdge(edge, 'hello.sdkuser.workers.localhost')).status, 404);
    },
  );
  await served(
    'workers.scripts.subdomain.create',
    () => cf.workers.scripts.subdomain.create('hello', { account_id, enabled: true }) as Promise<Json>,
    async () => servedWithin(edge, 'hello.sdkuser.workers.localhost', 'hey t2 v3', 5_000),
  );
  await served(
    'workers.scripts.subdomain.get',
    () => cf.workers.scripts.subdomain.get('hello', { account_id }) as Promise<Json>,
    (s) => assert.equal(s.enabled, true),
  );
  const tail = await served(
    'workers.scripts.tail.create',
    () => cf.workers.scripts.tail.create('hello', { account_id, body: { filters: [] } } as never) as Promise<Json>,
    (tl) => assert.match(tl.url, /^ws:\/\//),
  );
  await served(
    'workers.scripts.tail.get',
    () => cf.workers.scripts.tail.get('hello', { account_id }) as Promise<Json>,
    (list) =>
      assert.deepEqual(
        (list as Json[]).map((tl) => tl.id),
        [tail!.id],
      ),
  );
  await served(
    'workers.scripts.tail.delete',
    () => cf.workers.scripts.tail.delete(tail!.id, { account_id, script_name: 'hello' }),
    async () => {
      assert.deepEqual(await cf.workers.scripts.tail.get('hello', { account_id }), []);
    },
  );
  await cf.zones.edit({ zone_id, paused: false } as never);
  const route = await served(
    'workers.routes.create',
    () => cf.workers.routes.create({ zone_id, pattern: 'sdk.test/app/*', script: 'hello' }) as Promise<Json>,
    async () => {
      const deadline = Date.now() + 5_000;
      while ((await viaEdge(edge, 'sdk.test', '/app/x')).body !== 'hey t2 v3') {
        assert.ok(Date.now() < deadline, 'the route serves the script');
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    },
  );
  await served(
    'workers.routes.list',
    () => all(cf.workers.routes.list({ zone_id })),
    (list) =>
      assert.deepEqual(
        list.map((r: Json) => r.pattern),
        ['sdk.test/app/*'],
      ),
  );
  await served(
    'workers.routes.get',
    () => cf.workers.routes.get(route!.id, { zone_id }) as Promise<Json>,
    (r) => assert.equal(r.script, 'hello'),
  );
  await served(
    'workers.routes.update',
    () => cf.workers.routes.update(route!.id, { zone_id, pattern: 'sdk.test/api/*', script: 'hello' }) as Promise<Json>,
    (r) => assert.equal(r.pattern, 'sdk.test/api/*'),
  );
  await served(
    'workers.routes.delete',
    () => cf.workers.routes.delete(route!.id, { zone_id }),
    async () => assert.equal((await all(cf.workers.routes.list({ zone_id }))).length, 0),
  );
  const domain = await served(
    'workers.domains.update',
    () => cf.workers.domains.update({ account_id, hostname: 'app.sdk.test', service: 'hello', zone_id } as never) as Promise<Json>,
    async () => {
      const deadline = Date.now() + 5_000;
      while ((await viaEdge(edge, 'app.sdk.test', '/')).body !== 'hey t2 v3') {
        assert.ok(Date.now() < deadline, 'the custom domain serves the script');
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    },
  );
  await served(
    'workers.domains.list',
    () => all(cf.workers.domains.list({ account_id })),
    (list) =>
      assert.deepEqual(
        list.map((d: Json) => d.hostname),
        ['app.sdk.test'],
      ),
  );
  await served(
    'workers.domains.get',
    () => cf.workers.domains.get(domain!.id, { account_id }) as Promise<Json>,
    (d) => assert.equal(d.service, 'hello'),
  );
  await served(
    'workers.domains.delete',
    () => cf.workers.domains.delete(domain!.id, { account_id }),
    async () => assert.equal((await all(cf.workers.domains.list({ account_id }))).length, 0),
  );
  await cf.workers.scripts.update('extra', {
    account_id,
    metadata: { main_module: 'index.js', compatibility_date: '2025-01-01' },
    files: [await moduleFile(SCRIPT('extra'))],
  });
  await served(
    'workers.beta.workers.delete',
    () => cf.workers.beta.workers.delete('extra', { account_id }),
    async () => {
      assert.deepEqual(
        (await all(cf.workers.scripts.list({ account_id }))).map((w: Json) => w.id),
        ['hello'],
      );
    },
  );
  await served(
    'workers.scripts.delete',
    () => cf.workers.scripts.delete('hello', { account_id }),
    async () => assert.equal((await all(cf.workers.scripts.list({ account_id }))).length, 0),
  );
  await served(
    'workers.subdomains.delete',
    () => cf.workers.subdomains.delete({ account_id }),
    async () => {
      assert.notEqual(
        ((await cf.workers.subdomains.get({ account_id })) as Json).subdomain,
        'sdkuser',
        'the subdomain given up is gone; asked again, the account gets one on first use',
      );
    },
  );
  await served(
    'r2.buckets.delete',
    () => cf.r2.buckets.delete('files', { account_id }),
    async () => assert.deepEqual(((await cf.r2.buckets.list({ account_id })) as Json).buckets, []),
  );
  await served(
    'rulesets.delete(zone)',
    () => cf.rulesets.delete(ruleset!.id, { zone_id }),
    async () => assert.equal((await all(cf.rulesets.list({ zone_id }))).length, 0),
  );
  await served(
    'zones.delete',
    () => cf.zones.delete({ zone_id }),
    async () => assert.equal((await all(cf.zones.list())).length, 0),
  );

  // ---- Everything else: refused by name ----
  const routes = sdkRoutes();
  const ids = { account: account_id, zone: 'e'.repeat(32) };
  const refusalsBegan = performance.now();
  for (const route of routes) {
    if (verdicts.has(route.name)) continue;
    try {
      await placeholderCall(cf, route, ids);
      verdicts.set(route.name, { verdict: 'wrong', detail: 'succeeded with placeholder arguments: a served method the scenario does not call' });
    } catch (error) {
      const code = error instanceof APIError ? (error.errors[0] as Json)?.code : undefined;
      verdicts.set(
        route.name,
        error instanceof APIError && error.status === 403 && code === 10015
          ? { verdict: 'refused by name', detail: '' }
          : { verdict: 'wrong', detail: error instanceof APIError ? `${error.status} ${JSON.stringify(error.errors)}` : String(error) },
      );
    }
  }

  console.log(`placeholder calls: ${Math.round(performance.now() - refusalsBegan)} ms`);
  const counted = (names: readonly string[]) => {
    const of = (verdict: Verdict) => names.filter((name) => verdicts.get(name)?.verdict === verdict).length;
    return { total: names.length, works: of('works'), refused: of('refused by name'), wrong: of('wrong') };
  };
  const everything = counted(routes.map((route) => route.name));
  // The resources edgeport implements: the SDK classes of which it serves at least one method.
  const classOf = (name: string) =>
    name
      .replace(/\((account|zone)\)$/, '')
      .split('.')
      .slice(0, -1)
      .join('.');
  const implemented = new Set(routes.filter((route) => verdicts.get(route.name)?.verdict === 'works').map((route) => classOf(route.name)));
  const inImplemented = counted(routes.filter((route) => implemented.has(classOf(route.name))).map((route) => route.name));
  const pct = (part: number, whole: number) => `${((100 * part) / whole).toFixed(1)}%`;
  /** Per method: a method with an account and a zone form works when one of them does (edgeport's rulesets and log jobs are the zones'). */
  const byMethod = (names: readonly string[]) => {
    const methods = new Map<string, Verdict[]>();
    for (const name of names) {
      const method = name.replace(/\((account|zone)\)$/, '');
      methods.set(method, [...(methods.get(method) ?? []), verdicts.get(name)!.verdict]);
    }
    const list = [...methods.values()];
    const works = list.filter((forms) => forms.includes('works') && !forms.includes('wrong')).length;
    const wrongCount = list.filter((forms) => forms.includes('wrong')).length;
    return { total: list.length, works, wrong: wrongCount, refused: list.length - works - wrongCount };
  };
  console.log(
    `SDK methods of the eight groups: ${everything.total}: works ${everything.works} (${pct(everything.works, everything.total)}), refused by name ${everything.refused}, wrong ${everything.wrong}`,
  );
  console.log(
    `  of the ${implemented.size} resources edgeport implements: ${inImplemented.total}: works ${inImplemented.works} (${pct(inImplemented.works, inImplemented.total)}), refused by name ${inImplemented.refused}, wrong ${inImplemented.wrong}`,
  );
  const methods = byMethod(routes.filter((route) => implemented.has(classOf(route.name))).map((route) => route.name));
  console.log(
    `  counted per method (an account and a zone form as one): ${methods.total}: works ${methods.works} (${pct(methods.works, methods.total)}), refused by name ${methods.refused}, wrong ${methods.wrong}`,
  );
  for (const name of [...verdicts.keys()].sort()) {
    const { verdict } = verdicts.get(name)!;
    if (verdict !== 'works' && implemented.has(classOf(name))) console.log(`  ${verdict.padEnd(15)} ${name}`);
  }
  const wrong = [...verdicts].filter(([, entry]) => entry.verdict === 'wrong').map(([name, entry]) => `${name}: ${entry.detail.slice(0, 600)}`);
  assert.deepEqual(wrong, [], 'every SDK method works or is refused by name');
});
