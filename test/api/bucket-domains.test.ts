/**
 * The public bucket routes through the official SDK (`r2.buckets.domains`): the managed URL's
 * id made once and kept; custom domains checked (a host of the caller's zone, not a platform host,
 * not another bucket's, no cipher suites); another account's bucket is missing; a host held by a
 * bucket or zone that is gone can be attached again, by the zone name's new owner too.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sdkError, startApi, type Json } from './helpers.ts';

test('managed URLs and custom domains, checked', { timeout: 20_000 }, async (t) => {
  const api = await startApi(t);
  const cf = api.sdk();
  const account_id = api.admin.accountId;
  await cf.r2.buckets.create({ account_id, name: 'site' });
  const first = (await cf.r2.buckets.domains.managed.list('site', { account_id })) as Json;
  assert.deepEqual([first.enabled, first.domain], [false, `pub-${first.bucketId}.r2.localhost`]);
  assert.deepEqual(await cf.r2.buckets.domains.managed.update('site', { account_id, enabled: true }), { ...first, enabled: true });

  const zone = (await api.call('/zones', { method: 'POST', json: { name: 'files.test' } })).body.result.id as string;
  const refused = async (domain: string, zoneId: string, extra: object = {}) =>
    (await sdkError(cf.r2.buckets.domains.custom.create('site', { account_id, domain, zoneId, enabled: true, ...extra }))).errors[0] as Json;
  assert.match((await refused('cdn.other.test', zone)).message, /not files\.test or a name under it/);
  assert.match((await refused('x.r2.localhost', zone)).message, /r2\.localhost and the names under it belong to this server/);
  assert.match((await refused('cdn.files.test', 'f'.repeat(32))).message, /no zone of yours/);
  assert.match((await refused('cdn.files.test', zone, { ciphers: ['ECDHE-RSA-AES128-GCM-SHA256'] })).message, /does not provide custom cipher suites/);
  await cf.r2.buckets.domains.custom.create('site', { account_id, domain: 'CDN.files.test', zoneId: zone, enabled: true });
  assert.equal((await refused('cdn.files.test', zone)).code, 10061, 'a host is attached once');
  assert.equal(
    ((await cf.r2.buckets.domains.custom.get('cdn.files.test', { account_id, bucket_name: 'site' })) as Json).domain,
    'cdn.files.test',
    'host names are lower case',
  );

  const other = await api.newAccount('other@example.com');
  const theirs = api.sdk(other);
  assert.equal(
    (await sdkError(theirs.r2.buckets.domains.managed.list('site', { account_id: other.accountId }))).status,
    404,
    'their account has no such bucket',
  );
  await theirs.r2.buckets.create({ account_id: other.accountId, name: 'site' });
  // The zone goes; another account makes the name a zone of its own: the host is theirs to attach.
  assert.equal((await api.call(`/zones/${zone}`, { method: 'DELETE' })).status, 200);
  const theirZone = (await api.call('/zones', { method: 'POST', as: other, json: { name: 'files.test' } })).body.result.id as string;
  const taken = (await theirs.r2.buckets.domains.custom.create('site', {
    account_id: other.accountId,
    domain: 'cdn.files.test',
    zoneId: theirZone,
    enabled: true,
  })) as Json;
  assert.equal(taken.domain, 'cdn.files.test');
  assert.deepEqual(((await cf.r2.buckets.domains.custom.list('site', { account_id })) as Json).domains, [], 'the first bucket no longer has it');
});
