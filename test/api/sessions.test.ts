/**
 * Dashboard sessions over plain fetch: sign-in with e-mail + key sets an httpOnly, SameSite=Strict
 * cookie and answers a CSRF token; the cookie authenticates reads, and writes only with the token;
 * X-Auth-Email / X-Auth-Key requests are unaffected; sign-out, expiry and a changed key end it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hashApiKey } from '../../src/api/credentials.ts';
import { SessionStore } from '../../src/api/sessions/session-store.ts';
import { FakeClock } from '../../src/core/clock.ts';
import { openTestControlStore, openTestDatabase } from '../helpers/control-store.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { startApi, type ApiFixture } from './helpers.ts';

interface Signed {
  cookie: string;
  csrf: string;
  setCookie: string;
}

async function signIn(api: ApiFixture, email = api.admin.email, key = api.admin.key): Promise<Signed> {
  const response = await fetch(`${api.base}/sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, key }),
  });
  assert.equal(response.status, 200, await response.clone().text());
  const setCookie = response.headers.get('set-cookie')!;
  const body = (await response.json()) as { result: { csrf_token: string; email: string; account: { id: string } } };
  assert.equal(body.result.email, email);
  return { cookie: setCookie.split(';')[0]!, csrf: body.result.csrf_token, setCookie };
}

/** fetch below /client/v4 with only a cookie (and optionally the CSRF token). */
async function withCookie(api: ApiFixture, path: string, signed: Signed, init: { method?: string; json?: unknown; csrf?: string | null } = {}) {
  const headers: Record<string, string> = { cookie: signed.cookie };
  if (init.json !== undefined) headers['content-type'] = 'application/json';
  const csrf = init.csrf === undefined ? signed.csrf : init.csrf;
  if (csrf !== null) headers['x-csrf-token'] = csrf;
  const response = await fetch(api.base + path, {
    method: init.method ?? 'GET',
    headers,
    ...(init.json === undefined ? {} : { body: JSON.stringify(init.json) }),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text === '' ? null : JSON.parse(text) };
}

test('sign-in: a wrong key is refused as the API refuses it; the cookie is httpOnly, SameSite=Strict, Path=/', { timeout: 10_000 }, async (t) => {
  const api = await startApi(t);
  const wrong = await api.call('/sessions', { as: null, method: 'POST', json: { email: api.admin.email, key: 'not-the-key' } });
  assert.equal(wrong.status, 403);
  assert.deepEqual(wrong.body.errors, [{ code: 9103, message: 'Unknown X-Auth-Key or X-Auth-Email' }]);
  assert.equal(wrong.headers.get('set-cookie'), null);

  const malformed = await api.call('/sessions', { as: null, method: 'POST', json: { email: 'nobody', key: 'has space' } });
  assert.equal(malformed.status, 400);
  assert.deepEqual(
    malformed.body.errors.map((e: { code: number; source: { pointer: string } }) => [e.code, e.source.pointer]),
    [
      [1002, '/email'],
      [1002, '/key'],
    ],
  );
  assert.doesNotMatch(JSON.stringify(malformed.body), /has space/, 'a refused key is not echoed');

  const signed = await signIn(api);
  assert.match(signed.setCookie, /^edgeport_session=[\w-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=43200$/);
  const current = await withCookie(api, '/sessions/current', signed);
  assert.equal(current.status, 200);
  assert.equal(current.body.result.csrf_token, signed.csrf);
  assert.equal(current.body.result.account.id, api.admin.accountId);
  assert.equal(current.body.result.operator, true, 'the operator is told so (the dashboard shows it)');
  const other = await api.newAccount('tenant@example.com');
  const tenant = await withCookie(api, '/sessions/current', await signIn(api, other.email, other.key));
  assert.equal(tenant.body.result.operator, false);
});

test('the cookie authenticates reads; writes need X-CSRF-Token; key headers are unaffected', { timeout: 10_000 }, async (t) => {
  const api = await startApi(t);
  const signed = await signIn(api);
  assert.equal((await withCookie(api, '/zones', signed, { csrf: null })).status, 200, 'GET needs no token');

  const zone = { name: 'csrf.example.test' };
  const missing = await withCookie(api, '/zones', signed, { method: 'POST', json: zone, csrf: null });
  assert.equal(missing.status, 403);
  assert.equal(missing.body.errors[0].code, 9109);
  const wrong = await withCookie(api, '/zones', signed, { method: 'POST', json: zone, csrf: 'x'.repeat(signed.csrf.length) });
  assert.equal(wrong.status, 403);
  assert.equal((await api.call('/zones')).body.result.length, 0, 'a refused write wrote nothing');

  const created = await withCookie(api, '/zones', signed, { method: 'POST', json: zone });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  // X-Auth-Email / X-Auth-Key requests need no token, with or without a cookie beside them.
  const byKey = await api.call('/zones', { method: 'POST', json: { name: 'key.example.test' }, headers: { cookie: signed.cookie } });
  assert.equal(byKey.status, 200);
  // Another session's token does not fit this one.
  const other = await signIn(api);
  assert.equal((await withCookie(api, `/zones/${created.body.result.id}`, signed, { method: 'DELETE', csrf: other.csrf })).status, 403);
});

test('sign-out ends the session on the server; an expired session and a changed key end it too', { timeout: 10_000 }, async (t) => {
  const api = await startApi(t);
  const signed = await signIn(api);
  assert.equal((await withCookie(api, '/sessions/current', signed, { method: 'DELETE', csrf: null })).status, 403, 'sign-out needs the token too');
  const out = await withCookie(api, '/sessions/current', signed, { method: 'DELETE' });
  assert.equal(out.status, 200);
  assert.match(out.headers.get('set-cookie')!, /^edgeport_session=; Path=\/; HttpOnly; SameSite=Strict; Max-Age=0$/);
  for (const path of ['/zones', '/sessions/current']) {
    const after = await withCookie(api, path, signed);
    assert.equal(after.status, 401, path);
    assert.equal(after.body.errors[0].code, 10000);
  }
  const none = await api.call('/sessions/current', { as: null });
  assert.equal(none.status, 401, 'no cookie: not signed in');

  const expiring = await signIn(api);
  api.clock.advance(12 * 3600 * 1000 - 1000);
  assert.equal((await withCookie(api, '/zones', expiring)).status, 200);
  api.clock.advance(1000);
  assert.equal((await withCookie(api, '/zones', expiring)).status, 401, 'expired after 12 hours by the injected clock');

  const rotated = await signIn(api);
  await api.control.setAccountKeyHash(api.admin.accountId, await hashApiKey('a-new-key-0123456789', api.scrypt));
  assert.equal((await withCookie(api, '/zones', rotated)).status, 401, 'a new key ends the sessions of the old one');
});

test('the OpenAPI document lists the session routes with their security', { timeout: 10_000 }, async (t) => {
  const api = await startApi(t);
  const doc = (await (await fetch(`${api.base}/openapi.json`)).json()) as { paths: Record<string, Record<string, { security?: unknown }>> };
  assert.deepEqual(doc.paths['/client/v4/sessions']!.post!.security, []);
  assert.deepEqual(doc.paths['/client/v4/sessions/current']!.delete!.security, [{ session: [], csrfToken: [] }]);
  for (const path of [
    '/client/v4/accounts/{account_id}/store/buckets',
    '/client/v4/accounts/{account_id}/store/buckets/{bucket}/objects/{key}',
    '/client/v4/accounts/{account_id}/store/buckets/{bucket}/objects/{key}/uploads/{upload_id}/parts/{part_number}',
    '/client/v4/accounts/{account_id}/gateway/networks',
    '/client/v4/zones/{zone_id}/logshipping/jobs/{job_id}/delivered',
    '/client/v4/accounts/{account_id}/store/s3-endpoint',
  ]) {
    assert.ok(doc.paths[path], `${path} is documented`);
  }
});

test(
  'sessions live in the database: a second store on it (a restart, another instance) knows them; the oldest beyond the limit go',
  { timeout: 10_000 },
  async (t) => {
    const dataDir = tempDir(t);
    const clock = new FakeClock(Date.parse('2026-11-23T10:00:00Z'));
    const database = await openTestDatabase(t, { clock });
    const first = await openTestControlStore(t, { dataDir, clock, database });
    const second = await openTestControlStore(t, { dataDir, clock, database });
    const account = { id: 'a'.repeat(32), email: 'owner@example.test', name: 'owner', keyHash: 'hash-1', created: clock.now() };
    await first.createAccount(account);
    const onFirst = new SessionStore(first, clock, 60_000);
    const onSecond = new SessionStore(second, clock, 60_000);
    const { token, session } = await onFirst.create(account);
    assert.equal((await onSecond.resolve(token))?.csrfToken, session.csrfToken);
    await onSecond.end(session);
    assert.equal(await onFirst.resolve(token), null, 'ended on one, ended on all');

    const later = await onFirst.create(account);
    clock.advance(60_001);
    assert.equal(await onSecond.resolve(later.token), null, 'expired by the injected clock');
    assert.equal(await first.getSession(later.session.id), null, 'an expired session is deleted when seen');

    for (let i = 0; i < 3; i++) {
      clock.advance(1);
      await first.createSession(
        { id: `s${i}`, accountId: account.id, keyHash: 'hash-1', csrfToken: 'c', created: clock.now(), expires: clock.now() + 60_000 },
        2,
      );
    }
    assert.equal(await second.getSession('s0'), null, 'the oldest beyond the limit is dropped');
    assert.deepEqual([(await second.getSession('s1'))?.id, (await second.getSession('s2'))?.id], ['s1', 's2']);
  },
);
