/**
 * The rest of R2 over the platform's paths, against a real server: a bucket's default storage class
 * changed by PATCH (the official SDK's r2.buckets.edit, wrangler's `r2 bucket update
 * storage-class`), object listing (r2.buckets.objects.list), and `POST /graphql` answering
 * wrangler's `r2 bucket info` query with the bucket's real object count and size.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startApi, type ApiFixture, type Json } from './helpers.ts';

/** The query `wrangler r2 bucket info` sends, with its variables. */
const WRANGLER_QUERY = `query getR2StorageMetrics($accountTag: string, $filter: AccountR2StorageAdaptiveGroupsFilter_InputObject) {
  viewer {
    accounts(filter: { accountTag: $accountTag }) {
      r2StorageAdaptiveGroups(limit: 1, filter: $filter, orderBy: [datetime_DESC]) {
        max { objectCount, payloadSize }
        dimensions { datetime }
      }
    }
  }
}`;

async function graphql(api: ApiFixture, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: Json }> {
  const response = await fetch(`${api.base}/graphql`, {
    method: 'POST',
    headers: { 'x-auth-email': api.admin.email, 'x-auth-key': api.admin.key, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

test("PATCH changes a bucket's default storage class; objects list in R2's shape, a page at a time", { timeout: 20_000 }, async (t) => {
  const api = await startApi(t);
  const client = api.sdk();
  const account_id = api.admin.accountId;
  await client.r2.buckets.create({ account_id, name: 'archive' });
  const edited = await client.r2.buckets.edit('archive', { account_id, storage_class: 'InfrequentAccess' });
  assert.equal(edited.storage_class, 'InfrequentAccess');
  assert.equal((await api.store.getBucket('archive'))?.storageClass, 'InfrequentAccess');
  await api.store.put('archive', 'new.txt', new TextEncoder().encode('x'));
  assert.equal((await api.store.head('archive', 'new.txt'))?.storageClass, 'InfrequentAccess', 'new objects take the new default');

  const missingHeader = await api.call(`/accounts/${account_id}/r2/buckets/archive`, { method: 'PATCH' });
  assert.equal(missingHeader.status, 400);
  assert.match(missingHeader.body.errors[0].message, /cf-r2-storage-class is required/);
  const bad = await api.call(`/accounts/${account_id}/r2/buckets/archive`, { method: 'PATCH', headers: { 'cf-r2-storage-class': 'Glacier' } });
  assert.equal(bad.status, 400);
  const missing = await api.call(`/accounts/${account_id}/r2/buckets/no-such`, { method: 'PATCH', headers: { 'cf-r2-storage-class': 'Standard' } });
  assert.equal(missing.status, 404);
  assert.equal(missing.body.errors[0].code, 10006);

  for (const key of ['a/1.txt', 'a/2.txt', 'b/3.txt', 'c.txt']) {
    await api.store.put('test-bucket', key, new TextEncoder().encode(key), { httpMetadata: { contentType: 'text/plain' }, customMetadata: { k: key } });
  }
  const keys: string[] = [];
  for await (const object of client.r2.buckets.objects.list('test-bucket', { account_id, per_page: 2 } as never)) keys.push(object.key!);
  assert.deepEqual(keys, ['a/1.txt', 'a/2.txt', 'b/3.txt', 'c.txt']);
  const folded = await api.call(`/accounts/${account_id}/r2/buckets/test-bucket/objects?delimiter=/&start_after=a/1.txt`);
  assert.deepEqual(
    folded.body.result.map((o: Json) => o.key),
    ['c.txt'],
  );
  assert.deepEqual(folded.body.result_info.delimited, ['a/', 'b/']);
  const first = (await api.call(`/accounts/${account_id}/r2/buckets/test-bucket/objects?prefix=a/`)).body.result[0];
  assert.deepEqual(
    { key: first.key, size: first.size, http_metadata: first.http_metadata, custom_metadata: first.custom_metadata },
    { key: 'a/1.txt', size: 7, http_metadata: { contentType: 'text/plain' }, custom_metadata: { k: 'a/1.txt' } },
  );
  assert.match(first.etag, /^[0-9a-f]{32}$/);
});

test("POST /graphql answers wrangler's r2 bucket info query with the bucket's object count and size", { timeout: 20_000 }, async (t) => {
  const api = await startApi(t);
  const accountTag = api.admin.accountId;
  const variables = (bucketName: string) => ({ accountTag, filter: { bucketName, datetime_geq: '2026-01-01T00:00:00Z' } });

  const empty = await graphql(api, { query: WRANGLER_QUERY, variables: variables('test-bucket') });
  assert.equal(empty.status, 200);
  assert.deepEqual(empty.body.data.viewer.accounts[0].r2StorageAdaptiveGroups[0].max, { objectCount: 0, payloadSize: 0 });
  assert.equal(empty.body.errors, null);

  await api.store.put('test-bucket', 'one', new Uint8Array(1000));
  await api.store.put('test-bucket', 'two/deep', new Uint8Array(2345));
  await api.store.put('test-bucket', 'one', new Uint8Array(10)); // replaced: counted once, at its new size
  const counted = await graphql(api, { query: WRANGLER_QUERY, variables: variables('test-bucket') }, { 'content-type': 'text/plain' });
  const group = counted.body.data.viewer.accounts[0].r2StorageAdaptiveGroups[0];
  assert.deepEqual(group.max, { objectCount: 2, payloadSize: 2355 });
  assert.match(group.dimensions.datetime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

  const noBucket = await graphql(api, { query: WRANGLER_QUERY, variables: variables('no-such-bucket') });
  assert.deepEqual(noBucket.body.data.viewer.accounts[0].r2StorageAdaptiveGroups, []);

  // Per bucket, with an alias and inline arguments.
  await api.store.createBucket('second');
  const perBucket = await graphql(api, {
    query: `{ viewer { accounts(filter: {accountTag: "${accountTag}"}) { s: r2StorageAdaptiveGroups(limit: 10) { max { objectCount } dimensions { bucketName } } } } }`,
  });
  assert.deepEqual(perBucket.body.data.viewer.accounts[0].s, [
    { max: { objectCount: 0 }, dimensions: { bucketName: 'second' } },
    { max: { objectCount: 2 }, dimensions: { bucketName: 'test-bucket' } },
  ]);

  // An alias is a key like any other, `__proto__` too.
  const proto = await graphql(api, {
    query: `{ __proto__: viewer { accounts(filter: {accountTag: "${accountTag}"}) { constructor: r2StorageAdaptiveGroups(limit: 1) { max { objectCount } } } } }`,
  });
  assert.equal(proto.status, 200);
  assert.deepEqual(JSON.parse(JSON.stringify(proto.body.data)), JSON.parse('{"__proto__": {"accounts": [{"constructor": [{"max": {"objectCount": 2}}]}]}}'));

  // Another account's tag answers like one that does not exist; other datasets name what is supported.
  const other = await api.newAccount('other@example.com');
  const foreign = await graphql(api, { query: WRANGLER_QUERY, variables: { ...variables('test-bucket'), accountTag: other.accountId } });
  const unknown = await graphql(api, { query: WRANGLER_QUERY, variables: { ...variables('test-bucket'), accountTag: 'f'.repeat(32) } });
  assert.deepEqual(foreign.body, unknown.body);
  assert.equal(foreign.body.data, null);
  assert.equal(foreign.body.errors[0].message, 'not authorized for that account');
  const ops = await graphql(api, {
    query: `{ viewer { accounts(filter: {accountTag: "${accountTag}"}) { r2OperationsAdaptiveGroups(limit: 1) { sum { requests } } } } }`,
  });
  assert.equal(ops.status, 400);
  assert.equal(ops.body.data, null);
  assert.equal(ops.body.errors[0].extensions.code, 'GRAPHQL_VALIDATION_FAILED');
  assert.equal(ops.body.errors[0].extensions.timestamp, new Date(api.clock.now()).toISOString());
  assert.match(ops.body.errors[0].message, /unknown field "r2OperationsAdaptiveGroups" of account: this server answers r2StorageAdaptiveGroups only/);
  const zones = await graphql(api, { query: '{ viewer { zones(filter: {}) { httpRequests1dGroups(limit: 1) { sum { requests } } } } }' });
  assert.match(zones.body.errors[0].message, /this server answers viewer\.accounts\(filter: \{accountTag\}\)\.r2StorageAdaptiveGroups/);
  const syntax = await graphql(api, { query: '{ viewer { ' });
  assert.equal(syntax.status, 400);
  assert.match(syntax.body.errors[0].message, /syntax error/);
  assert.equal(syntax.body.errors[0].extensions.code, 'GRAPHQL_PARSE_FAILED');

  // A token needs Workers R2 Storage Read on the account.
  const made = await api.call('/user/tokens', {
    method: 'POST',
    json: {
      name: 'zones only',
      policies: [
        { effect: 'allow', resources: { [`com.cloudflare.api.account.${accountTag}`]: '*' }, permission_groups: [{ id: 'c8fed203ed3043cba015a93ad1616f1f' }] },
      ],
    },
  });
  const withToken = await fetch(`${api.base}/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${made.body.result.value}` },
    body: JSON.stringify({ query: WRANGLER_QUERY, variables: variables('test-bucket') }),
  });
  assert.equal((await withToken.json()).errors[0].message, 'not authorized for that account');
});
