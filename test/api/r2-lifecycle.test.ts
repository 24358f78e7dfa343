/**
 * R2 lifecycle rules over `/accounts/<id>/r2/buckets/<bucket>/lifecycle` with the official SDK
 * (r2.buckets.lifecycle) and as wrangler sends them: read (an empty list when none), replace,
 * validation errors in the envelope, the rules shared with S3's configuration and the engine.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sdkError, startApi } from './helpers.ts';

test("the SDK reads and replaces a bucket's lifecycle rules; the store keeps what S3 and the sweeper use", { timeout: 20_000 }, async (t) => {
  const api = await startApi(t);
  const client = api.sdk();
  const account_id = api.admin.accountId;
  await client.r2.buckets.create({ account_id, name: 'aging' });
  assert.deepEqual(await client.r2.buckets.lifecycle.get('aging', { account_id }), { rules: [] }, 'no rules: an empty list, as wrangler expects to add to');
  const rules = [
    {
      id: 'expire-logs',
      enabled: true,
      conditions: { prefix: 'logs/' },
      deleteObjectsTransition: { condition: { type: 'Age' as const, maxAge: 30 * 86_400 } },
    },
    {
      id: 'ia',
      enabled: false,
      conditions: { prefix: '' },
      storageClassTransitions: [{ condition: { type: 'Date' as const, date: '2031-01-01T00:00:00.000Z' }, storageClass: 'InfrequentAccess' as const }],
    },
    { id: 'uploads', enabled: true, conditions: { prefix: 'big/' }, abortMultipartUploadsTransition: { condition: { type: 'Age' as const, maxAge: 86_400 } } },
  ];
  await client.r2.buckets.lifecycle.update('aging', { account_id, rules });
  assert.deepEqual(await client.r2.buckets.lifecycle.get('aging', { account_id }), { rules });
  assert.deepEqual(await api.store.getBucketLifecycle('aging'), [
    { id: 'expire-logs', enabled: true, prefix: 'logs/', expiration: { afterSeconds: 30 * 86_400 } },
    { id: 'ia', enabled: false, prefix: '', transition: { date: Date.UTC(2031, 0, 1) } },
    { id: 'uploads', enabled: true, prefix: 'big/', abortUploadsAfterSeconds: 86_400 },
  ]);
  // wrangler's body: text/plain, conditions without a prefix.
  const wrangled = await api.call(`/accounts/${account_id}/r2/buckets/aging/lifecycle`, {
    method: 'PUT',
    headers: { 'content-type': 'text/plain' },
    body: JSON.stringify({ rules: [{ id: 'all', enabled: true, conditions: {}, deleteObjectsTransition: { condition: { maxAge: 86_400, type: 'Age' } } }] }),
  });
  assert.equal(wrangled.status, 200, JSON.stringify(wrangled.body));
  assert.deepEqual((await client.r2.buckets.lifecycle.get('aging', { account_id })).rules?.[0]?.conditions, { prefix: '' });
  await client.r2.buckets.lifecycle.update('aging', { account_id, rules: [] });
  assert.equal(await api.store.getBucketLifecycle('aging'), null, 'an empty list removes them');
});

test(
  "refusals: the store's validation (duplicate ids, no action, a transition after the expiration), the schema, a missing bucket",
  { timeout: 20_000 },
  async (t) => {
    const api = await startApi(t);
    const client = api.sdk();
    const account_id = api.admin.accountId;
    await client.r2.buckets.create({ account_id, name: 'aging' });
    const put = (rules: unknown[]) => api.call(`/accounts/${account_id}/r2/buckets/aging/lifecycle`, { method: 'PUT', json: { rules } });
    const age = (maxAge: number) => ({ condition: { type: 'Age', maxAge } });
    const twice = await put([
      { id: 'x', enabled: true, conditions: {}, deleteObjectsTransition: age(60) },
      { id: 'x', enabled: true, conditions: {}, deleteObjectsTransition: age(60) },
    ]);
    assert.deepEqual([twice.status, twice.body.errors[0].code], [400, 1002]);
    assert.match(twice.body.errors[0].message, /two rules have the id "x"/);
    const idle = await put([{ id: 'idle', enabled: true, conditions: {} }]);
    assert.match(idle.body.errors[0].message, /has no action/);
    const late = await put([
      {
        id: 'late',
        enabled: true,
        conditions: {},
        deleteObjectsTransition: age(60),
        storageClassTransitions: [{ ...age(120), storageClass: 'InfrequentAccess' }],
      },
    ]);
    assert.match(late.body.errors[0].message, /must come before its expiration/);
    const zero = await put([{ id: 'zero', enabled: true, conditions: {}, deleteObjectsTransition: age(0) }]);
    assert.equal(zero.status, 400);
    const glacier = await put([{ id: 'g', enabled: true, conditions: {}, storageClassTransitions: [{ ...age(60), storageClass: 'Glacier' }] }]);
    assert.equal(glacier.status, 400);
    assert.deepEqual(await client.r2.buckets.lifecycle.get('aging', { account_id }), { rules: [] }, 'nothing refused was kept');
    const missing = await sdkError(client.r2.buckets.lifecycle.get('nothing-here', { account_id }));
    assert.deepEqual([missing.status, missing.errors[0]?.code], [404, 10006]);
  },
);
