/**
 * The setting of the edge-logs e2e files (edge-logs*.test.ts): a real `edgeport start` whose
 * file:// jobs write below the test's directory, an origin that remembers every ray it served, a
 * zone with custom fields for request headers, response headers and cookies, file:// jobs made
 * through the ownership challenge, and autocannon load through the edge.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import { dirname, join } from 'node:path';
import type { TestContext } from 'node:test';
import autocannon from 'autocannon';
import { fileLines as readLines } from './delivered-logs.ts';
import { answeredRay } from './edge-request.ts';
import { startEdgeport, type EdgeportServer } from './edgeport-server.ts';
import { managementApi, type ApiClient } from './management-api.ts';
import { listen } from './listen.ts';

export const ADMIN = { EDGEPORT_ADMIN_EMAIL: 'owner@example.test', EDGEPORT_ADMIN_KEY: 'e2e-admin-key-0123456789' };
export const S3_KEY = { EDGEPORT_S3_ACCESS_KEY_ID: 'EDGEPORTE2EKEY01', EDGEPORT_S3_SECRET_ACCESS_KEY: 'e2e-secret-0123456789abcdef' };
export const FIELDS = [
  'RayID',
  'ClientRequestHost',
  'ClientRequestPath',
  'EdgeResponseStatus',
  'EdgeStartTimestamp',
  'RequestHeaders',
  'ResponseHeaders',
  'Cookies',
];

/** What the origin saw of one request. */
export interface Seen {
  path: string;
  host: string;
  status: number;
}

/** A delivered log line (only the fields a job selected are present). */
export interface LogLine {
  RayID: string;
  ClientRequestPath: string;
  EdgeStartTimestamp: string;
  RequestHeaders: Record<string, string>;
  ResponseHeaders: Record<string, string>;
  Cookies: Record<string, string>;
  [field: string]: unknown;
}

/** The origin: 500 for /fail/*, 200 otherwise, two Set-Cookie headers; remembers every ray it served. */
export async function startOrigin(t: TestContext): Promise<{ url: string; seen: Map<string, Seen> }> {
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
  const port = await listen(server, t);
  return { url: `http://127.0.0.1:${port}`, seen };
}

/**
 * The data dir is `<test dir>/data`; file:// jobs write below the test dir (the only file root).
 * `args` are more command-line arguments (a script's config); batches ship every `batchIntervalMs`.
 * Load shedding is off: these tests count every request at the origin and in the logs, and a 503
 * shed while the machine runs behind (CI, Node 24: one of 10,000 requests never reached the
 * origin) is the listener's concern, tested in test/cli/load-shedding.test.ts.
 */
export function startServer(t: TestContext, dataDir: string, options: { args?: string[]; batchIntervalMs?: number } = {}): Promise<EdgeportServer> {
  return startEdgeport({
    owner: t,
    dataDir,
    args: options.args ?? [],
    env: {
      ...ADMIN,
      ...S3_KEY,
      EDGEPORT_LOGS_MAX_BATCH_INTERVAL_MS: String(options.batchIntervalMs ?? 200),
      EDGEPORT_LOGS_FILE_ROOTS: dirname(dataDir),
    },
    shedding: false,
  });
}

/** GET `path` through the edge at `edge` with Host `host`: the whole answer. */
export function getVia(
  edge: string,
  host: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string; headers: IncomingMessage['headers'] }> {
  return new Promise((resolve, reject) => {
    const url = new URL(edge);
    const req = request({ host: url.hostname, port: url.port, path, headers: { host, ...headers } });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode!, body, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The management API as the admin. */
export function apiOf(server: EdgeportServer): ApiClient {
  return managementApi(server.urls['management API']!, ADMIN.EDGEPORT_ADMIN_EMAIL, ADMIN.EDGEPORT_ADMIN_KEY);
}

/** Zone example.test (and www.) on `origin`, with custom fields x-trace, user-agent, set-cookie, x-origin and the session cookie. */
export async function createZone(api: ApiClient, origin: string): Promise<string> {
  const [account] = await api.call<Array<{ id: string }>>('GET', '/accounts');
  const zone = await api.call<{ id: string }>('POST', '/zones', { name: 'example.test', account: { id: account!.id }, origin });
  await api.call('PUT', `/zones/${zone.id}/rulesets/phases/http_log_custom_fields/entrypoint`, {
    rules: [
      {
        action: 'log_custom_field',
        expression: 'true',
        description: 'e2e',
        action_parameters: {
          request_fields: [{ name: 'x-trace' }, { name: 'user-agent' }],
          response_fields: [{ name: 'set-cookie' }, { name: 'x-origin' }],
          cookie_fields: [{ name: 'session' }],
        },
      },
    ],
  });
  return zone.id;
}

/** A file:// job, through the ownership challenge as a user would do it. */
export async function createFileJob(api: ApiClient, zoneId: string, directory: string, extra: Record<string, unknown>): Promise<{ id: number }> {
  const destination = `file://${directory}/{DATE}`;
  const challenge = await api.call<{ filename: string }>('POST', `/zones/${zoneId}/logshipping/ownership`, { destination_conf: destination });
  const token = readFileSync(challenge.filename.startsWith('/') ? challenge.filename : join(directory, challenge.filename), 'utf8').trim();
  return api.call('POST', `/zones/${zoneId}/logshipping/jobs`, {
    name: 'file-job',
    destination_conf: destination,
    dataset: 'http_requests',
    enabled: true,
    ownership_challenge: token,
    ...extra,
  });
}

/**
 * What the server's /metrics says of job `jobId`: the lines it took into its spool and the lines it
 * delivered. A line is spooled before the edge finishes its response, so once every response is in,
 * shipped equal to spooled means every line the job took was delivered.
 */
export async function jobDelivery(server: EdgeportServer, jobId: number): Promise<{ spooledLines: number; shippedLines: number }> {
  const text = await (await fetch(`${new URL(server.urls['management API']!).origin}/metrics`)).text();
  const sample = (name: string): number => {
    const line = text.split('\n').find((each) => each.startsWith(`${name}{log_job="${jobId}"} `));
    assert.ok(line, `/metrics has ${name} for job ${jobId}`);
    return Number(line.slice(line.lastIndexOf(' ') + 1));
  };
  return { spooledLines: sample('edgeport_logs_spooled_lines_total'), shippedLines: sample('edgeport_logs_shipped_lines_total') };
}

/** Every line the file:// job writing below `directory` delivered so far. */
export const fileLines = (directory: string): LogLine[] => readLines<LogLine>(directory);

/** `count` requests from autocannon, cycling paths and hosts; every request carries x-trace and a session cookie. */
export async function load(edge: string, count: number): Promise<void> {
  const paths = ['/api/items', '/fail/now', '/static/app.js', '/api/cart'];
  const hosts = ['example.test', 'example.test', 'www.example.test'];
  let n = 0;
  const result = await autocannon({
    url: edge,
    connections: 16,
    amount: count,
    timeout: 20,
    requests: [
      {
        setupRequest: (req: Record<string, unknown>) => {
          const i = n++;
          return {
            ...req,
            method: 'GET',
            path: `${paths[i % paths.length]}?i=${i}`,
            headers: { host: hosts[i % hosts.length], 'x-trace': `t${i}`, cookie: `session=s${i}; other=x`, 'user-agent': 'autocannon-e2e' },
          };
        },
      },
    ],
  } as unknown as autocannon.Options);
  assert.equal(result.errors, 0, 'no request failed');
  assert.equal(result.non2xx, Math.floor(count / 4) + (count % 4 > 1 ? 1 : 0), 'only /fail answered 500');
}

/** One request to the edge's `port` for example.test with `headers` (name, value, ...): the RayID of its answer. */
export function raw(port: number, headers: string[], path = '/api/raw'): Promise<string> {
  return answeredRay({ host: '127.0.0.1', port, path, headers: ['Host', 'example.test', ...headers] as unknown as Record<string, string> });
}
