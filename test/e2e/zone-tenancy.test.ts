/**
 * Zones and origins across accounts through `edgeport start`, with the official `cloudflare` SDK
 * and traffic through the edge: another account cannot take the equal, a subdomain or a parent of a
 * zone, and is not told which zone is in the way; no account can take a public suffix; it cannot point an origin at edgeport's own listeners, and at private addresses only while
 * the operator allows them (`[edge] allow_private_origins`); the operator's local origin (the
 * README's walkthrough) works on the default.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test, type TestContext } from 'node:test';
import { promisify } from 'node:util';
import Cloudflare from 'cloudflare';
import { startEdgeport } from '../helpers/edgeport-server.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { sdkFor, viaEdge } from '../helpers/workers-upload.ts';
import { listen } from '../helpers/listen.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ADMIN = { EDGEPORT_ADMIN_EMAIL: 'operator@example.test', EDGEPORT_ADMIN_KEY: 'tenancy-operator-key-0123' };

/** The path these checks ask the edge for, by Host. */
const ACCOUNTS_PATH = '/client/v4/accounts';

/** A refusal of the SDK call with this code and message. */
function refusedWith(code: number, message: RegExp) {
  return (error: unknown) => {
    assert.ok(error instanceof Cloudflare.APIError, String(error));
    assert.equal(error.status, 400);
    const [first] = error.errors as Array<{ code: number; message: string }>;
    assert.equal(first?.code, code);
    assert.match(first.message, message);
    return true;
  };
}

async function internalOrigin(t: TestContext): Promise<{ port: number; hosts: string[] }> {
  const hosts: string[] = [];
  const server = createServer((req, res) => {
    hosts.push(String(req.headers.host));
    res.end('internal');
  });
  const port = await listen(server, t);
  return { port: port, hosts };
}

test('two accounts through edgeport start: names cannot be taken, origins cannot reach inside', { timeout: 120_000 }, async (t) => {
  const dataDir = join(tempDir(t), 'data');
  const origin = await internalOrigin(t);

  // First run: the operator allows private origins.
  const first = await startEdgeport({ owner: t, dataDir, env: { ...ADMIN, EDGEPORT_EDGE_ALLOW_PRIVATE_ORIGINS: 'true' } });
  const { stdout } = await promisify(execFile)(process.execPath, [
    join(ROOT, 'bin/edgeport.js'),
    'accounts',
    'create',
    'bob@example.test',
    '--data-dir',
    dataDir,
  ]);
  const bobKey = /X-Auth-Key: +(\S+)/.exec(stdout)?.[1];
  assert.ok(bobKey, stdout);
  const apiUrl = first.urls['management API']!;
  const operator = sdkFor(apiUrl, ADMIN.EDGEPORT_ADMIN_EMAIL, ADMIN.EDGEPORT_ADMIN_KEY);
  const bob = sdkFor(apiUrl, 'bob@example.test', bobKey);
  const [operatorAccount] = (await operator.accounts.list()).result;
  const [bobAccount] = (await bob.accounts.list()).result;
  const create = (cf: Cloudflare, name: string, originUrl?: string) =>
    cf.zones.create({
      account: { id: (cf === operator ? operatorAccount : bobAccount)!.id },
      name,
      ...(originUrl ? { origin: originUrl } : {}),
    } as Parameters<Cloudflare['zones']['create']>[0]);

  await create(operator, 'shop.test', `http://127.0.0.1:${origin.port}`);
  await assert.rejects(create(operator, 'shop.test'), refusedWith(1061, /^shop\.test already exists$/));
  // Another account's name, one under it or one above it: one answer that names no zone of the operator's.
  const unavailable = (name: string) =>
    new RegExp(
      `^${name.replaceAll('.', '\\.')} is not available: it, a domain above it or a subdomain of it is a zone of another account; choose another name$`,
    );
  await assert.rejects(create(bob, 'shop.test'), refusedWith(1061, unavailable('shop.test')));
  await assert.rejects(create(bob, 'www.shop.test'), refusedWith(1061, unavailable('www.shop.test')));
  await assert.rejects(create(bob, 'api.www.shop.test'), refusedWith(1061, unavailable('api.www.shop.test')));
  await create(operator, 'deep.inside.parent.test');
  await assert.rejects(create(bob, 'parent.test'), refusedWith(1061, unavailable('parent.test')));
  // A public suffix is no one's: Bob cannot take co.uk (and with it every name registered under it).
  await assert.rejects(create(bob, 'co.uk'), refusedWith(1099, /^We were unable to identify co\.uk as a registered domain: co\.uk is a public suffix/));
  await assert.rejects(create(bob, 'github.io'), refusedWith(1099, /github\.io is a public suffix/));
  assert.equal((await create(operator, 'shop.co.uk')).name, 'shop.co.uk');
  assert.equal((await create(operator, 'www.shop.test')).name, 'www.shop.test', 'the same account nests its own zones');

  const apiPort = new URL(apiUrl).port;
  await create(bob, 'bob.test', `http://127.0.0.1:${origin.port}`);
  await assert.rejects(
    create(bob, 'bob-api.test', `http://127.0.0.1:${apiPort}`),
    refusedWith(1002, /because 127\.0\.0\.1:\d+ may not be used as an origin by this account's zones; only the operator's zones may;/),
  );
  await assert.rejects(create(bob, 'bob-api.test', `http://localhost:${apiPort}`), refusedWith(1002, /may not be used as an origin/));
  // A name that resolves to this machine (the API cannot know; the edge checks where it connects).
  await create(bob, 'bob-api.test', `http://${hostname()}:${apiPort}`);

  assert.deepEqual(await viaEdge(first.urls.edge!, 'shop.test', ACCOUNTS_PATH), { status: 200, body: 'internal' });
  assert.deepEqual(await viaEdge(first.urls.edge!, 'bob.test', ACCOUNTS_PATH), { status: 200, body: 'internal' }, 'allowed by allow_private_origins');
  const selfByName = await viaEdge(first.urls.edge!, 'bob-api.test', ACCOUNTS_PATH);
  assert.equal(selfByName.status, 403, selfByName.body);
  // Refused without naming the origin, its address or the port as edgeport's own.
  assert.match(selfByName.body, /^error 1000: DNS points to prohibited IP: this zone's origin leads to an address it may not use\./);
  assert.doesNotMatch(selfByName.body, new RegExp(`${apiPort}|edgeport|listener`));
  assert.doesNotMatch(selfByName.body, /operator@example\.test|"result"/, 'nothing of the management API came back');
  assert.deepEqual(origin.hosts, ['shop.test', 'bob.test']);
  assert.equal(await first.stop(), 0);

  // Second run on the default: private origins are the operator's again, for zones already made too.
  const second = await startEdgeport({ owner: t, dataDir, env: ADMIN });
  assert.deepEqual(
    await viaEdge(second.urls.edge!, 'shop.test', ACCOUNTS_PATH),
    { status: 200, body: 'internal' },
    "the operator's local origin works on the default",
  );
  const refused = await viaEdge(second.urls.edge!, 'bob.test', ACCOUNTS_PATH);
  assert.equal(refused.status, 403);
  assert.match(refused.body, /^error 1000: DNS points to prohibited IP: this zone's origin leads to an address it may not use\./);
  assert.doesNotMatch(refused.body, /127\.0\.0\.1/, "the visitor is not told the origin's address");
  assert.deepEqual(origin.hosts, ['shop.test', 'bob.test', 'shop.test'], "bob's zone never reached the origin");
  const bobAgain = sdkFor(second.urls['management API']!, 'bob@example.test', bobKey);
  const bobZone = (await bobAgain.zones.list({ name: 'bob.test' })).result[0]!;
  await assert.rejects(
    bobAgain.zones.edit({ zone_id: bobZone.id, origin: `http://169.254.169.254` } as Parameters<Cloudflare['zones']['edit']>[0]),
    refusedWith(1002, /169\.254\.169\.254 is a link-local address/),
  );
});
