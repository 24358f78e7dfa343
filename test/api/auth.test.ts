import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createAccount, ensureBootstrapAccount, DEFAULT_ADMIN_EMAIL } from '../../src/api/index.ts';
import { verifyApiKey } from '../../src/api/credentials.ts';
import { FakeClock } from '../../src/core/clock.ts';
import { openTestControlStore } from '../helpers/control-store.ts';
import { testScryptThread } from '../helpers/scrypt-thread.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { startApi, type Json } from './helpers.ts';

const failure = (code: number, message: string, extra: object = {}) => ({ result: null, success: false, errors: [{ code, message, ...extra }], messages: [] });

test('authentication failures answer as the real API, in the envelope', { timeout: 10_000 }, async (t) => {
  const api = await startApi(t);
  const { admin } = api;
  const cases: Array<[Record<string, string>, number, object]> = [
    [{}, 400, failure(9106, 'Missing X-Auth-Key, X-Auth-Email or Authorization headers')],
    [{ 'x-auth-email': admin.email }, 400, failure(9106, 'Missing X-Auth-Key, X-Auth-Email or Authorization headers')],
    [{ authorization: `Bearer ${'a'.repeat(40)}` }, 401, failure(10000, 'Authentication error')],
    [
      { authorization: 'Bearer some-token' },
      400,
      failure(6003, 'Invalid request headers', { error_chain: [{ code: 6111, message: 'Invalid format for Authorization header' }] }),
    ],
    [
      { 'x-auth-email': 'not-an-email', 'x-auth-key': admin.key },
      400,
      failure(6003, 'Invalid request headers', { error_chain: [{ code: 6102, message: 'Invalid format for X-Auth-Email header' }] }),
    ],
    [
      { 'x-auth-email': admin.email, 'x-auth-key': 'has space' },
      400,
      failure(6003, 'Invalid request headers', { error_chain: [{ code: 6103, message: 'Invalid format for X-Auth-Key header' }] }),
    ],
    [{ 'x-auth-email': admin.email, 'x-auth-key': `${admin.key}0` }, 403, failure(9103, 'Unknown X-Auth-Key or X-Auth-Email')],
    [{ 'x-auth-email': 'nobody@example.com', 'x-auth-key': admin.key }, 403, failure(9103, 'Unknown X-Auth-Key or X-Auth-Email')],
  ];
  for (const [headers, status, body] of cases) {
    const response = await api.call('/zones', { as: null, headers });
    assert.equal(response.status, status, JSON.stringify(headers));
    assert.deepEqual(response.body, body, JSON.stringify(headers));
    assert.equal(response.headers.get('content-type'), 'application/json');
  }
  // The SDK sends extra headers (and v7 every configured credential): e-mail + key win.
  const ok = await api.call('/zones', { headers: { authorization: 'Bearer ignored', 'x-stainless-retry-count': '0', 'api-version': '2026-01-01' } });
  assert.equal(ok.status, 200);
  assert.equal((await api.call('/zones', { headers: { 'x-auth-email': admin.email.toUpperCase() } })).status, 200, 'e-mail is case-insensitive');
});

test('the official SDK surfaces our codes; keys are stored hashed and a changed key stops working at once', { timeout: 10_000 }, async (t) => {
  const api = await startApi(t);
  const wrong = api.sdk({ ...api.admin, key: 'f'.repeat(37) });
  await assert.rejects(wrong.zones.list(), (error: Json) => error.status === 403 && error.errors[0].code === 9103);
  const stored = await api.control.findAccountByEmail(api.admin.email);
  assert.match(stored!.keyHash, /^scrypt\$16384\$8\$1\$/);
  assert.ok(!stored!.keyHash.includes(api.admin.key));
  assert.equal((await api.sdk().zones.list()).result.length, 0, 'a verified key is cached');
  await api.control.setAccountKeyHash(stored!.id, 'scrypt$16384$8$1$AAAA$AAAA');
  assert.equal((await api.call('/zones')).status, 403, 'the cache notices the new hash');
});

test(
  "first start: from EDGEPORT_ADMIN_EMAIL/KEY, else generated once; later starts give the operator the variables' e-mail and key",
  { timeout: 30_000 },
  async (t) => {
    const clock = new FakeClock();
    const scrypt = testScryptThread(t);
    const fresh = await openTestControlStore(t, { dataDir: tempDir(t), clock });
    const made = await ensureBootstrapAccount(fresh, {}, { scrypt, clock });
    assert.equal(made.kind, 'generated');
    if (made.kind !== 'generated') return;
    assert.equal(made.email, DEFAULT_ADMIN_EMAIL);
    assert.match(made.key, /^[0-9a-f]{37}$/);
    assert.ok(await verifyApiKey(made.key, (await fresh.findAccountByEmail(DEFAULT_ADMIN_EMAIL))!.keyHash, scrypt));
    assert.deepEqual(await ensureBootstrapAccount(fresh, {}, { scrypt, clock }), { kind: 'kept' }, 'printed once: an account exists now');
    // The generated operator takes the variables' e-mail and key: no second account.
    const adopted = await ensureBootstrapAccount(fresh, { EDGEPORT_ADMIN_EMAIL: 'me@example.com', EDGEPORT_ADMIN_KEY: 'my-key-0123456789' }, { scrypt, clock });
    assert.deepEqual(adopted, { kind: 'given', email: 'me@example.com', created: false, previousEmail: DEFAULT_ADMIN_EMAIL, keyChanged: true });
    assert.equal(await fresh.countAccounts(), 1);
    assert.equal((await fresh.firstAccount())!.email, 'me@example.com');

    const store = await openTestControlStore(t, { dataDir: tempDir(t), clock });
    const env = { EDGEPORT_ADMIN_EMAIL: 'ops@example.com', EDGEPORT_ADMIN_KEY: 'first-key-0123456789' };
    assert.deepEqual(
      await ensureBootstrapAccount(store, env, { scrypt, clock }),
      { kind: 'given', email: 'ops@example.com', created: true, previousEmail: null, keyChanged: false },
      'given credentials are not printed',
    );
    const account = await store.findAccountByEmail('ops@example.com');
    assert.ok(await verifyApiKey('first-key-0123456789', account!.keyHash, scrypt));
    assert.deepEqual(
      await ensureBootstrapAccount(store, { ...env, EDGEPORT_ADMIN_EMAIL: 'OPS@example.com' }, { scrypt, clock }),
      { kind: 'given', email: 'ops@example.com', created: false, previousEmail: null, keyChanged: false },
      'the same values (e-mail case aside) change nothing',
    );
    assert.deepEqual(await ensureBootstrapAccount(store, { ...env, EDGEPORT_ADMIN_KEY: 'second-key-0123456789' }, { scrypt, clock }), {
      kind: 'given',
      email: 'ops@example.com',
      created: false,
      previousEmail: null,
      keyChanged: true,
    });
    const after = await store.findAccountByEmail('ops@example.com');
    assert.equal(after!.id, account!.id);
    assert.ok(await verifyApiKey('second-key-0123456789', after!.keyHash, scrypt));
    await ensureBootstrapAccount(store, { EDGEPORT_ADMIN_EMAIL: 'new-ops@example.com', EDGEPORT_ADMIN_KEY: 'second-key-0123456789' }, { scrypt, clock });
    assert.equal((await store.findAccountByEmail('new-ops@example.com'))!.id, account!.id, 'a new e-mail renames the operator');
    assert.equal(await store.findAccountByEmail('ops@example.com'), null);
    assert.equal(await store.countAccounts(), 1);
    // Another account's e-mail is refused, and nothing changes.
    clock.advance(1_000);
    await createAccount(store, 'other@example.com', { scrypt, clock });
    await assert.rejects(
      ensureBootstrapAccount(store, { EDGEPORT_ADMIN_EMAIL: 'other@example.com', EDGEPORT_ADMIN_KEY: 'third-key-0123456789' }, { scrypt, clock }),
      { code: 'ACCOUNT_ADMIN_EMAIL_TAKEN', message: /edgeport accounts delete other@example\.com/ },
    );
    const unchanged = (await store.firstAccount())!;
    assert.equal(unchanged.email, 'new-ops@example.com');
    assert.ok(await verifyApiKey('second-key-0123456789', unchanged.keyHash, scrypt));
    await assert.rejects(ensureBootstrapAccount(store, { EDGEPORT_ADMIN_EMAIL: 'x@example.com' }, { scrypt, clock }), { code: 'ACCOUNT_ADMIN_ENV_INCOMPLETE' });
    await assert.rejects(ensureBootstrapAccount(store, { EDGEPORT_ADMIN_EMAIL: 'bad', EDGEPORT_ADMIN_KEY: 'k' }, { scrypt, clock }), {
      code: 'ACCOUNT_EMAIL_INVALID',
    });
    await assert.rejects(ensureBootstrapAccount(store, { EDGEPORT_ADMIN_EMAIL: 'y@example.com', EDGEPORT_ADMIN_KEY: 'has space' }, { scrypt, clock }), {
      code: 'ACCOUNT_KEY_INVALID',
    });
    assert.equal((await store.firstAccount())!.email, 'new-ops@example.com');
  },
);
