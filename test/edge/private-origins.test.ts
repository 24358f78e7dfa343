/**
 * The edge refuses origins that lead inside (loopback, link-local, private addresses, edgeport's
 * own listeners) for every zone but the operator's, on the address it actually connects to: IP
 * literals, names such as `localhost`, and names a resolver maps there (as DNS rebinding would).
 * Refusals answer 403 `error 1000` and are logged like other origin errors.
 */
import assert from 'node:assert/strict';
import { createServer, request, type IncomingMessage } from 'node:http';
import { lookup } from 'node:dns';
import { setTimeout as sleep } from 'node:timers/promises';
import { test, type TestContext } from 'node:test';
import { pino } from 'pino';
import { systemClock } from '../../src/core/clock.ts';
import { silentLogger } from '../../src/core/log.ts';
import type { ControlStore } from '../../src/db/control-store.ts';
import { createEdgeService, OriginPolicy, type ListenerAddress } from '../../src/edge/index.ts';
import type { ResolveAll } from '../../src/edge/origin-proxy.ts';
import { FileRoots } from '../../src/logs/destinations/file-roots.ts';
import { LogPipeline } from '../../src/logs/log-pipeline.ts';
import { openStoreEngine } from '../../src/store/engine/open-store-engine.ts';
import { openTestControlStore, openTestDatabase } from '../helpers/control-store.ts';
import { fileLines } from '../helpers/delivered-logs.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { jobFields, ndjsonOutput } from '../helpers/log-fixtures.ts';
import { listen } from '../helpers/listen.ts';

const OPERATOR = 'a'.repeat(32);
const OTHER = 'b'.repeat(32);
const OUTPUT = ndjsonOutput(['RayID', 'ClientRequestHost', 'EdgeResponseStatus', 'OriginResponseStatus']);

function get(port: number, host: string): Promise<{ status: number; headers: IncomingMessage['headers']; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/secret', headers: { host } });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Names the test's resolver answers, as a DNS server under an attacker's control would. */
const ANSWERS: Record<string, string[]> = {
  'rebind.test': ['127.0.0.1'],
  'mixed.test': ['8.8.8.8', '127.0.0.1'],
  'metadata.test': ['::ffff:169.254.169.254'],
};
/** The test's names, else the system's resolver (`localhost`). */
const resolve: ResolveAll = (hostname, options, callback) => {
  const answer = ANSWERS[hostname];
  if (!answer) return lookup(hostname, { ...options, all: true }, callback);
  callback(
    null,
    answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
  );
};

interface Setup {
  control: ControlStore;
  /** Requests the internal origin (127.0.0.1) received. */
  reached: string[];
  originPort: number;
  zone(accountId: string, name: string, origin: string): Promise<string>;
  edge(options: { allowPrivateOrigins: boolean; ownListeners?: () => ListenerAddress[] }): Promise<number>;
  delivered(): Array<Record<string, unknown>>;
  /** What the edge logged (pino's JSON lines). */
  logged(): Array<Record<string, unknown>>;
  out: string;
}

async function setup(t: TestContext): Promise<Setup> {
  const dataDir = tempDir(t);
  const stops: Array<() => Promise<void>> = [];
  t.after(async () => {
    for (const stop of stops) await stop();
  });
  const database = await openTestDatabase(t, { clock: systemClock });
  const engine = await openStoreEngine({ dataDir, ...(database ? { database } : {}) });
  const control = await openTestControlStore(t, { dataDir, clock: systemClock, database });
  const now = Date.now();
  await control.createAccount({ id: OPERATOR, email: 'operator@example.test', name: 'operator', keyHash: 'x', created: now });
  await control.createAccount({ id: OTHER, email: 'b@example.test', name: 'b', keyHash: 'x', created: now + 1 });
  const reached: string[] = [];
  const originPort = await listen(
    createServer((req, res) => {
      reached.push(String(req.headers.host));
      res.end('internal data');
    }),
    t,
  );
  // The log destination lies outside the data dir, below the pipeline's one file root.
  const out = tempDir(t);
  const pipeline = new LogPipeline({
    dataDir,
    jobs: control,
    engine,
    clock: systemClock,
    logger: silentLogger,
    maxIntervalMs: 50,
    fileRoots: new FileRoots({ roots: [out], dataDir }),
  });
  pipeline.start();
  stops.push(
    () => pipeline.close(),
    () => engine.close(),
  );
  let zones = 0;
  const logLines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => logLines.push(JSON.parse(line) as Record<string, unknown>) });
  return {
    control,
    reached,
    originPort,
    out,
    logged: () => logLines,
    async zone(accountId, name, origin) {
      const id = (++zones).toString(16).padStart(32, '0');
      assert.equal(await control.createZone({ id, accountId, name, origin, paused: false, created: now, modified: now }), 'created');
      await control.createJob(id, () => ({ ...jobFields(id, `file://${out}`, OUTPUT, now), name: 'all' }));
      return id;
    },
    async edge({ allowPrivateOrigins, ownListeners }) {
      const originPolicy = new OriginPolicy({
        allowPrivateOrigins,
        operatorAccountId: async () => (await control.firstAccount())?.id ?? null,
        ...(ownListeners ? { ownListeners } : {}),
      });
      const edge = createEdgeService({
        zones: control,
        pipeline,
        clock: systemClock,
        logger,
        originPolicy,
        origin: { connectTimeoutMs: 2000, responseTimeoutMs: 2000, resolve },
      });
      stops.unshift(() => edge.close());
      return listen(createServer(edge.handler), t);
    },
    delivered: () => fileLines<Record<string, unknown>>(out),
  };
}

test(
  "another account's origins that lead inside answer 403 error 1000, are logged, and never reach the origin; the operator's work",
  { timeout: 60_000 },
  async (t) => {
    const s = await setup(t);
    const internal = `http://127.0.0.1:${s.originPort}`;
    await s.zone(OPERATOR, 'operator.test', internal);
    await s.zone(OPERATOR, 'operator-by-name.test', `http://localhost:${s.originPort}`);
    await s.zone(OTHER, 'loopback.test', internal);
    await s.zone(OTHER, 'metadata-ip.test', 'http://169.254.169.254');
    await s.zone(OTHER, 'mapped.test', `http://[::ffff:127.0.0.1]:${s.originPort}`);
    await s.zone(OTHER, 'localhost.test', `http://localhost:${s.originPort}`);
    await s.zone(OTHER, 'rebind.example', `http://rebind.test:${s.originPort}`);
    await s.zone(OTHER, 'mixed.example', `http://mixed.test:${s.originPort}`);
    await s.zone(OTHER, 'metadata.example', 'http://metadata.test');
    const port = await s.edge({ allowPrivateOrigins: false });

    // The operator's zones first: their kept-alive connections to the origin must not serve the others.
    for (const host of ['operator.test', 'operator-by-name.test']) {
      const operator = await get(port, host);
      assert.deepEqual([operator.status, operator.body], [200, 'internal data'], host);
    }
    const refusals: Array<[string, RegExp]> = [
      ['loopback.test', /^127\.0\.0\.1 is a loopback address/],
      ['www.loopback.test', /^127\.0\.0\.1 is a loopback address/],
      ['metadata-ip.test', /^169\.254\.169\.254 is a link-local address/],
      ['mapped.test', /^127\.0\.0\.1 is a loopback address/],
      ['localhost.test', /is a loopback address/],
      ['rebind.example', /^127\.0\.0\.1 is a loopback address/],
      ['mixed.example', /^127\.0\.0\.1 is a loopback address/],
      ['metadata.example', /^169\.254\.169\.254 is a link-local address/],
    ];
    const rays: string[] = [];
    for (const [host, message] of refusals) {
      const answer = await get(port, host);
      assert.equal(answer.status, 403, `${host}: ${answer.body}`);
      // The visitor's page names neither the origin nor its address; the server log does, under the same Ray ID.
      const ray = String(answer.headers['edgeport-ray']);
      assert.equal(
        answer.body,
        `error 1000: DNS points to prohibited IP: this zone's origin leads to an address it may not use. Point the origin at a public address; the server log says more under this Ray ID.\nRay ID: ${ray}\n`,
        host,
      );
      assert.equal(answer.headers['content-type'], 'text/plain; charset=utf-8');
      const logged = s.logged().find((line) => line.rayId === ray);
      assert.equal(logged?.msg, 'Origin request failed.', host);
      assert.equal(logged?.status, 403);
      assert.match(String(logged?.origin), /^http:\/\//, host);
      assert.match(String(logged?.reason), message, host);
      rays.push(ray);
    }
    assert.deepEqual(s.reached, ['operator.test', 'operator-by-name.test'], 'only the operator reached the internal origin');

    // Each refusal is logged like any origin error: status 403, no origin status.
    const deadline = Date.now() + 10_000;
    while (s.delivered().length < refusals.length + 2 && Date.now() < deadline) await sleep(25);
    const byRay = new Map(s.delivered().map((line) => [line.RayID, line]));
    for (const [i, [host]] of refusals.entries()) {
      assert.deepEqual(byRay.get(rays[i]), { RayID: rays[i], ClientRequestHost: host, EdgeResponseStatus: 403, OriginResponseStatus: 0 }, host);
    }
  },
);

test("allow_private_origins = true lets another account use private origins, but never edgeport's own listeners", { timeout: 60_000 }, async (t) => {
  const s = await setup(t);
  const own: ListenerAddress[] = [];
  const port = await s.edge({ allowPrivateOrigins: true, ownListeners: () => own });
  own.push({ host: '127.0.0.1', port });
  await s.zone(OTHER, 'loopback.test', `http://127.0.0.1:${s.originPort}`);
  await s.zone(OTHER, 'rebind.example', `http://rebind.test:${s.originPort}`);
  await s.zone(OTHER, 'self.test', `http://127.0.0.1:${port}`);
  await s.zone(OTHER, 'self-by-name.test', `http://localhost:${port}`);
  await s.zone(OPERATOR, 'operator-self.test', `http://127.0.0.1:${s.originPort}`);

  for (const host of ['loopback.test', 'rebind.example']) {
    const answer = await get(port, host);
    assert.deepEqual([answer.status, answer.body], [200, 'internal data'], host);
  }
  for (const host of ['self.test', 'self-by-name.test']) {
    const answer = await get(port, host);
    assert.equal(answer.status, 403, host);
    assert.match(answer.body, /^error 1000: DNS points to prohibited IP: this zone's origin leads to an address it may not use\./, host);
    const logged = s.logged().find((line) => line.rayId === answer.headers['edgeport-ray']);
    assert.match(String(logged?.reason), new RegExp(`^(127\\.0\\.0\\.1|\\[::1\\]):${port} may not be used as an origin by this account's zones`), host);
    assert.doesNotMatch(String(logged?.reason), /edgeport|listener/, "not even the log names the port as edgeport's own: the zone owner may read it too");
  }
  assert.deepEqual(s.reached, ['loopback.test', 'rebind.example']);
});
