/**
 * API tokens (`/user/tokens`, `Authorization: Bearer`) against a real server: the official SDK's
 * user.tokens calls (create, list, get, update, roll, verify, delete, permissionGroups), what a
 * token's policies let it do (read vs edit, one zone vs another, its own account only), tokens
 * refused by status and dates, the limits, and failed tokens counted like wrong keys.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Cloudflare from 'cloudflare';
import { userIdOf } from '../../src/api/accounts/user-id.ts';
import { sdkError, startApi, type ApiFixture, type Credentials, type Json } from './helpers.ts';

const GROUPS = {
  tokensWrite: { id: '686d18d5ac6c441c867cbf6771e58a0a', name: 'API Tokens Write' },
  tokensRead: { id: '0cc3a61731504c89b99ec1be78b77aa0', name: 'API Tokens Read' },
  r2Read: { id: 'b4992e1108244f5d8bfbd5744320c2e1', name: 'Workers R2 Storage Read' },
  r2Write: { id: 'bf7481a1826f439697cb59a20b22293e', name: 'Workers R2 Storage Write' },
  zoneRead: { id: 'c8fed203ed3043cba015a93ad1616f1f', name: 'Zone Read' },
  zoneWrite: { id: 'e6d2666161e84845a636613608cee8d5', name: 'Zone Write' },
  logsWrite: { id: '3e0b5820118e47f3922f7c989e673882', name: 'Logs Write' },
  accountRead: { id: 'c1fde68c7bcc44588cbb6ddbc16d6480', name: 'Account Settings Read' },
} as const;

function tokenSdk(api: ApiFixture, value: string): Cloudflare {
  return new Cloudflare({ baseURL: api.base, apiToken: value, apiEmail: null, apiKey: null, userServiceKey: null, maxRetries: 0 });
}

/** fetch below /client/v4 with a Bearer token. */
async function withToken(api: ApiFixture, value: string, path: string, init: RequestInit & { json?: unknown } = {}): Promise<{ status: number; body: Json }> {
  const { json, ...rest } = init;
  const headers = new Headers(rest.headers);
  headers.set('authorization', `Bearer ${value}`);
  if (json !== undefined) headers.set('content-type', 'application/json');
  const response = await fetch(api.base + path, { ...rest, headers, ...(json === undefined ? {} : { body: JSON.stringify(json) }) });
  const text = await response.text();
  return { status: response.status, body: text === '' ? null : JSON.parse(text) };
}

/** Makes a token with the global key of `as`; its id and value. */
async function makeToken(api: ApiFixture, policies: unknown[], extra: Record<string, unknown> = {}, as?: Credentials): Promise<{ id: string; value: string }> {
  const made = await api.call('/user/tokens', { method: 'POST', json: { name: 'test token', policies, ...extra }, ...(as ? { as } : {}) });
  assert.equal(made.status, 200, JSON.stringify(made.body));
  return { id: made.body.result.id, value: made.body.result.value };
}

function accountPolicy(accountId: string, ...groups: Array<{ id: string }>): unknown {
  return { effect: 'allow', resources: { [`com.cloudflare.api.account.${accountId}`]: '*' }, permission_groups: groups };
}

test('the official SDK creates, lists, reads, updates, rolls, verifies and deletes API tokens', { timeout: 30_000 }, async (t) => {
  const api = await startApi(t);
  const client = api.sdk();
  const account = api.admin.accountId;

  const groups = [];
  for await (const group of client.user.tokens.permissionGroups.list()) groups.push(group as { id: string; name: string; scopes: string[] });
  assert.ok(groups.some((g) => g.id === GROUPS.r2Write.id && g.name === 'Workers R2 Storage Write' && g.scopes[0] === 'com.cloudflare.api.account'));
  assert.ok(groups.some((g) => g.id === GROUPS.tokensWrite.id && g.scopes[0] === 'com.cloudflare.api.user'));

  const created = await client.user.tokens.create({
    name: 'ci deploys',
    policies: [{ effect: 'allow', resources: { [`com.cloudflare.api.account.${account}`]: '*' }, permission_groups: [{ id: GROUPS.r2Read.id }] }],
  });
  assert.match(created.value!, /^[A-Za-z0-9_-]{40}$/);
  assert.match(created.id!, /^[0-9a-f]{32}$/);
  assert.equal(created.status, 'active');
  assert.deepEqual(created.policies?.[0]?.permission_groups, [{ id: GROUPS.r2Read.id, name: 'Workers R2 Storage Read' }]);

  // The value is shown once: neither list nor get has it, and only its hash is stored.
  const listed = [];
  for await (const token of client.user.tokens.list()) listed.push(token);
  assert.deepEqual(
    listed.map((token) => [token.id, token.name, 'value' in token]),
    [[created.id, 'ci deploys', false]],
  );
  const got = await client.user.tokens.get(created.id!);
  assert.equal(got.name, 'ci deploys');
  assert.equal('value' in got, false);
  const stored = await api.control.apiTokens.get(account, created.id!);
  assert.ok(stored && !JSON.stringify(stored).includes(created.value!));

  const withValue = tokenSdk(api, created.value!);
  assert.deepEqual(await withValue.user.tokens.verify(), { id: created.id, status: 'active' });
  assert.equal((await withValue.r2.buckets.list({ account_id: account })).buckets?.[0]?.name, 'test-bucket');

  const updated = await client.user.tokens.update(created.id!, {
    name: 'ci deploys (write)',
    policies: [{ effect: 'allow', resources: { [`com.cloudflare.api.account.${account}`]: '*' }, permission_groups: [{ id: GROUPS.r2Write.id }] }],
    expires_on: '2099-01-01T00:00:00Z',
  });
  assert.equal(updated.name, 'ci deploys (write)');
  assert.equal(updated.expires_on, '2099-01-01T00:00:00Z');
  await withValue.r2.buckets.create({ account_id: account, name: 'made-by-token' });

  const rolled = await client.user.tokens.value.update(created.id!, {});
  assert.match(rolled, /^[A-Za-z0-9_-]{40}$/);
  assert.notEqual(rolled, created.value);
  const old = await sdkError(withValue.r2.buckets.list({ account_id: account }));
  assert.equal(old.status, 401);
  assert.deepEqual(old.errors, [{ code: 10000, message: 'Authentication error' }]);
  assert.equal((await tokenSdk(api, rolled).user.tokens.verify()).id, created.id);

  const deleted = await client.user.tokens.delete(created.id!);
  assert.equal(deleted?.id, created.id);
  assert.equal((await sdkError(tokenSdk(api, rolled).user.tokens.verify())).status, 401);
  const gone = await sdkError(client.user.tokens.get(created.id!));
  assert.equal(gone.status, 404);
  assert.equal(gone.errors[0]?.code, 7003);

  // The global key is no token: verify answers the platform's 1000.
  const keyVerify = await api.call('/user/tokens/verify');
  assert.equal(keyVerify.status, 401);
  assert.equal(keyVerify.body.errors[0].code, 1000);
});

test('a token does what its policies grant: read is not edit, one zone is not another, tokens need API Tokens Write', { timeout: 30_000 }, async (t) => {
  const api = await startApi(t);
  const account = api.admin.accountId;
  const zoneA = (await api.call('/zones', { method: 'POST', json: { name: 'alpha.test', account: { id: account } } })).body.result.id as string;
  const zoneB = (await api.call('/zones', { method: 'POST', json: { name: 'beta.test', account: { id: account } } })).body.result.id as string;

  const readOnly = await makeToken(api, [accountPolicy(account, GROUPS.r2Read)]);
  assert.equal((await withToken(api, readOnly.value, `/accounts/${account}/r2/buckets`)).status, 200);
  const edit = await withToken(api, readOnly.value, `/accounts/${account}/r2/buckets`, { method: 'POST', json: { name: 'nope' } });
  assert.equal(edit.status, 403);
  assert.deepEqual(edit.body.errors, [{ code: 10000, message: 'Authentication error' }]);
  assert.equal(await api.store.getBucket('nope'), null);
  const zones = await withToken(api, readOnly.value, `/zones/${zoneA}`);
  assert.equal(zones.status, 403);
  assert.deepEqual(zones.body.errors, [{ code: 9109, message: 'Unauthorized to access requested resource' }]);

  const oneZone = await makeToken(api, [
    { effect: 'allow', resources: { [`com.cloudflare.api.account.zone.${zoneA}`]: '*' }, permission_groups: [GROUPS.zoneRead, GROUPS.logsWrite] },
  ]);
  assert.equal((await withToken(api, oneZone.value, `/zones/${zoneA}`)).status, 200);
  assert.equal((await withToken(api, oneZone.value, `/zones/${zoneB}`)).status, 403);
  const listed = await withToken(api, oneZone.value, '/zones');
  assert.deepEqual(
    listed.body.result.map((zone: Json) => zone.name),
    ['alpha.test'],
  );
  assert.equal((await withToken(api, oneZone.value, `/zones/${zoneA}`, { method: 'PATCH', json: { paused: true } })).status, 403, 'Zone Read is no Zone Write');
  const entrypoint = `/zones/${zoneA}/rulesets/phases/http_log_custom_fields/entrypoint`;
  const rules = { rules: [{ action: 'log_custom_field', expression: 'true', action_parameters: { request_fields: [{ name: 'x-id' }] } }] };
  assert.equal((await withToken(api, oneZone.value, entrypoint, { method: 'PUT', json: rules })).status, 200, 'Logs Write edits custom fields');
  assert.equal((await withToken(api, oneZone.value, entrypoint.replace(zoneA, zoneB), { method: 'PUT', json: rules })).status, 403);

  // Scripts routes: Workers Scripts groups, 10000 when refused as the platform answers there.
  const scriptsPath = `/accounts/${account}/workers/scripts`;
  const noScripts = await withToken(api, readOnly.value, scriptsPath);
  assert.equal(noScripts.status, 403);
  assert.deepEqual(noScripts.body.errors, [{ code: 10000, message: 'Authentication error' }]);
  const scriptsReader = await makeToken(api, [accountPolicy(account, { id: '1a71c399035b4950a1bd1466bbe4f420' })]);
  assert.notEqual((await withToken(api, scriptsReader.value, scriptsPath)).status, 403, 'Workers Scripts Read passes the permission check');
  assert.equal((await withToken(api, scriptsReader.value, `${scriptsPath}/some-script`, { method: 'DELETE' })).status, 403, 'Read is no Write');

  // A deny policy wins over an allow.
  const allButB = await makeToken(api, [
    accountPolicy(account, GROUPS.zoneRead),
    { effect: 'deny', resources: { [`com.cloudflare.api.account.zone.${zoneB}`]: '*' }, permission_groups: [GROUPS.zoneRead] },
  ]);
  assert.equal((await withToken(api, allButB.value, `/zones/${zoneA}`)).status, 200);
  assert.equal((await withToken(api, allButB.value, `/zones/${zoneB}`)).status, 403);

  // Tokens make tokens only with API Tokens Write on their user.
  const noTokens = await withToken(api, readOnly.value, '/user/tokens', {
    method: 'POST',
    json: { name: 'x', policies: [accountPolicy(account, GROUPS.r2Write)] },
  });
  assert.equal(noTokens.status, 403);
  assert.equal(noTokens.body.errors[0].code, 9109);
  const userPolicy = { effect: 'allow', resources: { [`com.cloudflare.api.user.${userIdOf({ id: account })}`]: '*' }, permission_groups: [GROUPS.tokensWrite] };
  const maker = await makeToken(api, [userPolicy]);
  const made = await withToken(api, maker.value, '/user/tokens', {
    method: 'POST',
    json: { name: 'child', policies: [accountPolicy(account, GROUPS.r2Read)] },
  });
  assert.equal(made.status, 200, JSON.stringify(made.body));
  assert.equal((await withToken(api, made.body.result.value, `/accounts/${account}/r2/buckets`)).status, 200);
});

test("another account's token reaches the first account's things exactly like missing ones", { timeout: 30_000 }, async (t) => {
  const api = await startApi(t);
  const a = api.admin.accountId;
  const other = await api.newAccount('other@example.com');
  const zoneOfA = (await api.call('/zones', { method: 'POST', json: { name: 'owned-by-a.test', account: { id: a } } })).body.result.id as string;
  const missingZone = 'f'.repeat(32);
  const missingAccount = 'e'.repeat(32);

  // B's widest token: every account, every zone.
  const wide = await makeToken(
    api,
    [{ effect: 'allow', resources: { 'com.cloudflare.api.account.*': '*' }, permission_groups: [GROUPS.r2Write, GROUPS.zoneWrite, GROUPS.accountRead] }],
    {},
    other,
  );
  const onA = await withToken(api, wide.value, `/accounts/${a}/r2/buckets`);
  const onMissing = await withToken(api, wide.value, `/accounts/${missingAccount}/r2/buckets`);
  assert.equal(onA.status, onMissing.status);
  assert.deepEqual(
    onA.body.errors,
    onMissing.body.errors.map((e: Json) => ({ ...e, message: e.message.replace(missingAccount, a) })),
  );
  const zoneA = await withToken(api, wide.value, `/zones/${zoneOfA}`);
  const zoneMissing = await withToken(api, wide.value, `/zones/${missingZone}`);
  assert.equal(zoneA.status, 404);
  assert.equal(zoneMissing.status, 404);
  assert.deepEqual(
    zoneA.body.errors.map((e: Json) => e.code),
    zoneMissing.body.errors.map((e: Json) => e.code),
  );
  assert.equal((await withToken(api, wide.value, '/zones')).body.result.length, 0);
  assert.deepEqual((await withToken(api, wide.value, `/accounts/${other.accountId}/r2/buckets`)).body.result.buckets, []);

  // B cannot name A's account or zone in a policy: refused exactly like ids that do not exist.
  const namingA = await api.call('/user/tokens', { method: 'POST', as: other, json: { name: 'x', policies: [accountPolicy(a, GROUPS.r2Read)] } });
  const namingMissing = await api.call('/user/tokens', {
    method: 'POST',
    as: other,
    json: { name: 'x', policies: [accountPolicy(missingAccount, GROUPS.r2Read)] },
  });
  assert.equal(namingA.status, 400);
  assert.equal(namingA.body.errors[0].message, namingMissing.body.errors[0].message.replace(missingAccount, a));
  const zonePolicy = (zone: string) => ({
    effect: 'allow',
    resources: { [`com.cloudflare.api.account.zone.${zone}`]: '*' },
    permission_groups: [GROUPS.zoneRead],
  });
  const namingZone = await api.call('/user/tokens', { method: 'POST', as: other, json: { name: 'x', policies: [zonePolicy(zoneOfA)] } });
  const namingMissingZone = await api.call('/user/tokens', { method: 'POST', as: other, json: { name: 'x', policies: [zonePolicy(missingZone)] } });
  assert.equal(namingZone.status, 400);
  assert.equal(namingZone.body.errors[0].message, namingMissingZone.body.errors[0].message.replace(missingZone, zoneOfA));

  // A's tokens are not B's: B can neither read nor delete them.
  const ofA = await makeToken(api, [accountPolicy(a, GROUPS.r2Read)]);
  assert.equal((await api.call(`/user/tokens/${ofA.id}`, { as: other })).status, 404);
  assert.equal((await api.call(`/user/tokens/${ofA.id}`, { method: 'DELETE', as: other })).status, 404);
  assert.equal((await withToken(api, ofA.value, '/user/tokens/verify')).status, 200);
});

test('disabled, expired and not yet valid tokens are refused; verify reports their status', { timeout: 30_000 }, async (t) => {
  const api = await startApi(t);
  const account = api.admin.accountId;
  const path = `/accounts/${account}/r2/buckets`;
  const now = api.clock.now();
  const policies = [accountPolicy(account, GROUPS.r2Read)];

  const later = await makeToken(api, policies, { not_before: new Date(now + 3_600_000).toISOString() });
  const early = await withToken(api, later.value, path);
  assert.equal(early.status, 401);
  assert.match(early.body.errors[0].message, /^Authentication error: the API token is not valid before /);
  const expiring = await makeToken(api, policies, { expires_on: new Date(now + 60_000).toISOString() });
  assert.equal((await withToken(api, expiring.value, path)).status, 200);
  api.clock.advance(3_600_000);
  assert.equal((await withToken(api, later.value, path)).status, 200, 'valid from not_before on');
  const expired = await withToken(api, expiring.value, path);
  assert.equal(expired.status, 401);
  assert.equal(expired.body.errors[0].code, 10000);
  assert.equal((await withToken(api, expiring.value, '/user/tokens/verify')).body.result.status, 'expired');

  const disabled = await api.call(`/user/tokens/${later.id}`, { method: 'PUT', json: { name: 'paused', policies, status: 'disabled' } });
  assert.equal(disabled.status, 200, JSON.stringify(disabled.body));
  assert.equal((await withToken(api, later.value, path)).status, 401);
  assert.equal((await withToken(api, later.value, '/user/tokens/verify')).body.result.status, 'disabled');
});

test('bounded: tokens per account, policies per token, well-formed policies; malformed and failed Bearer headers', { timeout: 30_000 }, async (t) => {
  const api = await startApi(t, { maxTokensPerAccount: 3 });
  const account = api.admin.accountId;
  const policies = [accountPolicy(account, GROUPS.r2Read)];
  for (let i = 0; i < 3; i++) await makeToken(api, policies);
  const fourth = await api.call('/user/tokens', { method: 'POST', json: { name: 'four', policies } });
  assert.equal(fourth.status, 400);
  assert.equal(fourth.body.errors[0].code, 1004);
  assert.match(fourth.body.errors[0].message, /the account has 3 tokens, the most it may have/);
  assert.equal((await api.control.apiTokens.list(account)).length, 3);

  const tooMany = await api.call('/user/tokens', { method: 'POST', json: { name: 'x', policies: Array.from({ length: 33 }, () => policies[0]) } });
  assert.equal(tooMany.status, 400);
  assert.match(tooMany.body.errors[0].message, /at most 32 items/);
  const unknownGroup = await api.call('/user/tokens', { method: 'POST', json: { name: 'x', policies: [accountPolicy(account, { id: '0'.repeat(32) })] } });
  assert.equal(unknownGroup.status, 400);
  assert.equal(unknownGroup.body.errors[0].source.pointer, '/policies/0/permission_groups/0/id');
  assert.match(unknownGroup.body.errors[0].message, /GET \/user\/tokens\/permission_groups lists them/);
  const badResource = await api.call('/user/tokens', {
    method: 'POST',
    json: { name: 'x', policies: [{ effect: 'allow', resources: { 'com.example.everything': '*' }, permission_groups: [GROUPS.r2Read] }] },
  });
  assert.equal(badResource.status, 400);
  assert.match(badResource.body.errors[0].message, /a resource must be one of com\.cloudflare\.api\.account\.<account id>/);

  const malformed = await withToken(api, 'short', `/accounts/${account}/r2/buckets`);
  assert.equal(malformed.status, 400);
  assert.deepEqual(malformed.body.errors[0].error_chain, [{ code: 6111, message: 'Invalid format for Authorization header' }]);

  // Unknown tokens count as failed credential checks of the client's address, like wrong keys.
  const statuses: number[] = [];
  for (let i = 0; i < 21; i++) statuses.push((await withToken(api, 'x'.repeat(39) + String.fromCharCode(65 + i), '/user/tokens/verify')).status);
  assert.deepEqual(statuses.slice(0, 20), Array(20).fill(401));
  assert.equal(statuses[20], 429);
});
