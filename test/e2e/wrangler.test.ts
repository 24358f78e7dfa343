/**
 * The real wrangler 4 against `edgeport start`, as a user with `CLOUDFLARE_API_BASE_URL` set runs
 * it (test/helpers/wrangler.ts: the tests' node, a fresh HOME, no connection off this machine): whoami
 * with the global key and with an API token made through /user/tokens; R2 buckets created,
 * listed, read (with their object count, from POST /graphql) and deleted; an object on a nested key
 * put from a file, read back to stdout and deleted; a bucket's CORS rules set, listed and deleted;
 * another account sees none of it; a read-only token cannot create a bucket. Then a script deployed
 * with an r2 binding, vars and a route on the account's zone is served by the edge, there and on
 * the account's dev subdomain; a redeploy serves the new version; `secret put` reaches env and
 * `secret delete` takes it away; `versions list`, `versions view` and `deployments list` show both
 * versions; `tail --format json` prints a request; another account's deploy onto that zone's route is refused (10019) and the first
 * script keeps serving.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startEdgeport, type EdgeportServer } from '../helpers/edgeport-server.ts';
import { managementApi } from '../helpers/management-api.ts';
import { stopChild } from '../helpers/child-processes.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { servedWithin, viaEdge } from '../helpers/workers-upload.ts';
import { succeeded, wranglerFor, type Wrangler } from '../helpers/wrangler.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const OPERATOR = { email: 'operator@example.test', key: 'wrangler-operator-key-0123' };

async function secondAccount(dataDir: string, email: string): Promise<{ email: string; key: string }> {
  const { stdout } = await promisify(execFile)(process.execPath, [join(ROOT, 'bin/edgeport.js'), 'accounts', 'create', email, '--data-dir', dataDir], {
    timeout: 60_000,
  });
  const key = /X-Auth-Key: +(\S+)/.exec(stdout)?.[1];
  assert.ok(key, stdout);
  return { email, key };
}

async function accountIdOf(server: EdgeportServer, who: { email: string; key: string }): Promise<string> {
  const [account] = await managementApi(server.urls['management API']!, who.email, who.key).call<Array<{ id: string }>>('GET', '/accounts');
  return account!.id;
}

test('wrangler 4 against edgeport start: whoami, r2 buckets, objects and CORS, tenancy', { timeout: 150_000 }, async (t) => {
  const dataDir = join(tempDir(t), 'data');
  const server = await startEdgeport({ owner: t, dataDir, env: { EDGEPORT_ADMIN_EMAIL: OPERATOR.email, EDGEPORT_ADMIN_KEY: OPERATOR.key } });
  const apiBase = server.urls['management API']!;
  const accountId = await accountIdOf(server, OPERATOR);
  const wrangler = wranglerFor(t, { apiBase, accountId, credentials: OPERATOR });

  const whoami = succeeded(await wrangler.run(['whoami']), 'whoami');
  assert.match(whoami, new RegExp(`associated with the email ${OPERATOR.email.replace('.', '\\.')}`));
  assert.match(whoami, new RegExp(accountId));

  // Buckets.
  succeeded(await wrangler.run(['r2', 'bucket', 'create', 'photos']), 'r2 bucket create');
  succeeded(
    await wrangler.run(['r2', 'bucket', 'create', 'archive', '--location', 'weur', '--storage-class', 'InfrequentAccess']),
    'r2 bucket create --location --storage-class',
  );
  const list = succeeded(await wrangler.run(['r2', 'bucket', 'list']), 'r2 bucket list');
  assert.match(list, /name:\s+archive/);
  assert.match(list, /name:\s+photos/);

  // An object on a nested key: put from a file, read back byte for byte, deleted.
  const body = randomBytes(300_000);
  const file = join(wrangler.dir, 'cat.bin');
  writeFileSync(file, body);
  succeeded(
    await wrangler.run(['r2', 'object', 'put', 'photos/2024/cats/cat one.bin', '--file', file, '--content-type', 'application/octet-stream', '--remote']),
    'r2 object put',
  );
  const info = succeeded(await wrangler.run(['r2', 'bucket', 'info', 'photos']), 'r2 bucket info');
  assert.match(info, /name:\s+photos/);
  assert.match(info, /object_count:\s+1\b/, 'the object count comes from POST /graphql');
  const got = await wrangler.run(['r2', 'object', 'get', 'photos/2024/cats/cat one.bin', '--pipe', '--remote']);
  assert.equal(got.code, 0, got.stderr);
  assert.ok(got.stdoutBytes.equals(body), `r2 object get --pipe wrote ${got.stdoutBytes.length} bytes, not the ${body.length} put`);
  succeeded(await wrangler.run(['r2', 'object', 'delete', 'photos/2024/cats/cat one.bin', '--remote']), 'r2 object delete');

  // CORS.
  const cors = join(wrangler.dir, 'cors.json');
  writeFileSync(
    cors,
    JSON.stringify({
      rules: [
        { allowed: { origins: ['https://app.example.test'], methods: ['GET', 'PUT'], headers: ['content-type'] }, exposeHeaders: ['etag'], maxAgeSeconds: 600 },
      ],
    }),
  );
  succeeded(await wrangler.run(['r2', 'bucket', 'cors', 'set', 'photos', '--file', cors, '--force']), 'r2 bucket cors set');
  const corsList = succeeded(await wrangler.run(['r2', 'bucket', 'cors', 'list', 'photos']), 'r2 bucket cors list');
  assert.match(corsList, /https:\/\/app\.example\.test/);
  succeeded(await wrangler.run(['r2', 'bucket', 'cors', 'delete', 'photos', '--force']), 'r2 bucket cors delete');

  // Another account sees none of it.
  const bob = await secondAccount(dataDir, 'bob@example.test');
  const bobWrangler = wranglerFor(t, { apiBase, accountId: await accountIdOf(server, bob), credentials: bob });
  const bobList = succeeded(await bobWrangler.run(['r2', 'bucket', 'list']), 'bob: r2 bucket list');
  assert.doesNotMatch(bobList, /photos|archive/);

  succeeded(await wrangler.run(['r2', 'bucket', 'delete', 'archive']), 'r2 bucket delete');
  const after = succeeded(await wrangler.run(['r2', 'bucket', 'list']), 'r2 bucket list');
  assert.doesNotMatch(after, /archive/);
  assert.deepEqual([...wrangler.refused(), ...bobWrangler.refused()], [], 'wrangler tried to reach a host off this machine');
});

/** The script wrangler deploys: what its bindings, vars and secret hold, and its version. */
function script(version: string): string {
  return `export default {
  async fetch(request, env) {
    const object = await env.ASSETS.get('greeting.txt');
    return new Response([env.GREETING, await object.text(), env.TOKEN ?? 'no secret', '${version}'].join(' '));
  },
};
`;
}

function writeProject(wrangler: Wrangler, route: Record<string, string>, version: string): void {
  writeFileSync(join(wrangler.dir, 'index.js'), script(version));
  writeFileSync(
    join(wrangler.dir, 'wrangler.json'),
    JSON.stringify(
      {
        name: 'hello',
        main: 'index.js',
        compatibility_date: '2025-01-01',
        routes: [route],
        workers_dev: true,
        r2_buckets: [{ binding: 'ASSETS', bucket_name: 'assets' }],
        vars: { GREETING: 'hello' },
      },
      null,
      2,
    ),
  );
}

test(
  'wrangler 4 deploys to edgeport start: a route and an r2 binding served by the edge, a redeploy, a secret put and deleted, versions and deployments; another account cannot take the route',
  { timeout: 150_000 },
  async (t) => {
    const dataDir = join(tempDir(t), 'data');
    const server = await startEdgeport({ owner: t, dataDir, env: { EDGEPORT_ADMIN_EMAIL: OPERATOR.email, EDGEPORT_ADMIN_KEY: OPERATOR.key } });
    const apiBase = server.urls['management API']!;
    const edge = server.urls.edge!;
    const accountId = await accountIdOf(server, OPERATOR);
    const zone = await managementApi(apiBase, OPERATOR.email, OPERATOR.key).call<{ id: string }>('POST', '/zones', {
      name: 'wrangler.test',
      account: { id: accountId },
    });
    const wrangler = wranglerFor(t, { apiBase, accountId, credentials: OPERATOR });
    succeeded(await wrangler.run(['r2', 'bucket', 'create', 'assets']), 'r2 bucket create');
    writeFileSync(join(wrangler.dir, 'greeting.txt'), 'from the bucket');
    succeeded(await wrangler.run(['r2', 'object', 'put', 'assets/greeting.txt', '--file', join(wrangler.dir, 'greeting.txt'), '--remote']), 'r2 object put');

    writeProject(wrangler, { pattern: 'wrangler.test/*', zone_name: 'wrangler.test' }, 'v1');
    const first = succeeded(await wrangler.run(['deploy']), 'deploy');
    const firstVersion = /Current Version ID: (\S+)/.exec(first)?.[1];
    assert.ok(firstVersion, first);
    await servedWithin(edge, 'wrangler.test', 'hello from the bucket no secret v1', 5_000);
    // With workers_dev, also on the account's dev subdomain: wrangler prints it under workers.dev,
    // the server's dev domain is workers.localhost.
    const subdomain = /https:\/\/hello\.([a-z0-9-]+)\.workers\.dev/.exec(first)?.[1];
    assert.ok(subdomain, first);
    await servedWithin(edge, `hello.${subdomain}.workers.localhost`, 'hello from the bucket no secret v1', 5_000);

    writeProject(wrangler, { pattern: 'wrangler.test/*', zone_name: 'wrangler.test' }, 'v2');
    const second = succeeded(await wrangler.run(['deploy']), 'redeploy');
    const secondVersion = /Current Version ID: (\S+)/.exec(second)?.[1];
    assert.ok(secondVersion && secondVersion !== firstVersion, second);
    await servedWithin(edge, 'wrangler.test', 'hello from the bucket no secret v2', 5_000);

    succeeded(await wrangler.run(['secret', 'put', 'TOKEN'], { input: 's3cret' }), 'secret put');
    await servedWithin(edge, 'wrangler.test', 'hello from the bucket s3cret v2', 5_000);
    const secrets = succeeded(await wrangler.run(['secret', 'list']), 'secret list');
    assert.match(secrets, /"name": "TOKEN"/);
    assert.doesNotMatch(secrets, /s3cret/);

    const versions = succeeded(await wrangler.run(['versions', 'list']), 'versions list');
    assert.ok(versions.includes(firstVersion) && versions.includes(secondVersion), versions);
    assert.match(versions, /Source:\s+Secret Change/, 'secret put made a version of its own, as on the platform');
    const viewed = succeeded(await wrangler.run(['versions', 'view', secondVersion]), 'versions view');
    assert.match(viewed, new RegExp(`Version ID:\\s+${secondVersion}`));
    const deployments = succeeded(await wrangler.run(['deployments', 'list']), 'deployments list');
    assert.ok(deployments.includes(firstVersion) && deployments.includes(secondVersion), `${firstVersion} ${secondVersion}\n${deployments}`);

    succeeded(await wrangler.run(['secret', 'delete', 'TOKEN']), 'secret delete');
    await servedWithin(edge, 'wrangler.test', 'hello from the bucket no secret v2', 5_000);

    // wrangler tail --format json prints the requests the script serves; stopped, it closes its tail.
    // wrangler tail's WebSocket goes through HTTPS_PROXY whatever NO_PROXY says: without the harness's
    // closed proxy here (the loopback-only preload still refuses any host off this machine).
    const tail = wrangler.start(['tail', 'hello', '--format', 'json'], { env: { HTTPS_PROXY: '', HTTP_PROXY: '' } });
    let tailed = '';
    let tailErrors = '';
    tail.stdout!.on('data', (chunk: Buffer) => {
      tailed += chunk.toString();
    });
    tail.stderr!.on('data', (chunk: Buffer) => {
      tailErrors += chunk.toString();
    });
    const tailDeadline = Date.now() + 30_000;
    // Until the tail's socket is connected, requests go by untailed: ask until one is printed.
    while (!tailed.includes('/tail-me')) {
      assert.ok(Date.now() < tailDeadline, `wrangler tail printed no request within 30 s:\n${tailed}\n${tailErrors}`);
      assert.equal((await viaEdge(edge, 'wrangler.test', '/tail-me')).status, 200);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    assert.match(tailed, /"outcome": "ok"/);
    assert.match(tailed, /"scriptName": "hello"/);
    assert.match(tailed, /"url": "http:\/\/wrangler\.test\/tail-me"/);
    assert.match(tailed, /"status": 200/);
    await stopChild(tail, 10_000);
    const tailsLeft = await managementApi(apiBase, OPERATOR.email, OPERATOR.key).call<unknown[]>('GET', `/accounts/${accountId}/workers/scripts/hello/tails`);
    assert.deepEqual(tailsLeft, [], 'wrangler tail left its tail open');

    // Another account: its own deploy onto the first's zone is refused, and the first's script keeps serving.
    const bob = await secondAccount(dataDir, 'bob@example.test');
    const bobWrangler = wranglerFor(t, { apiBase, accountId: await accountIdOf(server, bob), credentials: bob });
    writeFileSync(join(bobWrangler.dir, 'greeting.txt'), 'bob');
    succeeded(await bobWrangler.run(['r2', 'bucket', 'create', 'assets']), 'bob: r2 bucket create');
    writeProject(bobWrangler, { pattern: 'wrangler.test/*', zone_id: zone.id }, 'bob');
    const taken = await bobWrangler.run(['deploy']);
    assert.notEqual(taken.code, 0, `bob's deploy onto the operator's zone succeeded:\n${taken.stdout}`);
    assert.match(taken.stderr, /Could not find a zone of your account for route pattern 'wrangler\.test\/\*'.*\[code: 10019\]/);
    await servedWithin(edge, 'wrangler.test', 'hello from the bucket no secret v2', 5_000);
    assert.deepEqual([...wrangler.refused(), ...bobWrangler.refused()], []);
  },
);

test(
  'wrangler with an API token made through /user/tokens: whoami, r2 buckets and objects; a read-only token cannot write',
  { timeout: 150_000 },
  async (t) => {
    const dataDir = join(tempDir(t), 'data');
    const server = await startEdgeport({ owner: t, dataDir, env: { EDGEPORT_ADMIN_EMAIL: OPERATOR.email, EDGEPORT_ADMIN_KEY: OPERATOR.key } });
    const apiBase = server.urls['management API']!;
    const api = managementApi(apiBase, OPERATOR.email, OPERATOR.key);
    const accountId = await accountIdOf(server, OPERATOR);
    const makeToken = async (groups: string[]) =>
      (
        await api.call<{ value: string }>('POST', '/user/tokens', {
          name: `wrangler ${groups.length}`,
          policies: [{ effect: 'allow', resources: { [`com.cloudflare.api.account.${accountId}`]: '*' }, permission_groups: groups.map((id) => ({ id })) }],
        })
      ).value;
    const ACCOUNT_READ = 'c1fde68c7bcc44588cbb6ddbc16d6480';
    const R2_WRITE = 'bf7481a1826f439697cb59a20b22293e';
    const R2_READ = 'b4992e1108244f5d8bfbd5744320c2e1';

    // No CLOUDFLARE_ACCOUNT_ID: wrangler finds the account through /memberships with the token.
    const wrangler = wranglerFor(t, { apiBase, credentials: { token: await makeToken([ACCOUNT_READ, R2_WRITE]) } });
    const whoami = succeeded(await wrangler.run(['whoami']), 'whoami with a token');
    assert.match(whoami, /API Token/);
    assert.match(whoami, new RegExp(accountId));
    succeeded(await wrangler.run(['r2', 'bucket', 'create', 'ci-artifacts']), 'r2 bucket create with a token');
    const file = join(wrangler.dir, 'build.txt');
    writeFileSync(file, 'built\n');
    succeeded(await wrangler.run(['r2', 'object', 'put', 'ci-artifacts/builds/1/build.txt', '--file', file, '--remote']), 'r2 object put with a token');
    const info = succeeded(await wrangler.run(['r2', 'bucket', 'info', 'ci-artifacts']), 'r2 bucket info with a token');
    assert.match(info, /object_count:\s+1\b/);

    const reader = wranglerFor(t, { apiBase, accountId, credentials: { token: await makeToken([R2_READ]) } });
    assert.match(succeeded(await reader.run(['r2', 'bucket', 'list']), 'r2 bucket list read-only'), /name:\s+ci-artifacts/);
    const refused = await reader.run(['r2', 'bucket', 'create', 'not-mine-to-make']);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stdout + refused.stderr, /Authentication error \[code: 10000\]/);
    assert.deepEqual([...wrangler.refused(), ...reader.refused()], [], 'wrangler tried to reach a host off this machine');
  },
);

test('wrangler reaches nothing off this machine: a non-loopback API base fails at once, through the proxy or not', { timeout: 60_000 }, async (t) => {
  const wrangler = wranglerFor(t, {
    apiBase: 'https://api.cloudflare.com/client/v4',
    accountId: '0'.repeat(32),
    credentials: { email: 'nobody@example.test', key: 'not-a-key' },
  });
  // As the harness runs it: wrangler sends the request through the proxy, a closed loopback port.
  let began = performance.now();
  const proxied = await wrangler.run(['r2', 'bucket', 'list'], { timeoutMs: 30_000 });
  assert.notEqual(proxied.code, 0);
  assert.match(proxied.stderr, /fetch failed/);
  assert.ok(performance.now() - began < 20_000, `failed after ${Math.round(performance.now() - began)} ms`);
  assert.deepEqual(wrangler.refused(), []);
  // Without the proxy variables: the preload refuses the connection itself.
  began = performance.now();
  const direct = await wrangler.run(['r2', 'bucket', 'list'], { timeoutMs: 30_000, env: { HTTP_PROXY: '', HTTPS_PROXY: '' } });
  assert.notEqual(direct.code, 0);
  assert.match(direct.stderr, /fetch failed/);
  assert.ok(performance.now() - began < 20_000, `failed after ${Math.round(performance.now() - began)} ms`);
  assert.deepEqual(wrangler.refused(), ['connect api.cloudflare.com:443']);
});
