/**
 * What the management API adds for the web dashboard, in process: its files served outside
 * /client/v4 (index.html for page paths, a clear page when the build is missing, a strict CSP
 * that admits the gateway), the gateway's networks with their state, endpoint and call counts,
 * and the newest lines a store:// log job delivered, read back.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { createApiService } from '../../src/api/index.ts';
import { silentLogger } from '../../src/core/log.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { startApi, type ApiFixture } from './helpers.ts';

const GATEWAY = {
  url: () => 'http://0.0.0.0:8545',
  networks: () => [
    { name: 'sepolia', chainId: 11155111, retiredOn: undefined, replacement: undefined, retired: false, backend: 'embedded' as const, requests: 7 },
    { name: 'rinkeby', chainId: 4, retiredOn: '2023-01-30', replacement: 'sepolia', retired: true, backend: 'embedded' as const, requests: 2 },
  ],
};

async function service(api: ApiFixture, dashboardDir: string) {
  return createApiService({
    control: api.control,
    accessKeys: api.accessKeys,
    clock: api.clock,
    logger: silentLogger,
    store: api.engine,
    dashboardDir,
    gateway: GATEWAY,
  });
}

test("the dashboard's files: assets by path, index.html for page paths, a clear page when unbuilt; the API keeps its paths", { timeout: 10_000 }, async (t) => {
  const api = await startApi(t);
  const dist = tempDir(t);
  mkdirSync(join(dist, 'assets'));
  writeFileSync(join(dist, 'index.html'), '<!doctype html><title>dash</title>');
  writeFileSync(join(dist, 'assets', 'app-1234.js'), 'console.log(1)');
  const served = await service(api, dist);
  const get = (path: string, host = '127.0.0.1:8081') => served.fetch(new Request(`http://${host}${path}`));

  for (const path of ['/', '/zones', '/buckets/photos']) {
    const page = await get(path);
    assert.equal(page.status, 200, path);
    assert.equal(await page.text(), '<!doctype html><title>dash</title>');
    assert.equal(page.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.equal(page.headers.get('x-frame-options'), 'DENY');
    // A wildcard listen address becomes the host the browser used.
    assert.match(page.headers.get('content-security-policy')!, /connect-src 'self' http:\/\/127\.0\.0\.1:8545;/);
    assert.match(page.headers.get('content-security-policy')!, /script-src 'self';/);
  }
  const asset = await get('/assets/app-1234.js');
  assert.equal(asset.headers.get('content-type'), 'text/javascript; charset=utf-8');
  assert.match(asset.headers.get('cache-control')!, /immutable/);
  assert.equal((await get('/assets/missing.js')).status, 404);
  assert.equal((await get('/assets/..%2f..%2f..%2fpackage.json')).status, 404, "nothing outside the dashboard's directory");
  const api404 = await get('/client/v4/nothing');
  assert.equal(api404.status, 400, "unknown API paths keep the API's answer");
  assert.equal(((await api404.json()) as { errors: Array<{ code: number }> }).errors[0]!.code, 7000);

  const unbuilt = await service(api, join(dist, 'not-built'));
  const missing = await unbuilt.fetch(new Request('http://127.0.0.1:8081/'));
  assert.equal(missing.status, 503);
  assert.match(await missing.text(), /The dashboard has not been built.*npm run build/s);
});

test('gateway networks: state, replacement, endpoint and calls; none without a gateway', { timeout: 30_000 }, async (t) => {
  const api = await startApi(t);
  const served = await service(api, tempDir(t));
  const answer = await served.fetch(
    new Request(`http://localhost:8081/client/v4/accounts/${api.admin.accountId}/gateway/networks`, {
      headers: { 'x-auth-email': api.admin.email, 'x-auth-key': api.admin.key },
    }),
  );
  const body = (await answer.json()) as { result: unknown[] };
  assert.deepEqual(body.result, [
    {
      name: 'sepolia',
      chain_id: 11155111,
      state: 'served',
      retired_on: null,
      replacement: null,
      backend: 'embedded',
      endpoint: 'http://localhost:8545/v1/sepolia',
      requests_total: 7,
      sampled_at: new Date(api.clock.now()).toISOString(),
    },
    {
      name: 'rinkeby',
      chain_id: 4,
      state: 'retired',
      retired_on: '2023-01-30',
      replacement: 'sepolia',
      backend: 'embedded',
      endpoint: 'http://localhost:8545/v1/rinkeby',
      requests_total: 2,
      sampled_at: new Date(api.clock.now()).toISOString(),
    },
  ]);
  const without = await api.call(`/accounts/${api.admin.accountId}/gateway/networks`);
  assert.deepEqual(without.body.result, []);
});

test("a store:// job's newest delivered lines are read back from its newest batch", { timeout: 10_000 }, async (t) => {
  const api = await startApi(t);
  const zone = (await api.call('/zones', { method: 'POST', json: { name: 'lines.example.test' } })).body.result;
  const destination = 'store://test-bucket/logs/{DATE}';
  const challenge = await api.call(`/zones/${zone.id}/logshipping/ownership`, { method: 'POST', json: { destination_conf: destination } });
  assert.equal(challenge.body.result.filename, 'test-bucket/logs/ownership-challenge.txt');
  const token = await (await api.store.get('test-bucket', 'logs/ownership-challenge.txt'))!.body!.stream()[Symbol.asyncIterator]().next();
  const job = (
    await api.call(`/zones/${zone.id}/logshipping/jobs`, {
      method: 'POST',
      json: { destination_conf: destination, ownership_challenge: Buffer.from(token.value!).toString(), enabled: true },
    })
  ).body.result;
  const delivered = `/zones/${zone.id}/logshipping/jobs/${job.id}/delivered`;
  assert.deepEqual((await api.call(delivered)).body.result, { batch: null, delivered_on: null, lines: [] });

  const batch = (lines: string[]) => gzipSync(lines.map((l) => `${l}\n`).join(''));
  await api.store.put('test-bucket', 'logs/20261122/20261122T110000Z_20261122T110001Z_aaaa0000.log.gz', batch(['{"n":1}']));
  api.clock.advance(1000);
  await api.store.put('test-bucket', 'logs/20261122/20261122T120000Z_20261122T120001Z_bbbb0000.log.gz', batch(['{"n":2}', '{"n":3}', '{"n":4}']));
  const read = await api.call(`${delivered}?lines=2`);
  assert.equal(read.status, 200, JSON.stringify(read.body));
  assert.deepEqual(read.body.result, {
    batch: 'test-bucket/logs/20261122/20261122T120000Z_20261122T120001Z_bbbb0000.log.gz',
    delivered_on: new Date(api.clock.now()).toISOString(),
    lines: ['{"n":3}', '{"n":4}'],
  });
  assert.equal((await api.call(`${delivered}?lines=0`)).status, 400);
});
