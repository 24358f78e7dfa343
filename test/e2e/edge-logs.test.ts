/**
 * Issue 5 end to end through `edgeport start`: a zone with a local origin, custom fields for
 * request headers, response headers and cookies (configured through the management API), three
 * jobs — a nested filter X AND (Y OR Z) to file://, everything to store:// and to s3:// (edgeport's
 * own S3 API) — and 10,000 requests from autocannon. The delivered batches hold exactly the
 * matching requests with the right custom fields and rfc3339 timestamps. Then sample_rate 0.1
 * over 20,000 requests, and a SIGKILL mid-traffic after which every answered request is delivered once.
 */
import assert from 'node:assert/strict';
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test, type TestContext } from 'node:test';
import autocannon from 'autocannon';
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { fileLines as readLines, gunzipLines, until } from '../helpers/delivered-logs.ts';
import { answeredRay } from '../helpers/edge-request.ts';
import { startEdgeport, writeScriptConfig, type EdgeportServer } from '../helpers/edgeport-server.ts';
import { managementApi, type ApiClient } from '../helpers/management-api.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const ADMIN = { EDGEPORT_ADMIN_EMAIL: 'owner@example.test', EDGEPORT_ADMIN_KEY: 'e2e-admin-key-0123456789' };
const S3_KEY = { EDGEPORT_S3_ACCESS_KEY_ID: 'EDGEPORTE2EKEY01', EDGEPORT_S3_SECRET_ACCESS_KEY: 'e2e-secret-0123456789abcdef' };
const FIELDS = ['RayID', 'ClientRequestHost', 'ClientRequestPath', 'EdgeResponseStatus', 'EdgeStartTimestamp', 'RequestHeaders', 'ResponseHeaders', 'Cookies'];

interface Seen { path: string; host: string; status: number }

/** A delivered log line (only the fields a job selected are present). */
interface LogLine {
  RayID: string;
  ClientRequestPath: string;
  EdgeStartTimestamp: string;
  RequestHeaders: Record<string, string>;
  ResponseHeaders: Record<string, string>;
  Cookies: Record<string, string>;
  [field: string]: unknown;
}

/** The origin: 500 for /fail/*, 200 otherwise, two Set-Cookie headers; remembers every ray it served. */
async function startOrigin(t: TestContext): Promise<{ url: string; seen: Map<string, Seen> }> {
  const seen = new Map<string, Seen>();
  const server: Server = createServer((req: IncomingMessage, res) => {
    const status = req.url!.startsWith('/fail') ? 500 : 200;
    seen.set(String(req.headers['edgeport-ray']), { path: req.url!.split('?')[0]!, host: String(req.headers.host).split(':')[0]!, status });
    req.resume();
    req.on('end', () => {
      res.writeHead(status, ['Content-Type', 'text/plain', 'Set-Cookie', 'a=1', 'Set-Cookie', 'b=2', 'X-Origin', 'origin-1']);
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

/** The data dir is `<test dir>/data`; file:// jobs write below the test dir (the only file root). */
async function startServer(t: TestContext, dataDir: string): Promise<EdgeportServer> {
  const server = await startEdgeport({ dataDir, env: { ...ADMIN, ...S3_KEY, EDGEPORT_LOGS_MAX_BATCH_INTERVAL_MS: '200', EDGEPORT_LOGS_FILE_ROOTS: dirname(dataDir) } });
  t.after(() => server.stop());
  return server;
}

function apiOf(server: EdgeportServer): ApiClient {
  return managementApi(server.urls['management API']!, ADMIN.EDGEPORT_ADMIN_EMAIL, ADMIN.EDGEPORT_ADMIN_KEY);
}

async function createZone(api: ApiClient, origin: string): Promise<string> {
  const [account] = await api.call<Array<{ id: string }>>('GET', '/accounts');
  const zone = await api.call<{ id: string }>('POST', '/zones', { name: 'example.test', account: { id: account!.id }, origin });
  await api.call('PUT', `/zones/${zone.id}/rulesets/phases/http_log_custom_fields/entrypoint`, {
    rules: [{
      action: 'log_custom_field', expression: 'true', description: 'e2e',
      action_parameters: {
        request_fields: [{ name: 'x-trace' }, { name: 'user-agent' }],
        response_fields: [{ name: 'set-cookie' }, { name: 'x-origin' }],
        cookie_fields: [{ name: 'session' }],
      },
    }],
  });
  return zone.id;
}

/** A file:// job, through the ownership challenge as a user would do it. */
async function createFileJob(api: ApiClient, zoneId: string, directory: string, extra: Record<string, unknown>): Promise<{ id: number }> {
  const destination = `file://${directory}/{DATE}`;
  const challenge = await api.call<{ filename: string }>('POST', `/zones/${zoneId}/logshipping/ownership`, { destination_conf: destination });
  const token = readFileSync(challenge.filename.startsWith('/') ? challenge.filename : join(directory, challenge.filename), 'utf8').trim();
  return api.call('POST', `/zones/${zoneId}/logshipping/jobs`, { name: 'file-job', destination_conf: destination, dataset: 'http_requests', enabled: true, ownership_challenge: token, ...extra });
}

const fileLines = (directory: string): LogLine[] => readLines<LogLine>(directory);

async function bucketLines(s3: S3Client, bucket: string): Promise<LogLine[]> {
  const buffers: Buffer[] = [];
  let token: string | undefined;
  do {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token }));
    for (const object of page.Contents ?? []) {
      if (!object.Key!.endsWith('.log.gz')) continue;
      const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: object.Key! }));
      buffers.push(Buffer.from(await got.Body!.transformToByteArray()));
    }
    token = page.NextContinuationToken;
  } while (token);
  return gunzipLines<LogLine>(buffers);
}

/** `count` requests from autocannon, cycling paths and hosts; every request carries x-trace and a session cookie. */
async function load(edge: string, count: number): Promise<void> {
  const paths = ['/api/items', '/fail/now', '/static/app.js', '/api/cart'];
  const hosts = ['example.test', 'example.test', 'www.example.test'];
  let n = 0;
  const result = await autocannon({
    url: edge, connections: 16, amount: count, timeout: 20,
    requests: [{
      setupRequest: (req: Record<string, unknown>) => {
        const i = n++;
        return { ...req, method: 'GET', path: `${paths[i % paths.length]}?i=${i}`, headers: { host: hosts[i % hosts.length], 'x-trace': `t${i}`, cookie: `session=s${i}; other=x`, 'user-agent': 'autocannon-e2e' } };
      },
    }],
  } as unknown as autocannon.Options);
  assert.equal(result.errors, 0, 'no request failed');
  assert.equal(result.non2xx, Math.floor(count / 4) + (count % 4 > 1 ? 1 : 0), 'only /fail answered 500');
}

/** GET through the edge with a Host header (fetch cannot set Host). */
function getVia(edge: string, host: string, path: string): Promise<{ body: string; headers: IncomingMessage['headers'] }> {
  return new Promise((resolve, reject) => {
    const url = new URL(edge);
    const req = request({ host: url.hostname, port: url.port, path, headers: { host } });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => { body += chunk; });
      res.on('end', () => resolve({ body, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

function raw(port: number, headers: string[], path = '/api/raw'): Promise<string> {
  return answeredRay({ host: '127.0.0.1', port, path, headers: ['Host', 'example.test', ...headers] as unknown as Record<string, string> });
}

test('10,000 requests: each job gets exactly its requests, with custom fields and rfc3339 timestamps', async (t) => {
  const dir = tempDir(t);
  const origin = await startOrigin(t);
  const server = await startServer(t, join(dir, 'data'));
  const api = apiOf(server);
  const zoneId = await createZone(api, origin.url);
  const s3 = new S3Client({ endpoint: server.urls['S3-compatible API'], region: 'auto', forcePathStyle: true, credentials: { accessKeyId: S3_KEY.EDGEPORT_S3_ACCESS_KEY_ID, secretAccessKey: S3_KEY.EDGEPORT_S3_SECRET_ACCESS_KEY } });
  t.after(() => s3.destroy());
  await s3.send(new CreateBucketCommand({ Bucket: 'store-logs' }));
  await s3.send(new CreateBucketCommand({ Bucket: 's3-logs' }));

  const filter = { where: { and: [
    { key: 'ClientRequestHost', operator: 'eq', value: 'example.test' },
    { or: [{ key: 'EdgeResponseStatus', operator: 'eq', value: 500 }, { key: 'ClientRequestPath', operator: 'startsWith', value: '/api' }] },
  ] } };
  const output = { field_names: FIELDS, timestamp_format: 'rfc3339' };
  await createFileJob(api, zoneId, join(dir, 'file-logs'), { filter: JSON.stringify(filter), output_options: output });
  const storeChallenge = await api.call<{ filename: string }>('POST', `/zones/${zoneId}/logshipping/ownership`, { destination_conf: 'store://store-logs/edge' });
  const storeToken = await (await s3.send(new GetObjectCommand({ Bucket: 'store-logs', Key: storeChallenge.filename.replace(/^store-logs\//, '') }))).Body!.transformToString();
  await api.call('POST', `/zones/${zoneId}/logshipping/jobs`, { name: 'store-job', destination_conf: 'store://store-logs/edge', dataset: 'http_requests', enabled: true, ownership_challenge: storeToken.trim(), output_options: output });
  const s3Conf = `s3://s3-logs/edge?region=auto&endpoint=${encodeURIComponent(server.urls['S3-compatible API']!)}&access-key-id=${S3_KEY.EDGEPORT_S3_ACCESS_KEY_ID}&secret-access-key=${S3_KEY.EDGEPORT_S3_SECRET_ACCESS_KEY}`;
  await api.call('POST', `/zones/${zoneId}/logshipping/jobs`, { name: 's3-job', destination_conf: s3Conf, dataset: 'http_requests', enabled: true, output_options: output });

  await load(server.urls.edge!, 10_000);
  const edgePort = Number(new URL(server.urls.edge!).port);
  const duplicateRay = await raw(edgePort, ['X-Trace', 'first', 'x-trace', 'second', 'Cookie', 'session=one', 'Cookie', 'session=two']);
  const bigRay = await raw(edgePort, ['X-Trace', 'x'.repeat(6000), 'User-Agent', 'y'.repeat(6000)]);
  const total = origin.seen.size;
  assert.equal(total, 10_002);

  const expected = new Set([...origin.seen].filter(([, s]) => s.host === 'example.test' && (s.status === 500 || s.path.startsWith('/api'))).map(([ray]) => ray));
  const fileResult = await until(() => fileLines(join(dir, 'file-logs')), (lines) => lines.length >= expected.size, 'the file job');
  assert.equal(fileResult.length, expected.size, 'no extra lines');
  assert.deepEqual(new Set(fileResult.map((l) => l.RayID)), expected, 'exactly the matching requests');
  for (const line of fileResult) {
    assert.deepEqual(Object.keys(line), FIELDS);
    assert.match(line.EdgeStartTimestamp, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    if (line.RayID !== bigRay) assert.deepEqual(line.ResponseHeaders, { 'set-cookie': 'a=1', 'x-origin': 'origin-1' }, 'first set-cookie');
    if (line.RayID === duplicateRay) {
      assert.deepEqual(line.RequestHeaders, { 'x-trace': 'first' });
      assert.deepEqual(line.Cookies, { session: 'one' });
    } else if (line.RayID === bigRay) {
      const bytes = (m: Record<string, string>) => Object.entries(m).reduce((n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(v), 0);
      assert.equal(line.RequestHeaders['x-trace'], 'x'.repeat(6000));
      assert.ok(line.RequestHeaders['user-agent']!.length < 6000, 'the value crossing 8 KB is cut');
      assert.equal(bytes(line.RequestHeaders) + bytes(line.Cookies) + bytes(line.ResponseHeaders), 8192, 'the excess is truncated, exactly at 8 KB');
      assert.deepEqual(line.ResponseHeaders, {}, 'nothing is left for the response headers');
    } else {
      assert.match(line.RequestHeaders['x-trace']!, /^t\d+$/);
      assert.equal(line.RequestHeaders['user-agent'], 'autocannon-e2e');
      assert.equal(line.Cookies.session, `s${line.RequestHeaders['x-trace']!.slice(1)}`);
    }
  }
  for (const bucket of ['store-logs', 's3-logs']) {
    const lines: LogLine[] = await until(() => bucketLines(s3, bucket), (l) => l.length >= total, `the ${bucket} job`);
    assert.equal(lines.length, total, `${bucket}: every request once`);
    assert.equal(new Set(lines.map((l) => l.RayID)).size, total);
  }
});

test('sample_rate 0.1 over 20,000 requests delivers 10% within 1.5 points', async (t) => {
  const dir = tempDir(t);
  const origin = await startOrigin(t);
  const server = await startServer(t, join(dir, 'data'));
  const api = apiOf(server);
  const zoneId = await createZone(api, origin.url);
  await createFileJob(api, zoneId, join(dir, 'sampled'), { output_options: { field_names: ['RayID'], sample_rate: 0.1 } });
  const result = await autocannon({ url: server.urls.edge!, connections: 16, amount: 20_000, headers: { host: 'example.test' } });
  assert.equal(result.errors, 0);
  await sleep(600);
  const lines = await until(() => fileLines(join(dir, 'sampled')), (l) => l.length > 0, 'sampled lines');
  await sleep(500);
  const kept = fileLines(join(dir, 'sampled')).length / 20_000;
  assert.ok(Math.abs(kept - 0.1) <= 0.015, `kept ${(kept * 100).toFixed(2)}%`);
  assert.ok(lines.every((l) => Object.keys(l).join() === 'RayID'));
});

test('an HTTP receiver answering 500 for a while: the API shows the error, then every line arrives once and the error clears', async (t) => {
  const dir = tempDir(t);
  let failing = false;
  const received: string[] = [];
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (failing) return void res.writeHead(500).end('receiver down');
      const text = gunzipLines<{ RayID?: string }>([Buffer.concat(chunks)]);
      for (const line of text) if (line.RayID) received.push(line.RayID);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => { receiver.closeAllConnections(); receiver.close(() => resolve()); }));
  const origin = await startOrigin(t);
  const server = await startServer(t, join(dir, 'data'));
  const api = apiOf(server);
  const zoneId = await createZone(api, origin.url);
  const destination = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/ingest`;
  // Created while the receiver is up: the API's test upload must succeed.
  const job = await api.call<{ id: number }>('POST', `/zones/${zoneId}/logshipping/jobs`, {
    name: 'http-job', destination_conf: destination, dataset: 'http_requests', enabled: true, output_options: { field_names: ['RayID'] },
  });
  failing = true;
  await load(server.urls.edge!, 200);
  type JobJson = { last_complete: string | null; last_error: string | null; error_message: string | null };
  const failed = await until(() => api.call<JobJson>('GET', `/zones/${zoneId}/logshipping/jobs/${job.id}`),
    (j) => j.error_message !== null, 'the error on the job', 15_000);
  assert.match(failed.error_message!, /500/);
  assert.ok(failed.last_error !== null && !Number.isNaN(Date.parse(failed.last_error)), 'last_error is a time');
  assert.equal(received.length, 0);
  failing = false;
  await load(server.urls.edge!, 100);
  const rays = await until(() => received, (r) => r.length >= 300, 'all 300 lines', 30_000);
  assert.equal(new Set(rays).size, 300, 'nothing lost, nothing delivered twice');
  assert.deepEqual(new Set(rays), new Set(origin.seen.keys()));
  const healed = await until(() => api.call<JobJson>('GET', `/zones/${zoneId}/logshipping/jobs/${job.id}`),
    (j) => j.error_message === null, 'the error cleared', 15_000);
  assert.ok(healed.last_complete !== null);
});

test('SIGKILL mid-traffic, then restart: every request answered before the kill is delivered once', async (t) => {
  const dir = tempDir(t);
  const dataDir = join(dir, 'data');
  const origin = await startOrigin(t);
  const first = await startServer(t, dataDir);
  const zoneId = await createZone(apiOf(first), origin.url);
  await createFileJob(apiOf(first), zoneId, join(dir, 'killed'), { output_options: { field_names: ['RayID'] } });

  const edgePort = Number(new URL(first.urls.edge!).port);
  const answered: string[] = [];
  let stop = false;
  const client = async (): Promise<void> => {
    while (!stop) {
      try {
        answered.push(await raw(edgePort, [], `/api/k${answered.length}`));
      } catch {
        return; // the server is gone
      }
    }
  };
  const clients = Array.from({ length: 8 }, () => client());
  await until(() => answered.length, (n) => n >= 1500, 'traffic before the kill', 20_000);
  const exited = new Promise((resolve) => first.child.once('exit', resolve));
  first.child.kill('SIGKILL');
  stop = true;
  await Promise.all(clients);
  await exited;

  const second = await startServer(t, dataDir);
  void second;
  const delivered = await until(() => fileLines(join(dir, 'killed')), (lines) => new Set(lines.map((l) => l.RayID)).size >= answered.length, 'the spool after restart');
  const rays = delivered.map((l) => l.RayID as string);
  const counts = new Map<string, number>();
  for (const ray of rays) counts.set(ray, (counts.get(ray) ?? 0) + 1);
  for (const ray of answered) assert.equal(counts.get(ray), 1, `ray ${ray} delivered once`);
  assert.equal(rays.length, counts.size, 'nothing delivered twice');
});

test('a script routed on the zone serves its paths with its bucket binding; the origin serves the rest; both are logged', async (t) => {
  const dir = tempDir(t);
  const args = writeScriptConfig(dir, {
    name: 'counter', route: 'example.test/api/*', bucket: 'script-data', source: `export default {
    async fetch(request, env) {
      const key = new URL(request.url).pathname;
      await env.BUCKET.put(key, 'seen');
      const listed = await env.BUCKET.list();
      return new Response('script:' + listed.objects.length, { headers: { 'x-from': 'script', 'set-cookie': 'sc=1' } });
    },
  };`,
  });
  const origin = await startOrigin(t);
  const server = await startEdgeport({ dataDir: join(dir, 'data'), args, env: { ...ADMIN, ...S3_KEY, EDGEPORT_LOGS_MAX_BATCH_INTERVAL_MS: '100', EDGEPORT_LOGS_FILE_ROOTS: dir } });
  t.after(() => server.stop());
  assert.match(server.banner, /script "counter" on example\.test\/api\/\*/);
  const api = apiOf(server);
  const zoneId = await createZone(api, origin.url);
  await createFileJob(api, zoneId, join(dir, 'logs'), { output_options: { field_names: ['ClientRequestPath', 'EdgeResponseStatus', 'OriginResponseStatus', 'ResponseHeaders'] } });

  const edge = server.urls.edge!;
  const viaScript = await getVia(edge, 'example.test', '/api/one');
  assert.equal(viaScript.body, 'script:1');
  assert.equal(viaScript.headers['x-from'], 'script');
  const viaOrigin = await getVia(edge, 'example.test', '/home');
  assert.equal(viaOrigin.body, 'ok');
  const lines = await until(() => fileLines(join(dir, 'logs')), (l) => l.length >= 2, 'both records');
  const byPath = Object.fromEntries(lines.map((l) => [l.ClientRequestPath, l]));
  assert.deepEqual(byPath['/api/one'], { ClientRequestPath: '/api/one', EdgeResponseStatus: 200, OriginResponseStatus: 0, ResponseHeaders: { 'set-cookie': 'sc=1' } });
  assert.deepEqual(byPath['/home'], { ClientRequestPath: '/home', EdgeResponseStatus: 200, OriginResponseStatus: 200, ResponseHeaders: { 'set-cookie': 'a=1', 'x-origin': 'origin-1' } });
});
