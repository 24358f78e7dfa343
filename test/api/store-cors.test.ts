/**
 * A bucket's CORS rules through the management API: the real platform's JSON shape, the store's
 * validation (S3's words) in the envelope, the same rules the S3 API reads, and another account's
 * bucket answering like one that does not exist.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startApi } from './helpers.ts';

const RULE = {
  id: 'uploads',
  allowed: { origins: ['https://app.example.com'], methods: ['GET', 'PUT'], headers: ['content-type'] },
  exposeHeaders: ['ETag'],
  maxAgeSeconds: 600,
};

test("bucket CORS: put, get, replace and delete rules in the platform's shape; none reads as an empty list", { timeout: 10_000 }, async (t) => {
  const api = await startApi(t);
  const path = `/accounts/${api.admin.accountId}/store/buckets/test-bucket/cors`;
  const none = await api.call(path);
  assert.deepEqual([none.status, none.body.result], [200, { rules: [] }], 'no rules: an empty list');

  const put = await api.call(path, { method: 'PUT', json: { rules: [RULE, { allowed: { origins: ['*'], methods: ['GET'] } }] } });
  assert.equal(put.status, 200, JSON.stringify(put.body));
  const expected = [RULE, { allowed: { origins: ['*'], methods: ['GET'] } }];
  assert.deepEqual(put.body.result.rules, expected);
  assert.deepEqual((await api.call(path)).body.result.rules, expected);
  // The S3 API's rules are these rules.
  assert.deepEqual(await api.store.getBucketCors('test-bucket'), [
    {
      id: 'uploads',
      allowedOrigins: ['https://app.example.com'],
      allowedMethods: ['GET', 'PUT'],
      allowedHeaders: ['content-type'],
      exposeHeaders: ['ETag'],
      maxAgeSeconds: 600,
    },
    { allowedOrigins: ['*'], allowedMethods: ['GET'], allowedHeaders: [], exposeHeaders: [] },
  ]);

  assert.equal((await api.call(path, { method: 'PUT', json: { rules: [RULE] } })).status, 200);
  assert.deepEqual((await api.call(path)).body.result.rules, [RULE], 'replaced whole');
  assert.equal((await api.call(path, { method: 'PUT', json: { rules: [] } })).status, 200);
  assert.deepEqual((await api.call(path)).body.result.rules, [], 'an empty list removes the rules');
  assert.equal(await api.store.getBucketCors('test-bucket'), null);
  assert.equal((await api.call(path, { method: 'PUT', json: { rules: [RULE] } })).status, 200);
  const deleted = await api.call(path, { method: 'DELETE' });
  assert.deepEqual([deleted.status, deleted.body.success], [200, true]);
  assert.deepEqual((await api.call(path)).body.result.rules, []);
  assert.equal((await api.call(path, { method: 'DELETE' })).status, 200, 'deleting none is fine, as on S3');
});

test('bucket CORS: invalid rules are refused with what to fix, and change nothing', { timeout: 10_000 }, async (t) => {
  const api = await startApi(t);
  const path = `/accounts/${api.admin.accountId}/store/buckets/test-bucket/cors`;
  assert.equal((await api.call(path, { method: 'PUT', json: { rules: [RULE] } })).status, 200);
  const refused = async (body: unknown, message: RegExp) => {
    const answer = await api.call(path, { method: 'PUT', json: body });
    assert.equal(answer.status, 400, JSON.stringify(answer.body));
    assert.equal(answer.body.errors[0].code, 1002);
    assert.match(answer.body.errors[0].message, message);
  };
  await refused(
    { rules: [{ allowed: { origins: ['*'], methods: ['PATCH'] } }] },
    /^Found unsupported HTTP method in CORS config\. Unsupported method is PATCH$/,
  );
  await refused({ rules: [{ allowed: { origins: ['https://*.*.test'], methods: ['GET'] } }] }, /can not have more than one wildcard/);
  await refused({ rules: Array.from({ length: 101 }, () => ({ allowed: { origins: ['*'], methods: ['GET'] } })) }, /at most 100 rules/);
  await refused({ rules: [{ allowed: { origins: [], methods: ['GET'] } }] }, /origins/);
  await refused({ rules: [{ allowed: { origins: ['*'], methods: ['GET'] }, maxAgeSeconds: -1 }] }, /maxAgeSeconds/);
  await refused({ rules: [{ allowed: { origins: ['*'], methods: ['GET'] }, unknown: 1 }] }, /unknown/i);
  const tooLarge = await api.call(path, {
    method: 'PUT',
    json: { rules: [{ allowed: { origins: ['o'.repeat(4000)], methods: ['GET'] }, exposeHeaders: Array.from({ length: 20 }, () => 'h'.repeat(4000)) }] },
  });
  assert.equal(tooLarge.status, 413, "past the API's body limit, which the store's 64 KiB bound matches");
  assert.deepEqual((await api.call(path)).body.result.rules, [RULE], 'nothing changed');
});

test("bucket CORS: a missing bucket, or another account's, is not found", { timeout: 30_000 }, async (t) => {
  const api = await startApi(t);
  assert.equal((await api.call(`/accounts/${api.admin.accountId}/store/buckets/test-bucket/cors`, { method: 'PUT', json: { rules: [RULE] } })).status, 200);
  const missing = { code: 10006, message: 'The specified bucket does not exist.' };
  const nothing = await api.call(`/accounts/${api.admin.accountId}/store/buckets/no-such-bucket/cors`, { method: 'PUT', json: { rules: [RULE] } });
  assert.deepEqual([nothing.status, nothing.body.errors], [404, [missing]]);
  const other = await api.newAccount('other@example.com');
  const theirs = `/accounts/${other.accountId}/store/buckets/test-bucket/cors`;
  for (const init of [{ method: 'GET' }, { method: 'PUT', json: { rules: [RULE] } }, { method: 'DELETE' }]) {
    const refused = await api.call(theirs, { ...init, as: other });
    assert.deepEqual([refused.status, refused.body.errors], [404, [missing]], init.method);
  }
  const mine = await api.call(`/accounts/${api.admin.accountId}/store/buckets/test-bucket/cors`, { as: other });
  assert.equal(mine.status, 404, "another account's path answers like a missing one");
  assert.deepEqual((await api.call(`/accounts/${api.admin.accountId}/store/buckets/test-bucket/cors`)).body.result.rules, [RULE], 'untouched');
});
