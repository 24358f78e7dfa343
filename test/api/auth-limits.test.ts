/**
 * Failed-credential limits of the management API over real sockets, each client bound to its own
 * loopback address (127.0.0.x): per address and per e-mail, for X-Auth-* and dashboard sign-in
 * alike; 429 / 971 with an honest Retry-After, decided before any hash (a full hash queue shows
 * it); verified pairs, trusted addresses and session cookies are never refused; expiry by the
 * FakeClock. Then the per-account session cap through sign-in, on SQLite or PostgreSQL.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { Agent, fetch } from 'undici';
import { startApi, type ApiFixture, type Credentials, type Json } from './helpers.ts';

interface Answer {
  status: number;
  retryAfter: string | null;
  body: Json;
  setCookie: string | null;
}

/** A client of the API bound to one local address. */
function clientAt(t: TestContext, api: ApiFixture, address: string) {
  const agent = new Agent({ localAddress: address });
  t.after(() => agent.close());
  const send = async (path: string, init: { method?: string; headers?: Record<string, string>; json?: unknown } = {}): Promise<Answer> => {
    const headers = { ...init.headers, ...(init.json === undefined ? {} : { 'content-type': 'application/json' }) };
    const response = await fetch(api.base + path, {
      method: init.method ?? 'GET',
      headers,
      dispatcher: agent,
      ...(init.json === undefined ? {} : { body: JSON.stringify(init.json) }),
    });
    return {
      status: response.status,
      retryAfter: response.headers.get('retry-after'),
      body: await response.json(),
      setCookie: response.headers.get('set-cookie'),
    };
  };
  return {
    /** GET /zones with X-Auth-Email / X-Auth-Key. */
    zones: (as: { email: string; key: string }) => send('/zones', { headers: { 'x-auth-email': as.email, 'x-auth-key': as.key } }),
    signIn: (as: { email: string; key: string }) => send('/sessions', { method: 'POST', json: { email: as.email, key: as.key } }),
    withCookie: (cookie: string) => send('/zones', { headers: { cookie } }),
  };
}

function assertLimited(answer: Answer, scope: 'from this address' | 'for this e-mail', seconds: number): void {
  assert.equal(answer.status, 429, JSON.stringify(answer.body));
  assert.equal(answer.retryAfter, String(seconds));
  assert.deepEqual(answer.body, {
    result: null,
    success: false,
    messages: [],
    errors: [
      { code: 971, message: `Please wait and consider throttling your request speed: too many failed credential checks ${scope}; retry after ${seconds} s` },
    ],
  });
}

const wrong = (email: string) => ({ email, key: 'not-the-key-0123456789' });

test('per address: 20 failures, then 429 / 971 from that address only; Retry-After is honest; a verified pair still passes', { timeout: 60_000 }, async (t) => {
  const api = await startApi(t);
  const attacker = clientAt(t, api, '127.0.0.2');
  const admin: Credentials = api.admin;
  assert.equal((await clientAt(t, api, '127.0.0.3').zones(admin)).status, 200, 'the admin pair is verified (and remembered)');
  for (let i = 0; i < 20; i++) {
    const answer = i % 2 === 0 ? await attacker.zones(wrong(`guess${i}@example.com`)) : await attacker.signIn(wrong(`guess${i}@example.com`));
    assert.equal(answer.status, 403, `failure ${i + 1} is checked`);
  }
  // One attempt comes back every 60 s / 20 = 3 s.
  assertLimited(await attacker.zones(wrong('fresh@example.com')), 'from this address', 3);
  assertLimited(await attacker.signIn(wrong('fresh@example.com')), 'from this address', 3);
  const stranger = await api.newAccount('stranger@example.com');
  assertLimited(await attacker.zones(stranger), 'from this address', 3);
  assert.equal((await attacker.zones(admin)).status, 200, 'a pair verified before is not refused, even from a limited address');
  assert.equal((await clientAt(t, api, '127.0.0.4').zones(wrong('fresh@example.com'))).status, 403, 'other addresses are not limited');

  api.clock.advance(2_000);
  assertLimited(await attacker.zones(wrong('fresh@example.com')), 'from this address', 1);
  api.clock.advance(1_000);
  assert.equal((await attacker.zones(stranger)).status, 200, 'after Retry-After one attempt is let through');
  assert.equal((await attacker.zones(wrong('fresh@example.com'))).status, 403, 'a success gave its attempt back');
  assertLimited(await attacker.zones(wrong('fresh@example.com')), 'from this address', 3);
  api.clock.advance(60_000);
  assert.equal((await attacker.zones(wrong('fresh@example.com'))).status, 403, 'after the window the address starts afresh');
});

test(
  'per e-mail: 10 failures from anywhere, then 429 / 971; the victim keeps its remembered pair, its trusted address and its session',
  { timeout: 60_000 },
  async (t) => {
    const api = await startApi(t);
    const victim = await api.newAccount('victim@example.com');
    const home = clientAt(t, api, '127.0.0.10');
    const signedIn = await home.signIn(victim);
    assert.equal(signedIn.status, 200);
    const cookie = signedIn.setCookie!.split(';')[0]!;

    const attack = async () => {
      for (let i = 0; i < 10; i++) {
        const from = clientAt(t, api, `127.0.0.${20 + (i % 5)}`);
        const answer = i % 2 === 0 ? await from.zones(wrong(victim.email)) : await from.signIn(wrong(victim.email.toUpperCase()));
        assert.equal(answer.status, 403, `failure ${i + 1} is checked`);
      }
    };
    await attack();
    const elsewhere = clientAt(t, api, '127.0.0.30');
    // One attempt comes back every 60 s / 10 = 6 s.
    assertLimited(await elsewhere.zones(wrong(victim.email)), 'for this e-mail', 6);
    assertLimited(await elsewhere.signIn(wrong(victim.email)), 'for this e-mail', 6);
    assertLimited(await clientAt(t, api, '127.0.0.31').zones(wrong('Victim@Example.com')), 'for this e-mail', 6);
    assert.equal((await clientAt(t, api, '127.0.0.31').zones(wrong('someone-else@example.com'))).status, 403, 'other e-mails are not limited');

    assert.equal((await elsewhere.zones(victim)).status, 200, 'the pair verified at sign-in is remembered: not refused from anywhere');
    assert.equal((await elsewhere.signIn(victim)).status, 200, 'nor is a sign-in with it');
    assert.equal((await elsewhere.withCookie(cookie)).status, 200, 'a live session is never refused');

    // A minute without use: the pair is forgotten. The attack goes on.
    api.clock.advance(61_000);
    await attack();
    assertLimited(await elsewhere.zones(victim), 'for this e-mail', 6);
    assert.equal((await home.zones(victim)).status, 200, "the address the victim signed in from is exempt from the e-mail's count");
    assert.equal((await home.signIn(victim)).status, 200);
    assert.equal((await elsewhere.withCookie(cookie)).status, 200);

    api.clock.advance(6_000);
    assert.equal((await elsewhere.zones(wrong(victim.email))).status, 403, 'after Retry-After one attempt is let through');
    assertLimited(await elsewhere.zones(wrong(victim.email)), 'for this e-mail', 6);
  },
);

test(
  'limits are decided before any hash: with the hash queue full, a limited request is 429 at once, another is 503 / 971',
  { timeout: 120_000 },
  async (t) => {
    const api = await startApi(t);
    const attacker = clientAt(t, api, '127.0.0.40');
    for (let i = 0; i < 20; i++) assert.equal((await attacker.zones(wrong(`g${i}@example.com`))).status, 403);
    // Fill the service's hash queue (16 by default) with slow derivations, all for 127.0.0.41 (the
    // queue is shared fairly: another address would take one of these places); the first, 127.0.0.41
    // being fresh, runs on the fresh clients' thread: 17 in all.
    const cost = { N: 32768, r: 8, p: 1, keyLength: 32 };
    const filler = Array.from({ length: 17 }, (_, i) => api.scrypt.derive(`filler-${i}`, Buffer.alloc(16, i), cost, '127.0.0.41'));
    assertLimited(await attacker.zones(wrong('new@example.com')), 'from this address', 3);
    const busy = await clientAt(t, api, '127.0.0.41').zones(wrong('new@example.com'));
    assert.equal(busy.status, 503);
    assert.match(busy.retryAfter ?? '', /^[1-9]\d*$/);
    assert.deepEqual(busy.body.errors, [
      {
        code: 971,
        message: `Please wait and consider throttling your request speed: too many credential checks are waiting; retry after ${busy.retryAfter} s`,
      },
    ]);
    await Promise.all(filler);
    assert.equal((await clientAt(t, api, '127.0.0.41').zones(wrong('new@example.com'))).status, 403, 'a busy answer counted as no failure');
    for (let i = 0; i < 19; i++) assert.equal((await clientAt(t, api, '127.0.0.41').zones(wrong(`h${i}@example.com`))).status, 403);
    assertLimited(await clientAt(t, api, '127.0.0.41').zones(wrong('new@example.com')), 'from this address', 3);
  },
);

test('sessions are capped per account: B signing in 130 times keeps its newest 100 and never signs A out', { timeout: 120_000 }, async (t) => {
  const api = await startApi(t);
  const a = api.admin;
  const b = await api.newAccount('b@example.com');
  const client = clientAt(t, api, '127.0.0.50');
  const signedA = await client.signIn(a);
  const cookieA = signedA.setCookie!.split(';')[0]!;
  const cookiesB: string[] = [];
  for (let i = 0; i < 130; i++) {
    api.clock.advance(1);
    const signed = await client.signIn(b);
    assert.equal(signed.status, 200);
    cookiesB.push(signed.setCookie!.split(';')[0]!);
  }
  const a1 = await client.withCookie(cookieA);
  assert.equal(a1.status, 200, 'A is still signed in');
  const live = [];
  for (const [i, cookie] of cookiesB.entries()) if ((await client.withCookie(cookie)).status === 200) live.push(i);
  assert.deepEqual(
    live,
    Array.from({ length: 100 }, (_, i) => 30 + i),
    'B keeps its newest 100',
  );
});
