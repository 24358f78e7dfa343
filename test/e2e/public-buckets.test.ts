/**
 * Public buckets through `edgeport start`, read with curl as a visitor would: a bucket's managed
 * public URL (`pub-<id>.r2.localhost` on the edge's port, which curl resolves to this machine) and
 * a custom domain on the account's zone serve GET and HEAD with ranges and conditional requests,
 * answer browsers from the bucket's CORS rules, and refuse writes; the custom domain's requests
 * are shipped by the zone's log job like any other; turning the URL off, detaching the domain or
 * deleting and making the bucket again stops them;
 * another account can neither attach its own domain on that zone nor read the bucket's settings;
 * no zone may be made under the public domain.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { ADMIN, apiOf, createFileJob, fileLines, startServer } from '../helpers/edge-logs-setup.ts';
import { until } from '../helpers/delivered-logs.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BODY = 'hello, public world: 0123456789';

interface Curl {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** curl `url` (extra arguments first): status, headers (lower-case, last wins) and body. */
async function curl(url: string, ...args: string[]): Promise<Curl> {
  const { stdout } = await run('curl', ['-s', '-i', '--max-time', '20', ...args, url], { timeout: 30_000, maxBuffer: 1 << 20 });
  const split = stdout.indexOf('\r\n\r\n');
  const head = stdout.slice(0, split).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of head.slice(1)) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(head[0]!.split(' ')[1]), headers, body: stdout.slice(split + 4) };
}

async function api(
  base: string,
  method: string,
  path: string,
  who: { email: string; key: string },
  body?: unknown,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- envelope shapes
): Promise<{ status: number; json: { success: boolean; result: any; errors: Array<{ code: number; message: string }> } }> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { 'x-auth-email': who.email, 'x-auth-key': who.key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, json: (await response.json()) as never };
}

test('a public bucket over its managed URL and a custom domain, read with curl', { timeout: 180_000 }, async (t) => {
  const dir = tempDir(t);
  const server = await startServer(t, join(dir, 'data'));
  const base = server.urls['management API']!;
  const edgePort = new URL(server.urls.edge!).port;
  const admin = { email: ADMIN.EDGEPORT_ADMIN_EMAIL, key: ADMIN.EDGEPORT_ADMIN_KEY };
  const client = apiOf(server);
  const [account] = await client.call<Array<{ id: string }>>('GET', '/accounts');
  const buckets = `/accounts/${account!.id}/r2/buckets`;
  await client.call('POST', buckets, { name: 'site' });
  const put = await fetch(`${base}${buckets}/site/objects/docs/hello.txt`, {
    method: 'PUT',
    body: BODY,
    headers: { 'x-auth-email': admin.email, 'x-auth-key': admin.key, 'content-type': 'text/plain', 'cache-control': 'max-age=60' },
  });
  assert.equal(put.status, 200);

  // The managed URL: off until turned on.
  const before = await client.call<{ bucketId: string; domain: string; enabled: boolean }>('GET', `${buckets}/site/domains/managed`);
  assert.deepEqual([before.enabled, before.domain], [false, `pub-${before.bucketId}.r2.localhost`]);
  const url = `http://${before.domain}:${edgePort}`;
  assert.equal((await curl(`${url}/docs/hello.txt`)).status, 404, 'not served while off');
  const on = await client.call<{ domain: string; enabled: boolean }>('PUT', `${buckets}/site/domains/managed`, { enabled: true });
  assert.deepEqual(on, { ...before, enabled: true }, 'turning it on keeps its address');
  await sleep(1_100);
  const whole = await curl(`${url}/docs/hello.txt`);
  assert.deepEqual(
    [whole.status, whole.body, whole.headers['content-type'], whole.headers['cache-control'], whole.headers['accept-ranges']],
    [200, BODY, 'text/plain', 'max-age=60', 'bytes'],
  );
  const etag = whole.headers.etag!;
  const ranged = await curl(`${url}/docs/hello.txt`, '-H', 'Range: bytes=7-12');
  assert.deepEqual([ranged.status, ranged.body, ranged.headers['content-range']], [206, BODY.slice(7, 13), `bytes 7-12/${BODY.length}`]);
  const suffix = await curl(`${url}/docs/hello.txt`, '-H', 'Range: bytes=-4');
  assert.deepEqual([suffix.status, suffix.body], [206, BODY.slice(-4)]);
  const beyond = await curl(`${url}/docs/hello.txt`, '-H', 'Range: bytes=9999-');
  assert.deepEqual([beyond.status, beyond.headers['content-range']], [416, `bytes */${BODY.length}`]);
  const unchanged = await curl(`${url}/docs/hello.txt`, '-H', `If-None-Match: ${etag}`);
  assert.deepEqual([unchanged.status, unchanged.body, unchanged.headers.etag], [304, '', etag]);
  assert.equal((await curl(`${url}/docs/hello.txt`, '-H', 'If-Match: "other"')).status, 412);
  const head = await curl(`${url}/docs/hello.txt`, '-I');
  assert.deepEqual([head.status, head.headers['content-length']], [200, String(BODY.length)]);
  for (const method of ['PUT', 'POST', 'DELETE']) {
    const write = await curl(`${url}/docs/hello.txt`, '-X', method, '--data', 'overwritten');
    assert.deepEqual([write.status, write.headers.allow], [405, 'GET, HEAD'], `${method} is refused`);
  }
  assert.equal((await curl(`${url}/docs/missing.txt`)).status, 404);
  // A page on another origin: refused until the bucket's CORS rules allow it, then answered with them.
  const page = ['-H', 'Origin: https://app.files.test'];
  const preflight = ['-X', 'OPTIONS', ...page, '-H', 'Access-Control-Request-Method: GET'];
  assert.equal((await curl(`${url}/docs/hello.txt`, ...preflight)).status, 403);
  await client.call('PUT', `${buckets}/site/cors`, { rules: [{ allowed: { origins: ['https://app.files.test'], methods: ['GET'] }, maxAgeSeconds: 60 }] });
  const allowed = await curl(`${url}/docs/hello.txt`, ...preflight);
  assert.deepEqual(
    [allowed.status, allowed.headers['access-control-allow-origin'], allowed.headers['access-control-max-age']],
    [200, 'https://app.files.test', '60'],
  );
  const read = await curl(`${url}/docs/hello.txt`, ...page);
  assert.deepEqual([read.status, read.body, read.headers['access-control-allow-origin']], [200, BODY, 'https://app.files.test']);
  assert.equal((await curl(`http://pub-${'0'.repeat(32)}.r2.localhost:${edgePort}/docs/hello.txt`)).status, 404, 'another public id serves nothing');
  assert.equal((await curl(`${url}/docs/hello.txt`)).body, BODY, 'the writes changed nothing');

  // A custom domain on a zone of the account, with a log job.
  const zone = await client.call<{ id: string }>('POST', '/zones', { name: 'files.test', account: { id: account!.id } });
  await createFileJob(client, zone.id, join(dir, 'logs'), {
    output_options: { field_names: ['ClientRequestHost', 'ClientRequestPath', 'ClientRequestMethod', 'EdgeResponseStatus', 'EdgeResponseBytes'] },
  });
  await client.call('POST', `${buckets}/site/domains/custom`, { domain: 'cdn.files.test', zoneId: zone.id, enabled: true, minTLS: '1.2' });
  const listed = await client.call<{ domains: Array<Record<string, unknown>> }>('GET', `${buckets}/site/domains/custom`);
  assert.deepEqual(listed.domains, [
    { domain: 'cdn.files.test', enabled: true, status: { ownership: 'active', ssl: 'unknown' }, minTLS: '1.2', zoneId: zone.id, zoneName: 'files.test' },
  ]);
  const resolve = ['--resolve', `cdn.files.test:${edgePort}:127.0.0.1`];
  const custom = `http://cdn.files.test:${edgePort}`;
  const viaDomain = await curl(`${custom}/docs/hello.txt`, ...resolve);
  assert.deepEqual([viaDomain.status, viaDomain.body, viaDomain.headers.etag], [200, BODY, etag]);
  const rangedDomain = await curl(`${custom}/docs/hello.txt`, ...resolve, '-H', 'Range: bytes=0-4');
  assert.deepEqual([rangedDomain.status, rangedDomain.body], [206, BODY.slice(0, 5)]);
  assert.equal((await curl(`${custom}/docs/hello.txt`, ...resolve, '-X', 'PUT', '--data', 'x')).status, 405);
  const lines = await until(
    () => fileLines(join(dir, 'logs')),
    (got) => got.length >= 3,
    "the custom domain's three log lines",
  );
  assert.deepEqual(lines.map((line) => [line.ClientRequestHost, line.ClientRequestPath, line.ClientRequestMethod, line.EdgeResponseStatus]).sort(), [
    ['cdn.files.test', '/docs/hello.txt', 'GET', 200],
    ['cdn.files.test', '/docs/hello.txt', 'GET', 206],
    ['cdn.files.test', '/docs/hello.txt', 'PUT', 405],
  ]);
  console.log(`custom domain log lines shipped: ${lines.length} (${lines.map((line) => line.EdgeResponseStatus).join(', ')})`);

  // Another account: not its zone, not its bucket.
  const { stdout } = await run(
    process.execPath,
    [join(ROOT, 'bin/edgeport.js'), 'accounts', 'create', 'mallory@example.test', '--data-dir', join(dir, 'data')],
    { timeout: 60_000 },
  );
  const mallory = { email: 'mallory@example.test', key: /X-Auth-Key: +(\S+)/.exec(stdout)![1]! };
  const [theirs] = (await api(base, 'GET', '/accounts', mallory)).json.result as Array<{ id: string }>;
  await api(base, 'POST', `/accounts/${theirs!.id}/r2/buckets`, mallory, { name: 'site' });
  const hijack = await api(base, 'POST', `/accounts/${theirs!.id}/r2/buckets/site/domains/custom`, mallory, {
    domain: 'www.files.test',
    zoneId: zone.id,
    enabled: true,
  });
  assert.deepEqual([hijack.status, hijack.json.errors[0]!.code], [400, 10058], 'a zone of another account is no zone of theirs');
  const peek = await api(base, 'GET', `/accounts/${account!.id}/r2/buckets/site/domains/managed`, mallory);
  assert.equal(peek.status, 404, "another account's path is missing");
  const reserved = await api(base, 'POST', '/zones', mallory, { name: 'evil.r2.localhost', account: { id: theirs!.id } });
  assert.deepEqual([reserved.status, reserved.json.errors[0]!.code], [400, 1061]);

  // Off, detached, or a new bucket of the name: nothing is served.
  await client.call('PUT', `${buckets}/site/domains/managed`, { enabled: false });
  await client.call('DELETE', `${buckets}/site/domains/custom/cdn.files.test`);
  await sleep(1_100);
  assert.equal((await curl(`${url}/docs/hello.txt`)).status, 404);
  assert.notEqual((await curl(`${custom}/docs/hello.txt`, ...resolve)).status, 200);
  await client.call('PUT', `${buckets}/site/domains/managed`, { enabled: true });
  await client.call('DELETE', `${buckets}/site/objects/docs/hello.txt`);
  await client.call('DELETE', `${buckets}/site`);
  await client.call('POST', buckets, { name: 'site' });
  await sleep(1_100);
  assert.equal((await curl(`${url}/docs/hello.txt`)).status, 404, "a bucket made again is not public by the old one's setting");
  const fresh = await client.call<{ enabled: boolean; bucketId: string }>('GET', `${buckets}/site/domains/managed`);
  assert.equal(fresh.enabled, false);
  assert.notEqual(fresh.bucketId, before.bucketId, 'and gets another address when it is');
});
