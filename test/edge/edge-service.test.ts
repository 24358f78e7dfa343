/**
 * The edge in process over real components (control store, log pipeline, origin servers, HTTP):
 * routing by Host and parent domains, streaming proxy with hop-by-hop headers dropped, origin
 * errors, and the records it spools with the custom-fields rules (docs/edge-and-logs.md).
 */
import assert from 'node:assert/strict';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { test, type TestContext } from 'node:test';
import fc from 'fast-check';
import { systemClock } from '../../src/core/clock.ts';
import { silentLogger } from '../../src/core/log.ts';
import type { CustomFieldNames, LogOutputOptions } from '../../src/db/control-store.ts';
import { createEdgeService } from '../../src/edge/index.ts';
import type { DeployedRoutes } from '../../src/edge/edge-service.ts';
import { requestFramingProblem } from '../../src/edge/request-framing.ts';
import { FileRoots, HTTP_REQUESTS_FIELDS, isFilledField } from '../../src/logs/index.ts';
import { LogPipeline } from '../../src/logs/log-pipeline.ts';
import { openStoreEngine } from '../../src/store/engine/open-store-engine.ts';
import { openTestControlStore, openTestDatabase } from '../helpers/control-store.ts';
import { fileLines } from '../helpers/delivered-logs.ts';
import { statusOf } from '../helpers/raw-connections.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { jobFields, ndjsonOutput } from '../helpers/log-fixtures.ts';
import { listen } from '../helpers/listen.ts';

const ZONE = 'e'.repeat(32);
const OUTPUT = ndjsonOutput([
  'RayID',
  'ClientRequestHost',
  'ClientRequestPath',
  'ClientRequestMethod',
  'EdgeResponseStatus',
  'OriginResponseStatus',
  'EdgeResponseBytes',
  'RequestHeaders',
  'ResponseHeaders',
  'Cookies',
]);

interface SetupOptions {
  /** The zone's name (default example.test). */
  zoneName?: string;
  /** Deployed scripts as the edge asks for them (deployed-scripts.ts). */
  deployed?: DeployedRoutes;
}

async function setup(t: TestContext, origin: string | null, fields: CustomFieldNames, output: LogOutputOptions = OUTPUT, options: SetupOptions = {}) {
  const dataDir = tempDir(t);
  // Added before the database's and the control store's own closes (after-hooks run in order):
  // the edge, the pipeline and the engine stop while the stores are still open.
  const stops: Array<() => Promise<void>> = [];
  t.after(async () => {
    for (const stop of stops) await stop();
  });
  const database = await openTestDatabase(t, { clock: systemClock });
  const engine = await openStoreEngine({ dataDir, ...(database ? { database } : {}) });
  const control = await openTestControlStore(t, { dataDir, clock: systemClock, database });
  const now = Date.now();
  await control.createAccount({ id: 'a'.repeat(32), email: 'o@example.test', name: 'o', keyHash: 'x', created: now });
  await control.createZone({
    id: ZONE,
    accountId: 'a'.repeat(32),
    name: options.zoneName ?? 'example.test',
    origin,
    paused: false,
    created: now,
    modified: now,
  });
  const setFields = (names: CustomFieldNames) =>
    control.putEntrypoint(ZONE, 'http_log_custom_fields', (current) => ({
      id: current?.id ?? 'r'.repeat(32),
      zoneId: ZONE,
      name: 'fields',
      description: '',
      kind: 'zone',
      phase: 'http_log_custom_fields',
      version: (current?.version ?? 0) + 1,
      lastUpdated: Date.now(),
      rules: [
        {
          id: 'u'.repeat(32),
          version: 1,
          ref: 'u'.repeat(32),
          action: 'log_custom_field',
          expression: 'true',
          description: '',
          enabled: true,
          actionParameters: names,
          lastUpdated: Date.now(),
        },
      ],
    }));
  await setFields(fields);
  const out = tempDir(t);
  await control.createJob(ZONE, () => ({ ...jobFields(ZONE, `file://${out}`, output, now), name: 'all' }));
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
  const edge = createEdgeService({
    zones: control,
    pipeline,
    clock: systemClock,
    logger: silentLogger,
    origin: { connectTimeoutMs: 500, responseTimeoutMs: 400 },
    ...(options.deployed ? { deployed: options.deployed } : {}),
  });
  const port = await listen(createServer(edge.handler), t);
  stops.push(
    () => edge.close(),
    () => pipeline.close(),
    () => engine.close(),
  );
  const delivered = (): Array<Record<string, unknown>> => fileLines<Record<string, unknown>>(out);
  const waitFor = async (count: number) => {
    const deadline = Date.now() + 5_000;
    while (delivered().length < count) {
      if (Date.now() > deadline) throw new Error(`only ${delivered().length} of ${count} records delivered`);
      await sleep(25);
    }
    return delivered();
  };
  return { port, setFields, waitFor };
}

const pick = (answer: { status: number; body: string }) => [answer.status, answer.body];

/** A raw HTTP/1.1 request, so repeated headers and exact names reach the edge as written. */
function send(
  port: number,
  options: { host: string; path?: string; method?: string; headers?: string[]; body?: string },
): Promise<{ status: number; headers: IncomingMessage['headers']; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({
      host: '127.0.0.1',
      port,
      path: options.path ?? '/',
      method: options.method ?? 'GET',
      headers: ['Host', options.host, ...(options.headers ?? [])] as unknown as Record<string, string>,
    });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

test(
  'proxies to the origin with streaming bodies; hop-by-hop headers stay behind; records carry first-instance custom fields',
  { timeout: 10_000 },
  async (t) => {
    let seen: IncomingMessage['headers'] = {};
    const origin = createServer((req, res) => {
      seen = req.headers;
      let body = '';
      req.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      req.on('end', () => {
        res.writeHead(201, [
          'Content-Type',
          'text/plain',
          'Set-Cookie',
          'first=1',
          'Set-Cookie',
          'second=2',
          'X-Origin',
          'yes',
          'Connection',
          'X-Hop',
          'X-Hop',
          'hidden',
        ]);
        res.end(`echo:${body}:${req.url}`);
      });
    });
    const originPort = await listen(origin, t);
    const edge = await setup(t, `http://127.0.0.1:${originPort}`, {
      requestFields: ['x-trace', 'x-forwarded-for'],
      responseFields: ['set-cookie', 'x-origin'],
      cookieFields: ['session'],
    });

    const answer = await send(edge.port, {
      host: 'api.example.test',
      path: '/items?x=1',
      method: 'POST',
      body: 'hello',
      headers: [
        'X-Trace',
        'first',
        'x-trace',
        'second',
        'Cookie',
        'session=abc; Session=no',
        'Proxy-Connection',
        'keep-alive',
        'Connection',
        'keep-alive, X-Drop',
        'X-Drop',
        'gone',
      ],
    });
    assert.equal(answer.status, 201);
    assert.equal(answer.body, 'echo:hello:/items?x=1');
    assert.match(String(answer.headers['edgeport-ray']), /^[0-9a-f]{16}$/);
    assert.equal(answer.headers['x-hop'], undefined, "a header the origin's Connection names is not forwarded");
    assert.equal(seen['proxy-connection'], undefined);
    assert.equal(seen['x-drop'], undefined, 'headers named in Connection are hop-by-hop');
    assert.equal(seen.host, 'api.example.test');
    assert.equal(seen['x-forwarded-for'], '127.0.0.1');

    const [line] = await edge.waitFor(1);
    assert.equal(line!.RayID, answer.headers['edgeport-ray']);
    assert.equal(line!.ClientRequestHost, 'api.example.test');
    assert.equal(line!.EdgeResponseStatus, 201);
    assert.equal(line!.OriginResponseStatus, 201);
    assert.equal(line!.EdgeResponseBytes, Buffer.byteLength('echo:hello:/items?x=1'));
    assert.deepEqual(line!.RequestHeaders, { 'x-trace': 'first' }, 'first instance; the x-forwarded-for the edge added is not an original header');
    assert.deepEqual(line!.ResponseHeaders, { 'set-cookie': 'first=1', 'x-origin': 'yes' });
    assert.deepEqual(line!.Cookies, { session: 'abc' });
  },
);

test(
  'a line of every dataset field: exactly the fields isFilledField names have values, the others are null (what the dashboard offers rests on it)',
  { timeout: 10_000 },
  async (t) => {
    const origin = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'));
    const every = Object.keys(HTTP_REQUESTS_FIELDS);
    const edge = await setup(
      t,
      `http://127.0.0.1:${await listen(origin, t)}`,
      { requestFields: ['x-a'], responseFields: ['content-type'], cookieFields: ['c'] },
      { ...OUTPUT, fieldNames: every },
    );
    await send(edge.port, { host: 'example.test', path: '/p?q=1', headers: ['X-A', '1', 'Cookie', 'c=2', 'User-Agent', 'ua', 'Referer', 'http://r.test/'] });
    const [line] = await edge.waitFor(1);
    assert.deepEqual(Object.keys(line!), every, 'the line has every field, in order');
    const withValues = every.filter((name) => line![name] !== null);
    assert.deepEqual(withValues, every.filter(isFilledField), 'the fields with values are the ones marked filled');
    assert.ok(withValues.length > 20);
  },
);

test('a ruleset update applies from the next request on', { timeout: 10_000 }, async (t) => {
  const origin = createServer((_req, res) => res.end('ok'));
  const edge = await setup(t, `http://127.0.0.1:${await listen(origin, t)}`, { requestFields: ['x-a'], responseFields: [], cookieFields: [] });
  await send(edge.port, { host: 'example.test', headers: ['X-A', '1', 'X-B', '2'] });
  await edge.setFields({ requestFields: ['x-b'], responseFields: [], cookieFields: [] });
  await send(edge.port, { host: 'example.test', headers: ['X-A', '1', 'X-B', '2'] });
  const lines = await edge.waitFor(2);
  assert.deepEqual(
    lines.map((l) => l.RequestHeaders),
    [{ 'x-a': '1' }, { 'x-b': '2' }],
  );
});

test('unknown host, no origin, origin down and origin timeout answer clearly, and each still yields a record', { timeout: 10_000 }, async (t) => {
  const hanging = createServer(() => {
    /* never answers */
  });
  const hangingPort = await listen(hanging, t);
  const edge = await setup(t, `http://127.0.0.1:${hangingPort}`, { requestFields: [], responseFields: [], cookieFields: [] });
  const timeout = await send(edge.port, { host: 'example.test', path: '/slow' });
  assert.equal(timeout.status, 524);
  assert.match(timeout.body, /did not answer in time/);

  const unknown = await send(edge.port, { host: 'nowhere.test' });
  assert.equal(unknown.status, 530);
  assert.match(unknown.body, /no zone on this edgeport serves the host "nowhere\.test"/);

  const lines = await edge.waitFor(1);
  assert.equal(lines[0]!.EdgeResponseStatus, 524);
  assert.equal(lines[0]!.OriginResponseStatus, 0);
});

test(
  "a zone without an origin answers 1016 naming the host asked for, never the zone's name or id (any visitor sees the page)",
  { timeout: 10_000 },
  async (t) => {
    const edge = await setup(t, null, { requestFields: [], responseFields: [], cookieFields: [] });
    const answer = await send(edge.port, { host: 'www.example.test', path: '/' });
    assert.equal(answer.status, 530);
    assert.match(answer.body, /1016/);
    assert.match(answer.body, /the zone serving "www\.example\.test" has no origin/);
    assert.ok(!answer.body.includes(ZONE), 'the zone id stays with its owner');
    assert.ok(!answer.body.includes('"example.test"'), 'the zone name stays with its owner');
  },
);

/** Deployed scripts answering `<name> <path>`: `routes` by path prefix (with the account whose route it is), dev hosts by name. */
function deployedScripts(routes: Record<string, string>, devHosts: Record<string, string>): DeployedRoutes {
  const script = (name: string, accountId: string) => ({
    accountId,
    handle: (req: IncomingMessage, res: ServerResponse) => res.end(`${name} ${req.url}`),
  });
  return {
    devDomain: 'workers.localhost',
    match: (_host, path) => {
      const prefix = Object.keys(routes).find((candidate) => path.startsWith(candidate));
      return prefix === undefined ? undefined : script(`route ${prefix}`, routes[prefix]!);
    },
    devMatch: (host) => (devHosts[host] === undefined ? undefined : script(`dev ${host}`, devHosts[host]!)),
  };
}

test(
  "the dev domain's hosts go to their scripts before any zone: a zone named under it (made before that was refused) gets none of them, nor their lines",
  { timeout: 10_000 },
  async (t) => {
    const origin = createServer((req, res) => res.end('origin'));
    const originPort = await listen(origin, t);
    // The zone is account a's; alice's dev host serves account b's script.
    const edge = await setup(t, `http://127.0.0.1:${originPort}`, { requestFields: ['authorization'], responseFields: [], cookieFields: ['session'] }, OUTPUT, {
      zoneName: 'workers.localhost',
      deployed: deployedScripts({ '/': 'a'.repeat(32) }, { 'hello.alice.workers.localhost': 'b'.repeat(32) }),
    });
    const headers = ['Authorization', 'Bearer alice', 'Cookie', 'session=alice'];
    assert.deepEqual(pick(await send(edge.port, { host: 'hello.alice.workers.localhost', path: '/x', headers })), [
      200,
      'dev hello.alice.workers.localhost /x',
    ]);
    for (const host of ['workers.localhost', 'nobody.alice.workers.localhost', 'HELLO.ALICE.WORKERS.LOCALHOST.:8080']) {
      const answer = await send(edge.port, { host, path: '/y', headers });
      if (host.startsWith('HELLO')) {
        assert.deepEqual(pick(answer), [200, 'dev hello.alice.workers.localhost /y'], 'the Host is compared as a name (case, trailing dot, port)');
        continue;
      }
      assert.equal(answer.status, 404, `${host}: neither the zone's origin nor its account's route`);
      assert.match(
        answer.body,
        /^error 404: nothing is served at "[a-z.]+": under workers\.localhost, only <script>\.<account subdomain>\.workers\.localhost serves/,
      );
    }
    // The zone's job gets nothing: the pipeline delivers every 50 ms.
    await sleep(500);
    assert.deepEqual(await edge.waitFor(0), []);
  },
);

test(
  "a deployed route serves only on a zone of its own account, and a zone's lines are only of requests served for its account",
  { timeout: 10_000 },
  async (t) => {
    const origin = createServer((req, res) => res.end('origin'));
    const originPort = await listen(origin, t);
    // Account a's zone; a route of account b's (left by a deleted zone of b's) and one of a's.
    const edge = await setup(t, `http://127.0.0.1:${originPort}`, { requestFields: ['authorization'], responseFields: [], cookieFields: [] }, OUTPUT, {
      deployed: deployedScripts({ '/b/': 'b'.repeat(32), '/a/': 'a'.repeat(32) }, {}),
    });
    assert.deepEqual(
      pick(await send(edge.port, { host: 'example.test', path: '/b/1', headers: ['Authorization', 'Bearer visitor'] })),
      [200, 'origin'],
      "b's route does not take a's visitors",
    );
    assert.deepEqual(pick(await send(edge.port, { host: 'example.test', path: '/a/1' })), [200, 'route /a/ /a/1']);
    const lines = await edge.waitFor(2);
    assert.deepEqual(lines.map((line) => [line.ClientRequestPath, line.EdgeResponseStatus]).sort(), [
      ['/a/1', 200],
      ['/b/1', 200],
    ]);
  },
);

test('an origin that refuses connections answers 521 and is logged', { timeout: 10_000 }, async (t) => {
  const closed = createServer();
  const port = await listen(closed, t);
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const edge = await setup(t, `http://127.0.0.1:${port}`, { requestFields: [], responseFields: [], cookieFields: [] });
  const down = await send(edge.port, { host: 'example.test' });
  assert.equal(down.status, 521);
  assert.match(down.body, /refused the connection/);
  const [line] = await edge.waitFor(1);
  assert.equal(line!.EdgeResponseStatus, 521);
});

/** Writes `raw` on a connection of its own; resolves with what came back (until close) and how long it took. */
function sendRaw(port: number, raw: string): Promise<{ text: string; ms: number }> {
  return new Promise((resolve) => {
    const started = performance.now();
    const socket = connect(port, '127.0.0.1', () => socket.write(raw));
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
    });
    socket.on('error', () => {
      /* a reset after the answer is a close */
    });
    socket.on('close', () => resolve({ text, ms: performance.now() - started }));
    socket.setTimeout(8_000, () => socket.destroy());
  });
}

test(
  'an unsupported transfer coding or an Upgrade request with a (malformed) body gets 400 at once and never reaches the origin',
  { timeout: 20_000 },
  async (t) => {
    const reached: string[] = [];
    const offered: string[] = [];
    const origin = createServer((req, res) => {
      reached.push(`${req.method} ${req.url}`);
      for (const name of ['upgrade', 'http2-settings']) if (req.headers[name] !== undefined) offered.push(name);
      req.resume();
      req.on('end', () => res.end('origin ok'));
    });
    const { port } = await setup(t, `http://127.0.0.1:${await listen(origin, t)}`, { requestFields: [], responseFields: [], cookieFields: [] });
    const head = 'POST /upload HTTP/1.1\r\nHost: example.test\r\n';
    const refusals = [
      { raw: `${head}Transfer-Encoding: gzip, chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`, message: /Transfer-Encoding "gzip, chunked" is not supported/ },
      {
        raw: `${head}Connection: Upgrade\r\nUpgrade: websocket\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nnot a chunk\r\n`,
        message: /an Upgrade request may not carry a body/,
      },
      { raw: `${head}Connection: Upgrade\r\nUpgrade: h2c, websocket\r\nContent-Length: 5\r\n\r\nhello`, message: /an Upgrade request may not carry a body/ },
    ];
    for (const { raw, message } of refusals) {
      const { text, ms } = await sendRaw(port, raw);
      assert.equal(statusOf(text), 400, text);
      assert.match(text, /\r\nconnection: close\r\n/i);
      assert.match(text, message);
      assert.ok(ms < 3_000, `answered after ${ms} ms`);
    }
    assert.deepEqual(reached, [], 'no origin saw them');
    // Plain chunked bodies and bodiless upgrades still go through (the origin sees no Upgrade: it is hop-by-hop).
    const chunked = await sendRaw(port, `${head}Transfer-Encoding: Chunked\r\nConnection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n`);
    assert.equal(statusOf(chunked.text), 200, chunked.text);
    const upgrade = await sendRaw(port, 'GET /ws HTTP/1.1\r\nHost: example.test\r\nConnection: Upgrade, close\r\nUpgrade: websocket\r\n\r\n');
    assert.equal(statusOf(upgrade.text), 200, upgrade.text);
    // An upgrade to h2c (curl --http2) is an ordinary request, body and all; the offer goes no further.
    const h2c = await sendRaw(
      port,
      `${head}Connection: Upgrade, HTTP2-Settings, close\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\nContent-Length: 5\r\n\r\nhello`,
    );
    assert.equal(statusOf(h2c.text), 200, h2c.text);
    assert.deepEqual(reached, ['POST /upload', 'GET /ws', 'POST /upload']);
    assert.deepEqual(offered, [], 'the origin saw no Upgrade and no HTTP2-Settings');
  },
);

test('requestFramingProblem: chunked alone passes in any case and spacing; any other coding list is refused', { timeout: 10_000 }, () => {
  fc.assert(
    fc.property(fc.constantFrom('chunked', 'Chunked', ' CHUNKED ', 'chunked '), (coding) => requestFramingProblem({ 'transfer-encoding': coding }) === null),
  );
  fc.assert(
    fc.property(
      fc
        .array(fc.constantFrom('gzip', 'deflate', 'compress', 'identity', 'chunked', 'x-custom'), { minLength: 1, maxLength: 4 })
        .filter((list) => list.length > 1 || list[0] !== 'chunked'),
      (list) => requestFramingProblem({ 'transfer-encoding': list.join(', ') }) !== null,
    ),
  );
  assert.equal(requestFramingProblem({ upgrade: 'websocket' }), null);
  assert.equal(requestFramingProblem({ upgrade: 'websocket', 'content-length': '0' }), null);
  assert.notEqual(requestFramingProblem({ upgrade: 'websocket', 'content-length': '1' }), null);
  assert.equal(requestFramingProblem({ upgrade: 'h2c', 'content-length': '1' }), null);
  assert.equal(requestFramingProblem({ upgrade: 'H2C', 'content-length': '3' }), null);
  // A chunked body of one is still refused: the listener could not see a bad chunk.
  assert.notEqual(requestFramingProblem({ upgrade: 'h2c', 'transfer-encoding': 'chunked' }), null);
  assert.equal(requestFramingProblem({ 'content-length': '10' }), null);
});
