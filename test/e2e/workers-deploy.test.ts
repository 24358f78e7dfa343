/**
 * Scripts accounts deploy through the API, end to end through `edgeport start` (SQLite, or
 * PostgreSQL under EDGEPORT_TEST_DB=postgres) with the official `cloudflare` SDK's workers.scripts
 * and workers.routes and the multipart uploads wrangler sends: a deploy with an R2 binding, vars and
 * a secret is served by the edge on its zone route and on the account's dev subdomain; a new
 * version deployed replaces it; a redeploy that throws at start is refused with 10021 and the
 * exception while the previous one keeps serving; another account can bind neither the first's
 * bucket nor route onto its zone; an upload over 10 MiB is refused by its length (10027).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { request } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { promisify } from 'node:util';
import Cloudflare from 'cloudflare';
import { startEdgeport } from '../helpers/edgeport-server.ts';
import { testDbUrl } from '../helpers/postgres.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { moduleFile, sdkFor, servedWithin, viaEdge, wranglerForm } from '../helpers/workers-upload.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ADMIN = { EDGEPORT_ADMIN_EMAIL: 'deployer@example.test', EDGEPORT_ADMIN_KEY: 'workers-deploy-admin-key-0123' };
const HEADERS = { 'x-auth-email': ADMIN.EDGEPORT_ADMIN_EMAIL, 'x-auth-key': ADMIN.EDGEPORT_ADMIN_KEY };

const V1 = `export default {
  async fetch(request, env) {
    const object = await env.ASSETS.get('greeting.txt');
    return new Response([env.GREETING, env.SETTINGS.colour, await object.text(), env.TOKEN ?? 'no secret', 'v1'].join(' '));
  },
};`;

async function refused(promise: Promise<unknown>): Promise<{ status: number; code: number; message: string }> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof Cloudflare.APIError, String(error));
    const [first] = error.errors as Array<{ code: number; message: string }>;
    return { status: error.status!, code: first!.code, message: first!.message };
  }
  assert.fail('the call succeeded');
}

test(
  'deploy through the API: served on the zone route and the dev subdomain, redeployed, a broken redeploy refused, tenancy held',
  { timeout: 240_000 },
  async (t) => {
    const dataDir = join(tempDir(t), 'data');
    const dbUrl = await testDbUrl(t);
    const env = { ...ADMIN, ...(dbUrl ? { EDGEPORT_DB_URL: dbUrl } : {}) };
    const server = await startEdgeport({ owner: t, dataDir, env });
    const apiUrl = server.urls['management API']!;
    const edgeUrl = server.urls.edge!;
    const client = sdkFor(apiUrl, ADMIN.EDGEPORT_ADMIN_EMAIL, ADMIN.EDGEPORT_ADMIN_KEY);
    const [account] = (await client.accounts.list()).result;
    const account_id = account!.id;

    const zone = await client.zones.create({ account: { id: account_id }, name: 'deploy.test' });
    await client.r2.buckets.create({ account_id, name: 'assets' });
    const put = await fetch(`${apiUrl}/accounts/${account_id}/r2/buckets/assets/objects/greeting.txt`, {
      method: 'PUT',
      headers: HEADERS,
      body: 'from the bucket',
    });
    assert.equal(put.status, 200, await put.text());

    // The SDK's upload: metadata as an object (sent as bracketed form fields), the module as a file.
    const uploaded = await client.workers.scripts.update('hello', {
      account_id,
      metadata: {
        main_module: 'index.js',
        compatibility_date: '2025-01-01',
        bindings: [
          { type: 'r2_bucket', name: 'ASSETS', bucket_name: 'assets' },
          { type: 'plain_text', name: 'GREETING', text: 'hello' },
          { type: 'json', name: 'SETTINGS', json: { colour: 'green' } } as never,
        ],
      },
      files: [await moduleFile(V1)],
    });
    assert.equal(uploaded.id, 'hello');
    assert.match(String(uploaded.etag), /^[0-9a-f]{64}$/);
    const route = await client.workers.routes.create({ zone_id: zone.id, pattern: 'deploy.test/*', script: 'hello' });
    assert.equal(route.pattern, 'deploy.test/*');
    await servedWithin(edgeUrl, 'deploy.test', 'hello green from the bucket no secret v1', 5_000);

    const listed = [];
    for await (const script of client.workers.scripts.list({ account_id })) listed.push(script.id);
    assert.deepEqual(listed, ['hello']);
    assert.equal(await client.workers.scripts.get('hello', { account_id }), V1);
    assert.deepEqual(
      (await client.workers.routes.list({ zone_id: zone.id })).result.map((r) => [r.pattern, r.script]),
      [['deploy.test/*', 'hello']],
    );

    // A secret reaches env; its value is never answered.
    await client.workers.scripts.secrets.update('hello', { account_id, name: 'TOKEN', text: 's3cret', type: 'secret_text' });
    const secrets = [];
    for await (const secret of client.workers.scripts.secrets.list('hello', { account_id })) secrets.push(secret);
    assert.deepEqual(secrets, [{ name: 'TOKEN', type: 'secret_text' }]);
    await servedWithin(edgeUrl, 'deploy.test', 'hello green from the bucket s3cret v1', 2_000);

    // The dev subdomain: <script>.<account subdomain>.workers.localhost.
    const subdomain = (await (await fetch(`${apiUrl}/accounts/${account_id}/workers/subdomain`, { headers: HEADERS })).json()) as {
      result: { subdomain: string };
    };
    assert.equal(subdomain.result.subdomain, 'deployer');
    await servedWithin(edgeUrl, 'hello.deployer.workers.localhost', 'hello green from the bucket s3cret v1', 2_000);

    // wrangler's redeploy: a version (multipart as wrangler sends it, bindings inherited), then a deployment of it.
    const versionResponse = await fetch(`${apiUrl}/accounts/${account_id}/workers/scripts/hello/versions?bindings_inherit=strict`, {
      method: 'POST',
      headers: HEADERS,
      body: wranglerForm(V1.replace("'v1'", "'v2'"), {
        bindings: [
          { type: 'inherit', name: 'ASSETS' },
          { type: 'inherit', name: 'GREETING' },
          { type: 'inherit', name: 'SETTINGS' },
        ],
      }),
    });
    const version = (await versionResponse.json()) as { success: boolean; result: { id: string; number: number; resources: { script: { etag: string } } } };
    assert.ok(version.success, JSON.stringify(version));
    assert.equal(version.result.number, 3, 'the secret change made version 2');
    assert.match(version.result.resources.script.etag, /^[0-9a-f]{64}$/);
    assert.equal((await viaEdge(edgeUrl, 'deploy.test')).body, 'hello green from the bucket s3cret v1', 'an uploaded version serves only once deployed');
    const deployment = await client.workers.scripts.deployments.create('hello', {
      account_id,
      strategy: 'percentage',
      versions: [{ version_id: version.result.id, percentage: 100 }],
    });
    assert.deepEqual(deployment.versions, [{ version_id: version.result.id, percentage: 100 }]);
    await servedWithin(edgeUrl, 'deploy.test', 'hello green from the bucket s3cret v2', 2_000);
    const versions = [];
    const triggers = new Map<number, unknown>();
    for await (const item of client.workers.scripts.versions.list('hello', { account_id })) {
      versions.push(item.number);
      triggers.set(item.number!, (item as unknown as { annotations?: Record<string, unknown> }).annotations?.['workers/triggered_by']);
    }
    assert.deepEqual(versions, [3, 2, 1]);
    assert.deepEqual([...triggers.values()], ['upload', 'secret', 'upload'], 'a secret change is a version of its own, as on the platform');
    const deployments = (await (await fetch(`${apiUrl}/accounts/${account_id}/workers/scripts/hello/deployments`, { headers: HEADERS })).json()) as {
      result: { deployments: Array<{ versions: Array<{ version_id: string }> }> };
    };
    assert.equal(deployments.result.deployments.length, 3);
    assert.equal(deployments.result.deployments[0]!.versions[0]!.version_id, version.result.id);

    // A redeploy that cannot start: refused with the exception, and v2 keeps serving.
    const syntax = await refused(
      client.workers.scripts.update('hello', {
        account_id,
        metadata: { main_module: 'index.js', compatibility_date: '2025-01-01' },
        files: [await moduleFile('export default { fetch( {')],
      }),
    );
    assert.deepEqual([syntax.status, syntax.code], [400, 10021]);
    assert.match(syntax.message, /^Uncaught SyntaxError: /);
    const throwing = await refused(
      client.workers.scripts.update('hello', {
        account_id,
        metadata: { main_module: 'index.js', compatibility_date: '2025-01-01' },
        files: [await moduleFile('throw new Error("no config"); export default {};')],
      }),
    );
    assert.deepEqual([throwing.code, throwing.message.split('\n')[0]], [10021, 'Uncaught Error: no config']);
    assert.equal((await viaEdge(edgeUrl, 'deploy.test')).body, 'hello green from the bucket s3cret v2');
    assert.deepEqual(versions.length, 3);

    const kv = await refused(
      client.workers.scripts.update('hello', {
        account_id,
        metadata: { main_module: 'index.js', bindings: [{ type: 'kv_namespace', name: 'KV', namespace_id: 'x' }] },
        files: [await moduleFile(V1)],
      }),
    );
    assert.equal(kv.code, 10021);
    assert.match(kv.message, /type "kv_namespace", which this server does not support: use r2_bucket, plain_text, secret_text, json/);

    // Missing scripts, as wrangler's first deploy asks.
    const service = await fetch(`${apiUrl}/accounts/${account_id}/workers/services/nothing`, { headers: HEADERS });
    assert.equal(service.status, 404);
    assert.equal(((await service.json()) as { errors: Array<{ code: number }> }).errors[0]!.code, 10090);
    for (const path of ['secrets', 'deployments']) {
      const missing = await fetch(`${apiUrl}/accounts/${account_id}/workers/scripts/nothing/${path}`, { headers: HEADERS });
      assert.equal(missing.status, 404);
      assert.equal(((await missing.json()) as { errors: Array<{ code: number }> }).errors[0]!.code, 10007);
    }

    // Over 10 MiB: refused by its Content-Length before the body is read.
    const tooLarge = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const url = new URL(`${apiUrl}/accounts/${account_id}/workers/scripts/big`);
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'PUT',
          headers: { ...HEADERS, 'content-type': 'multipart/form-data; boundary=x', 'content-length': String(11 * 1024 * 1024) },
        },
        (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => {
            body += chunk.toString();
          });
          res.on('end', () => {
            req.destroy();
            resolve({ status: res.statusCode ?? 0, body });
          });
        },
      );
      req.on('error', reject);
      req.write('--x\r\n');
    });
    assert.equal(tooLarge.status, 413);
    assert.equal((JSON.parse(tooLarge.body) as { errors: Array<{ code: number }> }).errors[0]!.code, 10027);

    // Another account: cannot bind the first's bucket, nor route onto its zone.
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [join(ROOT, 'bin/edgeport.js'), 'accounts', 'create', 'other@example.test', '--data-dir', dataDir],
      { env: { ...process.env, ...(dbUrl ? { EDGEPORT_DB_URL: dbUrl } : {}) } },
    );
    const otherKey = /X-Auth-Key: +(\S+)/.exec(stdout)?.[1];
    assert.ok(otherKey, stdout);
    const other = sdkFor(apiUrl, 'other@example.test', otherKey);
    const [otherAccount] = (await other.accounts.list()).result;
    const bucket = await refused(
      other.workers.scripts.update('thief', {
        account_id: otherAccount!.id,
        metadata: { main_module: 'index.js', bindings: [{ type: 'r2_bucket', name: 'ASSETS', bucket_name: 'assets' }] },
        files: [await moduleFile(V1)],
      }),
    );
    assert.deepEqual([bucket.status, bucket.code], [400, 10085]);
    await other.workers.scripts.update('squatter', {
      account_id: otherAccount!.id,
      metadata: { main_module: 'index.js' },
      files: [await moduleFile('export default { fetch() { return new Response("squatted"); } };')],
    });
    const onTheirZone = await fetch(`${apiUrl}/accounts/${otherAccount!.id}/workers/scripts/squatter/routes`, {
      method: 'PUT',
      headers: { 'x-auth-email': 'other@example.test', 'x-auth-key': otherKey, 'content-type': 'application/json' },
      body: JSON.stringify([{ pattern: 'deploy.test/other/*', zone_name: 'deploy.test' }]),
    });
    assert.equal(onTheirZone.status, 400);
    assert.equal(((await onTheirZone.json()) as { errors: Array<{ code: number }> }).errors[0]!.code, 10019);
    const viaZoneId = await refused(other.workers.routes.create({ zone_id: zone.id, pattern: 'deploy.test/other/*', script: 'squatter' }));
    assert.deepEqual([viaZoneId.status, viaZoneId.code], [404, 7003]);
    const otherScripts = [];
    for await (const script of other.workers.scripts.list({ account_id: otherAccount!.id })) otherScripts.push(script.id);
    assert.deepEqual(otherScripts, ['squatter']);
    const notTheirs = await refused(other.workers.scripts.delete('hello', { account_id: otherAccount!.id }));
    assert.deepEqual([notTheirs.status, notTheirs.code], [404, 10007]);
    assert.equal((await viaEdge(edgeUrl, 'deploy.test', '/other/x')).body, 'hello green from the bucket s3cret v2');

    // A pattern another route holds is refused.
    const duplicate = await refused(client.workers.routes.create({ zone_id: zone.id, pattern: 'deploy.test/*', script: 'hello' }));
    assert.deepEqual([duplicate.status, duplicate.code], [400, 10020]);

    await client.workers.scripts.delete('hello', { account_id });
    assert.deepEqual((await client.workers.routes.list({ zone_id: zone.id })).result, []);
    const start = performance.now();
    while ((await viaEdge(edgeUrl, 'deploy.test')).status === 200) {
      assert.ok(performance.now() - start < 2_000, 'a deleted script stops serving within 2 s');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  },
);
