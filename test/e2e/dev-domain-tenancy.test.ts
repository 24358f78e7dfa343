/**
 * The dev domain is the platform's, through `edgeport start` with the official `cloudflare` SDK and
 * wrangler, an attacker (mallory) beside an honest account (alice) and the operator:
 *
 * - First run, `[workers] dev_domain = "dev.localhost"`: mallory makes the zones `workers.localhost`
 *   and `alice.workers.localhost` (ordinary names then), routes `*.workers.localhost/*` and
 *   `hello.alice.workers.localhost/*` to her script, and log jobs (file://) with custom fields for
 *   the `authorization` header and the `session` cookie; her capture works on that run.
 * - Second run, on the default `workers.localhost` (the operator moved the dev domain over her
 *   zones, as data made before names there were refused): alice's script is served at
 *   `hello.alice.workers.localhost`, never mallory's; none of alice's dev-host requests reaches any
 *   of mallory's log jobs (nor any other job); every new attempt (zones `workers.localhost`,
 *   `alice.workers.localhost`, `hello.alice.workers.localhost`, for the operator too; routes
 *   `hello.alice.workers.localhost/*` and `*.workers.localhost/*`; custom domains through the API
 *   and through `wrangler deploy`) is refused with its code, printed; alice's own zone, route and
 *   log job work beside it.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import Cloudflare from 'cloudflare';
import { until } from '../helpers/delivered-logs.ts';
import { createFileJob, fileLines, type LogLine } from '../helpers/edge-logs-setup.ts';
import { startEdgeport, type EdgeportServer } from '../helpers/edgeport-server.ts';
import { managementApi, type ApiClient } from '../helpers/management-api.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { moduleFile, sdkFor, servedWithin } from '../helpers/workers-upload.ts';
import { wranglerFor } from '../helpers/wrangler.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const OPERATOR = { email: 'operator@example.test', key: 'dev-domain-operator-key-0123' };
const FIELDS = ['RayID', 'ClientRequestHost', 'ClientRequestPath', 'EdgeResponseStatus', 'RequestHeaders', 'Cookies'];
/** What alice sends to her dev host on the second run: neither may reach any log job. */
const ALICE_SECRET = 'Bearer alice-dev-secret-7f3a';
const ALICE_SESSION = 'alice-session-91c2';

interface Who {
  email: string;
  key: string;
  accountId: string;
  sdk: Cloudflare;
  api: ApiClient;
}

async function newAccount(dataDir: string, email: string): Promise<{ email: string; key: string }> {
  const { stdout } = await promisify(execFile)(process.execPath, [join(ROOT, 'bin/edgeport.js'), 'accounts', 'create', email, '--data-dir', dataDir], {
    timeout: 60_000,
  });
  const key = /X-Auth-Key: +(\S+)/.exec(stdout)?.[1];
  assert.ok(key, stdout);
  return { email, key };
}

async function as(server: EdgeportServer, credentials: { email: string; key: string }): Promise<Who> {
  const apiUrl = server.urls['management API']!;
  const sdk = sdkFor(apiUrl, credentials.email, credentials.key);
  const [account] = (await sdk.accounts.list()).result;
  return { ...credentials, accountId: account!.id, sdk, api: managementApi(apiUrl, credentials.email, credentials.key) };
}

/** GET through the edge with Host `host` and more headers. */
function edgeGet(edge: string, host: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const url = new URL(edge);
    const req = request({ host: url.hostname, port: url.port, path, headers: { ...headers, host } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** The SDK call's refusal: status, envelope code and message. */
async function refusal(promise: Promise<unknown>): Promise<{ status: number; code: number; message: string }> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof Cloudflare.APIError, String(error));
    const [first] = error.errors as Array<{ code: number; message: string }>;
    return { status: error.status!, code: first!.code, message: first!.message };
  }
  assert.fail('the call succeeded');
}

/** A raw API call's refusal (the paths wrangler uses that the SDK has no method for). */
async function rawRefusal(
  server: EdgeportServer,
  who: Who,
  method: string,
  path: string,
  body: unknown,
): Promise<{ status: number; code: number; message: string }> {
  const response = await fetch(`${server.urls['management API']}${path}`, {
    method,
    headers: { 'x-auth-email': who.email, 'x-auth-key': who.key, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const envelope = (await response.json()) as { success: boolean; errors: Array<{ code: number; message: string }> };
  assert.equal(envelope.success, false, `${method} ${path} succeeded`);
  return { status: response.status, code: envelope.errors[0]!.code, message: envelope.errors[0]!.message };
}

const refusals: string[] = [];
function refused(what: string, answer: { status: number; code: number; message: string }, code: number, message: RegExp): void {
  refusals.push(`${what}: ${answer.status} / ${answer.code} ${answer.message}`);
  assert.equal(answer.status, 400, what);
  assert.equal(answer.code, code, `${what}: ${answer.message}`);
  assert.match(answer.message, message, what);
}

/** Custom fields for the authorization header and the session cookie, and a file:// job writing below `dir`. */
async function captureJob(api: ApiClient, zoneId: string, dir: string): Promise<void> {
  await api.call('PUT', `/zones/${zoneId}/rulesets/phases/http_log_custom_fields/entrypoint`, {
    rules: [
      {
        action: 'log_custom_field',
        expression: 'true',
        action_parameters: { request_fields: [{ name: 'authorization' }], cookie_fields: [{ name: 'session' }] },
      },
    ],
  });
  mkdirSync(dir, { recursive: true });
  await createFileJob(api, zoneId, dir, { output_options: { field_names: FIELDS } });
}

async function deploy(who: Who, name: string, source: string): Promise<void> {
  await who.sdk.workers.scripts.update(name, {
    account_id: who.accountId,
    metadata: { main_module: 'index.js', compatibility_date: '2025-01-01' },
    files: [await moduleFile(source)],
  });
}

const ALICE_SCRIPT = 'export default { fetch(request) { return new Response("alice serves " + new URL(request.url).pathname); } };';
const THIEF_SCRIPT = 'export default { fetch(request) { return new Response("mallory got " + (request.headers.get("authorization") ?? "nothing")); } };';

test(
  "the dev domain is the platform's: zones, routes and custom domains under it refused, its requests never routed or logged to another account",
  { timeout: 300_000 },
  async (t) => {
    const dir = tempDir(t);
    const dataDir = join(dir, 'data');
    const logs = (name: string) => join(dir, 'logs', name);
    const env = {
      EDGEPORT_ADMIN_EMAIL: OPERATOR.email,
      EDGEPORT_ADMIN_KEY: OPERATOR.key,
      EDGEPORT_LOGS_FILE_ROOTS: dir,
      EDGEPORT_LOGS_MAX_BATCH_INTERVAL_MS: '200',
    };
    const firstConfig = join(dir, 'first.toml');
    writeFileSync(firstConfig, '[workers]\ndev_domain = "dev.localhost"\n');

    // First run: the dev domain is dev.localhost, so workers.localhost is an ordinary name.
    const first = await startEdgeport({ owner: t, dataDir, env, args: ['--config', firstConfig] });
    const aliceKey = await newAccount(dataDir, 'alice@example.test');
    const malloryKey = await newAccount(dataDir, 'mallory@example.test');
    let alice = await as(first, aliceKey);
    let mallory = await as(first, malloryKey);
    await deploy(alice, 'hello', ALICE_SCRIPT);
    const { subdomain } = await alice.api.call<{ subdomain: string }>('GET', `/accounts/${alice.accountId}/workers/subdomain`);
    assert.equal(subdomain, 'alice');
    await servedWithin(first.urls.edge!, 'hello.alice.dev.localhost', 'alice serves /', 5_000);

    await deploy(mallory, 'thief', THIEF_SCRIPT);
    const squatted = await mallory.sdk.zones.create({ account: { id: mallory.accountId }, name: 'workers.localhost' });
    const squattedSub = await mallory.sdk.zones.create({ account: { id: mallory.accountId }, name: 'alice.workers.localhost' });
    await mallory.sdk.workers.routes.create({ zone_id: squatted.id, pattern: '*.workers.localhost/*', script: 'thief' });
    await mallory.sdk.workers.routes.create({ zone_id: squatted.id, pattern: 'hello.alice.workers.localhost/*', script: 'thief' });
    await captureJob(mallory.api, squatted.id, logs('mallory-squatted'));
    await captureJob(mallory.api, squattedSub.id, logs('mallory-squatted-sub'));
    // On this run the names are mallory's zone's, and her capture works: the request, its Authorization and session in her job.
    await servedWithin(first.urls.edge!, 'hello.alice.workers.localhost', 'mallory got nothing', 5_000);
    const probe = await edgeGet(first.urls.edge!, 'hello.alice.workers.localhost', '/first-run', {
      authorization: 'Bearer first-run',
      cookie: 'session=first-run',
    });
    assert.deepEqual(probe, { status: 200, body: 'mallory got Bearer first-run' });
    const captured = await until(
      () => fileLines(logs('mallory-squatted-sub')).filter((line) => line.ClientRequestPath === '/first-run'),
      (lines) => lines.length === 1,
      "mallory's first-run line",
    );
    assert.deepEqual([captured[0]!.RequestHeaders, captured[0]!.Cookies], [{ authorization: 'Bearer first-run' }, { session: 'first-run' }]);
    assert.equal(await first.stop(), 0);

    // Second run: the default dev domain, workers.localhost, over mallory's zones, routes and jobs.
    const server = await startEdgeport({ owner: t, dataDir, env });
    const edge = server.urls.edge!;
    alice = await as(server, aliceKey);
    mallory = await as(server, malloryKey);
    const operator = await as(server, OPERATOR);

    // The edge resolves the dev host before any zone: alice's script, whatever mallory's zones and routes say.
    await servedWithin(edge, 'hello.alice.workers.localhost', 'alice serves /', 10_000);
    for (const host of ['workers.localhost', 'alice.workers.localhost', 'nobody.alice.workers.localhost']) {
      const answer = await edgeGet(edge, host, '/probe-2', { authorization: ALICE_SECRET });
      assert.equal(answer.status, 404, `${host}: ${answer.body}`);
      assert.match(
        answer.body,
        /^error 404: nothing is served at "[a-z.]+": under workers\.localhost, only <script>\.<account subdomain>\.workers\.localhost serves/,
      );
    }

    // Every new attempt is refused, the operator's too.
    const reservedZone = (name: string) =>
      new RegExp(
        `^${name.replaceAll('.', '\\.')} is not available: workers\\.localhost and the names under it belong to this server, which serves each account's scripts at <script>\\.<account subdomain>\\.workers\\.localhost; choose another name$`,
      );
    for (const name of ['workers.localhost', 'alice.workers.localhost', 'hello.alice.workers.localhost']) {
      refused(`mallory: zone ${name}`, await refusal(mallory.sdk.zones.create({ account: { id: mallory.accountId }, name })), 1061, reservedZone(name));
    }
    refused(
      'operator: zone workers.localhost',
      await refusal(operator.sdk.zones.create({ account: { id: operator.accountId }, name: 'Workers.Localhost' })),
      1061,
      reservedZone('workers.localhost'),
    );
    const ownZone = await mallory.sdk.zones.create({ account: { id: mallory.accountId }, name: 'mallory.test' });
    const reservedRoute = (pattern: string) =>
      new RegExp(
        `^Invalid route pattern '${pattern.replaceAll('.', '\\.').replaceAll('*', '\\*')}': it would match hosts of workers\\.localhost, which belong to this server`,
      );
    for (const [zone, pattern] of [
      [squatted, 'hello.alice.workers.localhost/*'],
      [squatted, '*.workers.localhost/*'],
      [ownZone, 'hello.alice.workers.localhost/*'],
      [ownZone, '*.workers.localhost/*'],
    ] as const) {
      refused(
        `mallory: route ${pattern} on her zone ${zone.name}`,
        await refusal(mallory.sdk.workers.routes.create({ zone_id: zone.id, pattern, script: 'thief' })),
        10022,
        reservedRoute(pattern),
      );
    }
    refused(
      'mallory: custom domain hello.alice.workers.localhost (PUT .../domains/records)',
      await rawRefusal(server, mallory, 'PUT', `/accounts/${mallory.accountId}/workers/scripts/thief/domains/records`, {
        origins: [{ hostname: 'hello.alice.workers.localhost' }],
      }),
      10022,
      reservedRoute('hello.alice.workers.localhost/*'),
    );
    refused(
      'mallory: script routes with custom_domain (PUT .../routes)',
      await rawRefusal(server, mallory, 'PUT', `/accounts/${mallory.accountId}/workers/scripts/thief/routes`, [
        { pattern: 'alice.workers.localhost', custom_domain: true },
      ]),
      10022,
      reservedRoute('alice.workers.localhost/*'),
    );
    // wrangler deploy with a custom domain under the dev domain: refused, and nothing of alice's changes.
    const wrangler = wranglerFor(t, { apiBase: server.urls['management API']!, accountId: mallory.accountId, credentials: mallory });
    writeFileSync(join(wrangler.dir, 'index.js'), THIEF_SCRIPT);
    writeFileSync(
      join(wrangler.dir, 'wrangler.json'),
      JSON.stringify({
        name: 'thief',
        main: 'index.js',
        compatibility_date: '2025-01-01',
        workers_dev: false,
        routes: [{ pattern: 'hello.alice.workers.localhost', custom_domain: true }],
      }),
    );
    const deployed = await wrangler.run(['deploy']);
    assert.notEqual(deployed.code, 0, `wrangler deploy of a custom domain under the dev domain succeeded:\n${deployed.stdout}`);
    assert.match(deployed.stderr, /it would match hosts of workers\.localhost, which belong to this server.*\[code: 10022\]/s);
    refusals.push(
      `mallory: wrangler deploy with custom domain hello.alice.workers.localhost: exit ${deployed.code}, ${/\[code: \d+\]/.exec(deployed.stderr)?.[0]}`,
    );
    assert.deepEqual(wrangler.refused(), []);

    // What the API shows of mallory's zones from before: they are hers as they were (listed, with
    // their routes and jobs, which she may delete), and they get nothing.
    const listed = (await mallory.sdk.zones.list()).result.map((zone) => zone.name).sort();
    assert.deepEqual(listed, ['alice.workers.localhost', 'mallory.test', 'workers.localhost']);
    assert.deepEqual((await mallory.sdk.workers.routes.list({ zone_id: squatted.id })).result.map((route) => route.pattern).sort(), [
      '*.workers.localhost/*',
      'hello.alice.workers.localhost/*',
    ]);

    // Alice: her own zone, route and job, beside her dev host.
    const aliceZone = await alice.sdk.zones.create({ account: { id: alice.accountId }, name: 'alice-shop.test' });
    await alice.sdk.workers.routes.create({ zone_id: aliceZone.id, pattern: 'alice-shop.test/*', script: 'hello' });
    await captureJob(alice.api, aliceZone.id, logs('alice'));
    await captureJob(mallory.api, ownZone.id, logs('mallory-own'));
    await servedWithin(edge, 'alice-shop.test', 'alice serves /', 5_000);

    // The honest traffic: alice's visitors on her dev host, with her Authorization and session cookie.
    for (let i = 0; i < 20; i++) {
      const answer = await edgeGet(edge, 'hello.alice.workers.localhost', `/dev/${i}`, {
        authorization: ALICE_SECRET,
        cookie: `session=${ALICE_SESSION}; theme=dark`,
      });
      assert.deepEqual(answer, { status: 200, body: `alice serves /dev/${i}` });
    }
    // Then one request on alice's zone and one on mallory's own: once both are delivered, anything the dev-host requests made would be too.
    assert.deepEqual(await edgeGet(edge, 'alice-shop.test', '/shop', { authorization: 'Bearer alice-shop', cookie: 'session=alice-shop' }), {
      status: 200,
      body: 'alice serves /shop',
    });
    assert.equal((await edgeGet(edge, 'mallory.test', '/own')).status, 530, 'mallory.test has no origin');
    const aliceLines = await until(
      () => fileLines(logs('alice')),
      (lines) => lines.some((line) => line.ClientRequestPath === '/shop'),
      "alice's own line",
    );
    const malloryOwn = await until(
      () => fileLines(logs('mallory-own')),
      (lines) => lines.some((line) => line.ClientRequestPath === '/own'),
      "mallory's own line",
    );
    // Two more batch intervals for anything late.
    await new Promise((resolve) => setTimeout(resolve, 1_000));

    // (The `/` lines are servedWithin's polls of alice-shop.test.)
    assert.deepEqual(
      fileLines(logs('alice'))
        .filter((line) => line.ClientRequestPath !== '/')
        .map((line) => [line.ClientRequestHost, line.ClientRequestPath, line.RequestHeaders, line.Cookies]),
      [['alice-shop.test', '/shop', { authorization: 'Bearer alice-shop' }, { session: 'alice-shop' }]],
      "alice's job has her zone's request with her fields, and none of her dev-host requests (they belong to no zone)",
    );
    assert.ok(aliceLines.every((line) => line.ClientRequestHost === 'alice-shop.test'));
    assert.deepEqual(
      fileLines(logs('mallory-own')).map((line) => line.ClientRequestPath),
      ['/own'],
    );
    assert.equal(malloryOwn.length, 1);
    // Nothing of the second run's dev-host requests (their paths, alice's secret and session) in any of mallory's jobs.
    const leaked = (name: string) =>
      fileLines(logs(name)).filter(
        (line: LogLine) =>
          /^\/(dev\/\d+|probe-2)$/.test(line.ClientRequestPath) ||
          JSON.stringify(line).includes('alice-dev-secret') ||
          JSON.stringify(line).includes(ALICE_SESSION),
      );
    for (const name of ['mallory-squatted', 'mallory-squatted-sub', 'mallory-own']) {
      assert.deepEqual(leaked(name), [], `mallory's job ${name} got alice's dev-host requests`);
    }
    process.stdout.write(`refused:\n${refusals.map((line) => `  ${line}`).join('\n')}\n`);
    process.stdout.write(
      `20 dev-host requests of alice's (Authorization and session cookie): 20 served by her script; lines in mallory's jobs: ${['mallory-squatted', 'mallory-squatted-sub', 'mallory-own'].map((name) => `${name} ${fileLines(logs(name)).length} lines, ${leaked(name).length} of them alice's`).join(', ')}; alice's job: ${fileLines(logs('alice')).length} (her zone's)\n`,
    );
    assert.equal(await server.stop(), 0);
  },
);
