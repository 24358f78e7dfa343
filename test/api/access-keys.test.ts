import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createApiService } from '../../src/api/index.ts';
import { silentLogger } from '../../src/core/log.ts';
import { startApi } from './helpers.ts';

test('S3 access keys: made and revoked through the API, each account sees only its own', { timeout: 10_000 }, async (t) => {
  const api = await startApi(t);
  const path = `/accounts/${api.admin.accountId}/store/access-keys`;
  const made = await api.call(path, { method: 'POST' });
  assert.equal(made.status, 200);
  const { access_key_id: id, secret_access_key: secret } = made.body.result;
  assert.match(id, /^EP[0-9A-F]{18}$/);
  assert.deepEqual(
    await api.accessKeys.keyFor(id),
    { secret, accountId: api.admin.accountId, permission: 'admin_read_write', buckets: null },
    'the S3 API accepts it',
  );
  assert.equal((await api.call(path, { method: 'POST', json: {} })).status, 200, 'an empty JSON body works too');
  const listed = await api.call(path);
  assert.equal(listed.body.result.length, 2);
  assert.deepEqual(
    Object.keys(listed.body.result[0]).sort(),
    ['access_key_id', 'buckets', 'created_on', 'permission', 'revoked_on', 'status'],
    'secrets are shown once, never listed',
  );

  const other = await api.newAccount('other@example.com');
  assert.equal((await api.call(path, { as: other })).status, 404, "another account's path answers like an unknown one");
  const otherPath = `/accounts/${other.accountId}/store/access-keys`;
  assert.deepEqual((await api.call(otherPath, { as: other })).body.result, []);
  const theft = await api.call(`${otherPath}/${id}`, { method: 'DELETE', as: other });
  assert.deepEqual([theft.status, theft.body.errors[0].code], [404, 7003]);
  assert.equal((await api.accessKeys.keyFor(id))?.secret, secret, 'a refused revocation changes nothing');
  assert.equal((await api.call(path, { method: 'POST', json: { name: 'x' } })).body.errors[0].source.pointer, '/name');

  const revoked = await api.call(`${path}/${id}`, { method: 'DELETE' });
  assert.deepEqual(revoked.body.result, { access_key_id: id, status: 'revoked' });
  api.clock.advance(1001);
  assert.equal(await api.accessKeys.keyFor(id), undefined);
  assert.equal((await api.call(path)).body.result.find((k: { access_key_id: string }) => k.access_key_id === id).status, 'revoked');
});

test('S3 access keys limited to reading named buckets; bad permissions and bucket lists are refused with what to fix', { timeout: 10_000 }, async (t) => {
  const api = await startApi(t);
  const path = `/accounts/${api.admin.accountId}/store/access-keys`;
  const made = await api.call(path, { method: 'POST', json: { permission: 'object_read_only', buckets: ['photos', 'logs', 'photos'] } });
  assert.equal(made.status, 200);
  assert.deepEqual([made.body.result.permission, made.body.result.buckets], ['object_read_only', ['photos', 'logs']]);
  assert.deepEqual(await api.accessKeys.keyFor(made.body.result.access_key_id), {
    secret: made.body.result.secret_access_key,
    accountId: api.admin.accountId,
    permission: 'object_read_only',
    buckets: ['photos', 'logs'],
  });
  const listed = (await api.call(path)).body.result[0];
  assert.deepEqual([listed.permission, listed.buckets], ['object_read_only', ['photos', 'logs']]);

  const refusals: Array<[unknown, string]> = [
    [{ permission: 'superuser' }, '/permission'],
    [{ buckets: ['photos'] }, '/buckets'],
    [{ permission: 'admin_read_only', buckets: ['photos'] }, '/buckets'],
    [{ permission: 'object_read_write', buckets: ['Not_A_Bucket'] }, '/buckets/0'],
    [{ permission: 'object_read_write', buckets: [] }, '/buckets'],
  ];
  for (const [json, pointer] of refusals) {
    const refused = await api.call(path, { method: 'POST', json });
    assert.equal(refused.status, 400, JSON.stringify(json));
    assert.equal(refused.body.errors[0].code, 1002);
    assert.equal(refused.body.errors[0].source.pointer, pointer, JSON.stringify(refused.body.errors));
  }
  assert.equal((await api.call(path)).body.result.length, 1, 'refused requests made no key');
});

test("the S3 endpoint: the S3 listener's URL as the browser reaches it, region auto; null without a listener; yours only", { timeout: 10_000 }, async (t) => {
  const api = await startApi(t);
  let listening: string | undefined;
  const served = await createApiService({
    control: api.control,
    accessKeys: api.accessKeys,
    clock: api.clock,
    logger: silentLogger,
    store: api.engine,
    dashboardDir: false,
    scrypt: api.scrypt,
    s3: { url: () => listening },
  });
  const path = `/client/v4/accounts/${api.admin.accountId}/store/s3-endpoint`;
  const ask = async (host: string, as = api.admin) => {
    const answer = await served.fetch(new Request(`http://${host}${path}`, { headers: { 'x-auth-email': as.email, 'x-auth-key': as.key } }));
    return { status: answer.status, body: (await answer.json()) as { result: unknown; errors: Array<{ code: number }> } };
  };
  assert.deepEqual((await ask('localhost:8081')).body.result, { endpoint: null, region: 'auto' }, 'not listening yet');
  listening = 'http://127.0.0.1:9000';
  assert.deepEqual((await ask('localhost:8081')).body.result, { endpoint: 'http://127.0.0.1:9000', region: 'auto' });
  listening = 'http://0.0.0.0:9000';
  assert.deepEqual(
    (await ask('edge.example.test:8081')).body.result,
    { endpoint: 'http://edge.example.test:9000', region: 'auto' },
    'a wildcard listen address becomes the host the browser used',
  );
  const other = await api.newAccount('other@example.com');
  const refused = await ask('localhost:8081', other);
  assert.deepEqual([refused.status, refused.body.errors[0]!.code], [404, 7003], "another account's path answers like an unknown one");

  const without = await api.call(`/accounts/${api.admin.accountId}/store/s3-endpoint`);
  assert.deepEqual(without.body.result, { endpoint: null, region: 'auto' }, 'a management API without an S3 listener says so');
});
