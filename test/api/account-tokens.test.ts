/**
 * Account-owned API tokens (`/accounts/<id>/tokens`, the SDK's `accounts.tokens`): the same
 * policies as user tokens without user permissions, owned by the account; each path sees only its
 * own kind; the token works like any other (Bearer); Account API Tokens Write is what a token needs
 * to manage them; another account's path is missing; and `GET /memberships/<id>`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Cloudflare from 'cloudflare';
import { derivedId } from '../../src/api/accounts/user-id.ts';
import { sdkError, startApi, type Json } from './helpers.ts';

const R2_READ = { id: 'b4992e1108244f5d8bfbd5744320c2e1' };
const ACCOUNT_TOKENS_WRITE = { id: '5bc3f8b21c554832afc660159ab75fa4' };
const USER_TOKENS_WRITE = { id: '686d18d5ac6c441c867cbf6771e58a0a' };

test('account-owned tokens through the official SDK', { timeout: 20_000 }, async (t) => {
  const api = await startApi(t);
  const cf = api.sdk();
  const account_id = api.admin.accountId;
  const account = `com.cloudflare.api.account.${account_id}`;
  const made = (await cf.accounts.tokens.create({
    account_id,
    name: 'ci',
    policies: [{ effect: 'allow', resources: { [account]: '*' }, permission_groups: [R2_READ] }],
  })) as Json;
  assert.match(made.value, /^[A-Za-z0-9_-]{40,}$/);
  const listed: Json[] = [];
  for await (const token of cf.accounts.tokens.list({ account_id })) listed.push(token);
  assert.deepEqual(
    listed.map((token) => token.id),
    [made.id],
  );
  const userTokens: Json[] = [];
  for await (const token of cf.user.tokens.list()) userTokens.push(token);
  assert.deepEqual(userTokens, [], "an account token is not the user's");
  assert.equal((await sdkError(cf.user.tokens.get(made.id))).status, 404, 'nor readable under /user/tokens');
  assert.equal(((await cf.accounts.tokens.get(made.id, { account_id })) as Json).name, 'ci');

  const asToken = new Cloudflare({ baseURL: api.base, apiToken: made.value, apiEmail: null, apiKey: null, userServiceKey: null, maxRetries: 0 });
  assert.equal(((await asToken.accounts.tokens.verify({ account_id })) as Json).status, 'active');
  assert.deepEqual(
    ((await asToken.r2.buckets.list({ account_id })) as Json).buckets.map((b: Json) => b.name),
    ['test-bucket'],
    'it authenticates like any token',
  );
  assert.equal(
    (await sdkError(asToken.accounts.tokens.list({ account_id }).then((page) => page.result))).status,
    403,
    'managing tokens needs Account API Tokens',
  );

  const updated = (await cf.accounts.tokens.update(made.id, {
    account_id,
    name: 'ci-2',
    status: 'disabled',
    policies: [{ effect: 'allow', resources: { [account]: '*' }, permission_groups: [R2_READ, ACCOUNT_TOKENS_WRITE] }],
  })) as Json;
  assert.deepEqual([updated.name, updated.status], ['ci-2', 'disabled']);
  const rolled = await cf.accounts.tokens.value.update(made.id, { account_id });
  assert.equal(typeof rolled, 'string');

  const userGroup = await sdkError(
    cf.accounts.tokens.create({
      account_id,
      name: 'nope',
      policies: [
        { effect: 'allow', resources: { [`com.cloudflare.api.user.${derivedId('user', { id: account_id })}`]: '*' }, permission_groups: [USER_TOKENS_WRITE] },
      ],
    }),
  );
  assert.equal(userGroup.status, 400);
  assert.match(JSON.stringify(userGroup.errors), /holds no user permission/);
  const groups = (await cf.accounts.tokens.permissionGroups.list({ account_id })).result as Json[];
  assert.ok(groups.some((group) => group.id === ACCOUNT_TOKENS_WRITE.id));
  assert.ok(!groups.some((group) => group.scopes.includes('com.cloudflare.api.user')), 'no user groups for account tokens');

  const other = await api.newAccount('other@example.com');
  const theirs = await api.call(`/accounts/${account_id}/tokens`, { as: other });
  assert.equal(theirs.status, 404, "another account's tokens path is missing");
  await cf.accounts.tokens.delete(made.id, { account_id });
  assert.equal((await sdkError(cf.accounts.tokens.get(made.id, { account_id }))).status, 404);

  const membership = derivedId('membership', { id: account_id });
  assert.equal(((await cf.memberships.get(membership)) as Json).account.id, account_id);
  assert.equal((await sdkError(cf.memberships.get('f'.repeat(32)))).status, 404);
});
