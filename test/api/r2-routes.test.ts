/**
 * R2 and identity over the platform's own paths (`/accounts/<id>/r2/...`, `/user`, `/memberships`):
 * the official `cloudflare` SDK's r2.buckets (create, list, get, delete), r2.buckets.cors and
 * r2.buckets.objects against a real server, and raw fetch for what wrangler sends (a `text/plain`
 * create body, object keys with unencoded slashes, the jurisdiction header) and for the errors.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { sdkError, startApi, type ApiFixture } from './helpers.ts';

function r2(api: ApiFixture, accountId = api.admin.accountId): string {
  return `/accounts/${accountId}/r2/buckets`;
}

test("the official SDK creates, lists, reads and deletes R2 buckets; R2's codes for missing, taken and invalid names", { timeout: 20_000 }, async (t) => {
  const api = await startApi(t);
  const client = api.sdk();
  const account_id = api.admin.accountId;

  const created = await client.r2.buckets.create({ account_id, name: 'photos', storageClass: 'InfrequentAccess', locationHint: 'weur' });
  assert.equal(created.name, 'photos');
  assert.equal(created.storage_class, 'InfrequentAccess');
  assert.equal(created.location, 'weur');
  assert.ok(!Number.isNaN(Date.parse(created.creation_date!)));

  const listed = await client.r2.buckets.list({ account_id });
  assert.deepEqual(
    listed.buckets?.map((b) => b.name),
    ['photos', 'test-bucket'],
  );
  const got = await client.r2.buckets.get('photos', { account_id });
  assert.deepEqual({ name: got.name, storage_class: got.storage_class }, { name: 'photos', storage_class: 'InfrequentAccess' });
  // The same bucket the dashboard's store routes and the engine see.
  assert.equal((await api.store.getBucket('photos'))?.storageClass, 'InfrequentAccess');

  const taken = await sdkError(client.r2.buckets.create({ account_id, name: 'photos' }));
  assert.equal(taken.status, 400);
  assert.equal(taken.errors[0]?.code, 10004);
  const invalid = await sdkError(client.r2.buckets.create({ account_id, name: 'No_Such' }));
  assert.equal(invalid.status, 400);
  assert.equal(invalid.errors[0]?.code, 10005);
  assert.match(String(invalid.errors[0]?.message), /bucket name is not valid: "No_Such" must be 3-63 characters/);
  const badHint = await api.call(r2(api), { method: 'POST', json: { name: 'hinted', locationHint: 'mars' } });
  assert.equal(badHint.status, 400);
  assert.match(badHint.body.errors[0].message, /locationHint because it must be one of "apac"/);
  assert.equal(await api.store.getBucket('hinted'), null, 'a refused create makes nothing');

  await client.r2.buckets.delete('photos', { account_id });
  const missing = await sdkError(client.r2.buckets.get('photos', { account_id }));
  assert.equal(missing.status, 404);
  assert.deepEqual(missing.errors, [{ code: 10006, message: 'The specified bucket does not exist.' }]);
  const deleteMissing = await api.call(`${r2(api)}/photos`, { method: 'DELETE' });
  assert.equal(deleteMissing.status, 404);
  assert.equal(deleteMissing.body.errors[0].code, 10006);
});

test("wrangler's requests: a text/plain create body, the jurisdiction header, list pages by cursor", { timeout: 20_000 }, async (t) => {
  const api = await startApi(t);
  const plain = await api.call(r2(api), {
    method: 'POST',
    body: JSON.stringify({ name: 'from-wrangler', storageClass: 'Standard' }),
    headers: { 'content-type': 'text/plain;charset=UTF-8' },
  });
  assert.equal(plain.status, 200, JSON.stringify(plain.body));
  assert.equal(plain.body.result.name, 'from-wrangler');
  const malformed = await api.call(r2(api), { method: 'POST', body: '{"name": "half', headers: { 'content-type': 'text/plain' } });
  assert.equal(malformed.status, 400);
  assert.equal(malformed.body.errors[0].code, 6007);
  const unknownField = await api.call(r2(api), { method: 'POST', json: { name: 'x-y-z', colour: 'red' } });
  assert.equal(unknownField.status, 400);
  assert.match(unknownField.body.errors[0].message, /'colour' is not a valid field/);

  assert.equal((await api.call(`${r2(api)}/from-wrangler`, { headers: { 'cf-r2-jurisdiction': 'default' } })).status, 200);
  const eu = await api.call(`${r2(api)}/from-wrangler`, { headers: { 'cf-r2-jurisdiction': 'eu' } });
  assert.equal(eu.status, 400);
  assert.match(eu.body.errors[0].message, /Jurisdiction 'eu' is not available on this server/);

  for (const name of ['b-1', 'b-2', 'b-3']) assert.equal((await api.call(r2(api), { method: 'POST', json: { name } })).status, 200);
  const seen: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await api.call(`${r2(api)}?per_page=2${cursor ? `&cursor=${cursor}` : ''}`);
    assert.equal(page.status, 200, JSON.stringify(page.body));
    assert.ok(page.body.result.buckets.length <= 2);
    seen.push(...page.body.result.buckets.map((b: { name: string }) => b.name));
    cursor = page.body.result_info.cursor;
  } while (cursor);
  assert.deepEqual(seen, ['b-1', 'b-2', 'b-3', 'from-wrangler', 'test-bucket']);
  assert.deepEqual(
    (await api.call(`${r2(api)}?name_contains=b-&direction=desc`)).body.result.buckets.map((b: { name: string }) => b.name),
    ['b-3', 'b-2', 'b-1'],
  );
  const badCursor = await api.call(`${r2(api)}?cursor=${Buffer.from('../etc').toString('base64url')}`);
  assert.equal(badCursor.status, 400);
  assert.match(badCursor.body.errors[0].message, /cursor/);
});

test('objects: keys are the rest of the path (slashes unencoded or encoded), bodies streamed with their metadata', { timeout: 20_000 }, async (t) => {
  const api = await startApi(t);
  const base = `${r2(api)}/test-bucket/objects`;
  const bytes = randomBytes(300_000);
  const put = await api.call(`${base}/a/b/c.txt`, {
    method: 'PUT',
    body: bytes,
    headers: { 'content-type': 'text/plain', 'cache-control': 'max-age=60', 'cf-r2-storage-class': 'InfrequentAccess' },
  });
  assert.equal(put.status, 200, JSON.stringify(put.body));
  assert.equal(put.body.result.key, 'a/b/c.txt');
  assert.equal(put.body.result.size, bytes.length);
  assert.equal(put.body.result.storage_class, 'InfrequentAccess');
  assert.equal((await api.store.head('test-bucket', 'a/b/c.txt'))?.size, bytes.length);

  const got = await fetch(`${api.base}${base}/a/b/c.txt`, { headers: { 'x-auth-email': api.admin.email, 'x-auth-key': api.admin.key } });
  assert.equal(got.status, 200);
  assert.equal(got.headers.get('content-type'), 'text/plain');
  assert.equal(got.headers.get('cache-control'), 'max-age=60');
  assert.equal(got.headers.get('content-length'), String(bytes.length));
  assert.match(got.headers.get('content-security-policy') ?? '', /^sandbox/);
  assert.ok(Buffer.from(await got.arrayBuffer()).equals(bytes));

  // The SDK percent-encodes the key: the same object.
  const viaSdk = await api.sdk().r2.buckets.objects.get('a/b/c.txt', { account_id: api.admin.accountId, bucket_name: 'test-bucket' });
  assert.ok(Buffer.from(await viaSdk.arrayBuffer()).equals(bytes));

  assert.equal((await api.call(`${base}/a/b/c.txt`, { method: 'DELETE' })).status, 200);
  const gone = await api.call(`${base}/a/b/c.txt`);
  assert.equal(gone.status, 404);
  assert.equal(gone.body.errors[0].code, 10007);
  const noBucket = await api.call(`${r2(api)}/nothing-here/objects/k`, { method: 'PUT', body: 'x' });
  assert.equal(noBucket.status, 404);
  assert.equal(noBucket.body.errors[0].code, 10006);
  const badClass = await api.call(`${base}/k`, { method: 'PUT', body: 'x', headers: { 'cf-r2-storage-class': 'Glacier' } });
  assert.equal(badClass.status, 400);
  assert.equal(await api.store.head('test-bucket', 'k'), null, 'a refused put stores nothing');
  const wrongMethod = await api.call(`${base}/a/b/c.txt`, { method: 'POST', body: 'x' });
  assert.equal(wrongMethod.status, 405);
  assert.equal(wrongMethod.headers.get('allow'), 'PUT, GET, DELETE');
  const unauthenticated = await api.call(`${base}/k`, { method: 'PUT', body: 'x', as: null });
  assert.equal(unauthenticated.status, 400);
  assert.equal(unauthenticated.body.errors[0].code, 9106);
});

test("CORS rules through the SDK in R2's shape, the same rules the store keeps; none is 404 / 10059", { timeout: 20_000 }, async (t) => {
  const api = await startApi(t);
  const client = api.sdk();
  const params = { account_id: api.admin.accountId };
  const none = await sdkError(client.r2.buckets.cors.get('test-bucket', params));
  assert.equal(none.status, 404);
  assert.deepEqual(none.errors, [{ code: 10059, message: 'The CORS configuration does not exist.' }]);

  const rules = [
    {
      id: 'web',
      allowed: { origins: ['https://example.com'], methods: ['GET', 'PUT'] as Array<'GET' | 'PUT'>, headers: ['content-type'] },
      exposeHeaders: ['etag'],
      maxAgeSeconds: 600,
    },
  ];
  await client.r2.buckets.cors.update('test-bucket', { ...params, rules });
  assert.deepEqual((await client.r2.buckets.cors.get('test-bucket', params)).rules, rules);
  assert.deepEqual((await api.store.getBucketCors('test-bucket'))?.[0]?.allowedOrigins, ['https://example.com']);

  const badMethod = await api.call(`${r2(api)}/test-bucket/cors`, {
    method: 'PUT',
    body: JSON.stringify({ rules: [{ allowed: { origins: ['*'], methods: ['PATCH'] } }] }),
    headers: { 'content-type': 'text/plain' },
  });
  assert.equal(badMethod.status, 400);
  assert.deepEqual((await client.r2.buckets.cors.get('test-bucket', params)).rules, rules, 'a refused PUT leaves the rules');

  await client.r2.buckets.cors.delete('test-bucket', params);
  assert.equal(await api.store.getBucketCors('test-bucket'), null);
  const missing = await api.call(`${r2(api)}/nothing-here/cors`);
  assert.equal(missing.status, 404);
  assert.equal(missing.body.errors[0].code, 10006);
});

test("another account's buckets answer exactly like missing ones, on every R2 route", { timeout: 20_000 }, async (t) => {
  const api = await startApi(t);
  const other = await api.newAccount('other@example.com');
  assert.equal((await api.call(`${r2(api)}/test-bucket/objects/secret.txt`, { method: 'PUT', body: 'mine' })).status, 200);
  const mine = (path: string, init: RequestInit = {}) => api.call(`${r2(api, other.accountId)}${path}`, { ...init, as: other });
  for (const [path, init] of [
    ['/test-bucket', {}],
    ['/test-bucket', { method: 'DELETE' }],
    ['/test-bucket/cors', {}],
    ['/test-bucket/objects/secret.txt', {}],
    ['/test-bucket/objects/secret.txt', { method: 'DELETE' }],
  ] as Array<[string, RequestInit]>) {
    const answer = await mine(path, init);
    // The same request for a bucket no account has made: the answer to compare with.
    const absent = await mine(path.replace('test-bucket', 'never-made'), init);
    assert.equal(answer.status, 404, `${init.method ?? 'GET'} ${path}`);
    assert.deepEqual(answer.body, absent.body, `${init.method ?? 'GET'} ${path}`);
  }
  assert.deepEqual((await mine('')).body.result.buckets, []);
  // The admin's own path named by the other account is not the other's to use at all.
  const foreignPath = await api.call(`${r2(api)}/test-bucket`, { as: other });
  assert.equal(foreignPath.status, 404);
  assert.equal(foreignPath.body.errors[0].code, 7003);
  // And the other account may make its own test-bucket without touching the admin's.
  assert.equal((await mine('', { method: 'POST', body: JSON.stringify({ name: 'test-bucket' }) })).status, 200);
  const kept = await fetch(`${api.base}${r2(api)}/test-bucket/objects/secret.txt`, {
    headers: { 'x-auth-email': api.admin.email, 'x-auth-key': api.admin.key },
  });
  assert.equal(await kept.text(), 'mine');
});

test('identity: /user, /memberships and /user/tokens/verify answer as the real API does for a global key', { timeout: 20_000 }, async (t) => {
  const api = await startApi(t);
  const client = api.sdk();
  const user = await client.user.get();
  assert.equal(user.email, api.admin.email);
  assert.match(user.id, /^[0-9a-f]{32}$/);
  assert.notEqual(user.id, api.admin.accountId);

  const memberships = [];
  for await (const membership of client.memberships.list()) memberships.push(membership);
  assert.equal(memberships.length, 1);
  assert.equal(memberships[0]!.account?.id, api.admin.accountId);
  assert.equal(memberships[0]!.status, 'accepted');
  assert.deepEqual(memberships[0]!.permissions?.zones, { read: true, write: true });
  assert.ok(memberships[0]!.roles?.length);
  assert.deepEqual((await api.call('/memberships?status=pending')).body.result, []);

  const other = await api.newAccount('other@example.com');
  const theirs = await api.call('/memberships', { as: other });
  assert.deepEqual(
    theirs.body.result.map((m: { account: { id: string } }) => m.account.id),
    [other.accountId],
  );

  const verify = await sdkError(client.user.tokens.verify());
  assert.equal(verify.status, 401);
  assert.equal(verify.errors[0]?.code, 1000);
  assert.match(String(verify.errors[0]?.message), /^Invalid API Token/);
});
