/**
 * The listeners of `edgeport start` under attack, measured: 2,000 idle partial connections from
 * one address on every listener do not stop another client's requests (its latency and the
 * server's RSS before, during and after are printed); over the total limit a new connection is
 * refused at once; a slowloris head and a flood of partial heads are cut at the header timeout;
 * and while the server's event loop is starved (SIGSTOP/SIGCONT), new requests get each
 * surface's 503 + Retry-After, /metrics still answers, and nothing is shed otherwise.
 */
import assert from 'node:assert/strict';
import { Agent as HttpAgent, createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { CreateBucketCommand, ListBucketsCommand, S3Client } from '@aws-sdk/client-s3';
import { Agent, request } from 'undici';
import { startEdgeport, type EdgeportServer } from '../helpers/edgeport-server.ts';
import { managementApi } from '../helpers/management-api.ts';
import { residentBytes } from '../helpers/process-memory.ts';
import { bodyOf, headerOf, openMany, openRaw, statusOf, type RawConnection } from '../helpers/raw-connections.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const ADMIN = { EDGEPORT_ADMIN_EMAIL: 'owner@example.test', EDGEPORT_ADMIN_KEY: 'e2e-admin-key-0123456789' };
const S3_KEY = { accessKeyId: 'EDGEPORTE2EKEY01', secretAccessKey: 'e2e-secret-0123456789abcdef' };
const ENV = { ...ADMIN, EDGEPORT_S3_ACCESS_KEY_ID: S3_KEY.accessKeyId, EDGEPORT_S3_SECRET_ACCESS_KEY: S3_KEY.secretAccessKey };
const LISTENERS = ['edge', 'management API', 'gateway', 'S3-compatible API'] as const;
const MiB = 1024 * 1024;

async function startServer(t: TestContext, env: Record<string, string> = {}): Promise<EdgeportServer> {
  const server = await startEdgeport({ owner: t, dataDir: join(tempDir(t), 'data'), env: { ...ENV, ...env } });
  return server;
}

async function startOrigin(t: TestContext): Promise<string> {
  const origin: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end('origin ok'));
  });
  await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        origin.closeAllConnections();
        origin.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
}

const portOf = (server: EdgeportServer, label: string): number => Number(new URL(server.urls[label]!).port);

/** One normal request per service, from `localAddress`, through real clients; resolves with its status. */
function normalClient(server: EdgeportServer, localAddress: string) {
  const dispatcher = new Agent({ connect: { localAddress } });
  const s3 = new S3Client({
    endpoint: server.urls['S3-compatible API'],
    region: 'auto',
    forcePathStyle: true,
    credentials: S3_KEY,
    maxAttempts: 1,
    requestHandler: { httpAgent: new HttpAgent({ keepAlive: true, localAddress }) },
  });
  const auth = { 'x-auth-email': ADMIN.EDGEPORT_ADMIN_EMAIL, 'x-auth-key': ADMIN.EDGEPORT_ADMIN_KEY };
  const status = async (response: Promise<{ statusCode: number; body: { text(): Promise<string> } }>): Promise<number> => {
    const answer = await response;
    await answer.body.text();
    return answer.statusCode;
  };
  const calls: Record<(typeof LISTENERS)[number], () => Promise<number>> = {
    edge: () => status(request(`${server.urls.edge}/`, { dispatcher, headers: { host: 'limits.test' } })),
    'management API': () => status(request(`${server.urls['management API']}/zones`, { dispatcher, headers: auth })),
    gateway: () =>
      status(
        request(`${new URL(server.urls.gateway!).origin}/v1/sepolia`, {
          dispatcher,
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId' }),
        }),
      ),
    'S3-compatible API': async () => (await s3.send(new ListBucketsCommand({}))).$metadata.httpStatusCode ?? 0,
  };
  return {
    calls,
    close: async () => {
      s3.destroy();
      await dispatcher.close();
    },
  };
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

test(
  '2,000 idle partial connections from one address on every listener: another client is served at once, memory stays bounded',
  { timeout: 240_000 },
  async (t) => {
    const origin = await startOrigin(t);
    const server = await startServer(t);
    const pid = server.child.pid!;
    const api = managementApi(server.urls['management API']!, ADMIN.EDGEPORT_ADMIN_EMAIL, ADMIN.EDGEPORT_ADMIN_KEY);
    const [account] = await api.call<Array<{ id: string }>>('GET', '/accounts');
    await api.call('POST', '/zones', { name: 'limits.test', account: { id: account!.id }, origin });
    const other = normalClient(server, '127.0.0.2');
    t.after(() => other.close());
    const round = async (): Promise<number[]> => {
      const latencies: number[] = [];
      for (const label of LISTENERS) {
        const started = performance.now();
        assert.equal(await other.calls[label](), 200, `${label} answers the other client`);
        latencies.push(performance.now() - started);
      }
      return latencies;
    };
    for (let i = 0; i < 3; i++) await round(); // warm-up
    const quiet: number[] = [];
    for (let i = 0; i < 10; i++) quiet.push(...(await round()));
    const rssBefore = residentBytes(pid);

    let rssPeak = rssBefore;
    const sampler = setInterval(() => {
      rssPeak = Math.max(rssPeak, residentBytes(pid));
    }, 20);
    t.after(() => clearInterval(sampler));
    const floodStarted = performance.now();
    const flood: RawConnection[][] = [];
    const duringFlood: number[] = [];
    const flooding = (async () => {
      for (const label of LISTENERS) {
        flood.push(await openMany(2_000, portOf(server, label), { localAddress: '127.0.0.1', send: 'GET / HTTP/1.1\r\nHost: limits.test\r\nX-Slow: ' }));
      }
    })();
    // The other client keeps going while the flood opens, and after.
    let floodOpen = false;
    void flooding.then(() => {
      floodOpen = true;
    });
    while (!floodOpen) duringFlood.push(...(await round()));
    const floodMs = performance.now() - floodStarted;
    await sleep(500);
    const refusedAnswers = flood.map((connections) => connections.filter((c) => c.socket.destroyed || c.received() !== ''));
    const held = flood.map((connections) => connections.filter((c) => !c.socket.destroyed && c.received() === '').length);
    for (let i = 0; i < 10; i++) duringFlood.push(...(await round()));
    const rssDuring = residentBytes(pid);
    const refusedTimes = (await Promise.all(refusedAnswers.flat().map((c) => c.closed))).map((c) => c.afterMs);

    for (const connections of flood) for (const c of connections) c.socket.destroy();
    await sleep(2_000);
    clearInterval(sampler);
    const rssAfter = residentBytes(pid);
    const afterFlood: number[] = [];
    for (let i = 0; i < 5; i++) afterFlood.push(...(await round()));

    console.log(
      [
        `flood: 4 x 2000 partial connections from 127.0.0.1 opened in ${Math.round(floodMs)} ms; held per listener: ${held.join(', ')};`,
        `  refused ${refusedTimes.length} with 503, closed after p50 ${percentile(refusedTimes, 0.5).toFixed(1)} ms, max ${Math.max(...refusedTimes).toFixed(1)} ms`,
        `other client (127.0.0.2), one request per listener: quiet p50 ${percentile(quiet, 0.5).toFixed(1)} ms max ${Math.max(...quiet).toFixed(1)} ms;`,
        `  during the flood (${duringFlood.length} requests) p50 ${percentile(duringFlood, 0.5).toFixed(1)} ms p99 ${percentile(duringFlood, 0.99).toFixed(1)} ms max ${Math.max(...duringFlood).toFixed(1)} ms;`,
        `  after p50 ${percentile(afterFlood, 0.5).toFixed(1)} ms`,
        `server RSS: before ${(rssBefore / MiB).toFixed(1)} MiB, peak ${(rssPeak / MiB).toFixed(1)} MiB, with the flood held ${(rssDuring / MiB).toFixed(1)} MiB, after ${(rssAfter / MiB).toFixed(1)} MiB`,
      ].join('\n'),
    );
    // At most max_connections_per_client (256) per listener; a few slots of 127.0.0.1 are this process's own keep-alive connections.
    assert.ok(
      held.every((count) => count <= 256 && count >= 240),
      `held per listener: ${held.join(', ')}`,
    );
    assert.equal(refusedTimes.length + held.reduce((a, b) => a + b), 8_000);
    for (const connections of refusedAnswers) {
      for (const c of connections) {
        const { text } = await c.closed;
        assert.equal(statusOf(text), 503);
      }
    }
    assert.ok(Math.max(...duringFlood) < 5_000, 'no request of the other client waited for the flood');
    assert.ok(rssPeak - rssBefore < 256 * MiB, `RSS grew ${((rssPeak - rssBefore) / MiB).toFixed(1)} MiB`);
  },
);

test(
  'over the total limit a new connection is refused at once; partial heads (and a slowloris) are cut at the header timeout',
  { timeout: 120_000 },
  async (t) => {
    const server = await startServer(t, { EDGEPORT_LIMITS_MAX_CONNECTIONS: '100', EDGEPORT_LIMITS_HEADER_TIMEOUT_MS: '3000' });
    const s3Port = portOf(server, 'S3-compatible API');
    // One connection from each of 99 addresses: no client holds more than a newcomer would, so a full listener refuses rather than evicts.
    const held = await Promise.all(
      Array.from({ length: 99 }, (_, i) => openRaw(s3Port, { localAddress: `127.0.1.${i + 1}`, send: 'GET / HTTP/1.1\r\nHost: ' })),
    );
    t.after(() => held.forEach((c) => c.socket.destroy()));
    // The hundredth: a slowloris, one byte every second.
    const slowloris = await openRaw(s3Port, { localAddress: '127.0.0.3', send: 'G' });
    const head = 'ET /bucket/key HTTP/1.1\r\nHost: s3.test\r\nX-Amz-Date: 20260101T000000Z\r\n';
    let sent = 0;
    const trickle = setInterval(() => {
      if (!slowloris.socket.destroyed) slowloris.socket.write(head[sent++ % head.length]!);
    }, 1_000);
    t.after(() => clearInterval(trickle));

    const started = performance.now();
    const refused = await openRaw(s3Port, { localAddress: '127.0.0.2', send: 'GET / HTTP/1.1\r\nHost: s3.test\r\n\r\n' });
    const { text } = await refused.closed;
    const refusedMs = performance.now() - started;
    assert.equal(statusOf(text), 503);
    assert.equal(headerOf(text, 'retry-after'), '1');
    assert.match(bodyOf(text), /<Code>SlowDown<\/Code><Message>edgeport has too many open connections: at most 100 are allowed\./);
    assert.ok(refusedMs < 2_000, `refused after ${refusedMs} ms`);

    const cut = await Promise.all([...held, slowloris].map((c) => c.closed));
    clearInterval(trickle);
    const slow = cut.at(-1)!;
    console.log(
      `total limit 100: the 101st connection was refused in ${refusedMs.toFixed(1)} ms; the 99 partial heads were cut after ` +
        `${Math.round(Math.min(...cut.map((c) => c.afterMs)))}-${Math.round(Math.max(...cut.map((c) => c.afterMs)))} ms; the slowloris (${sent} bytes, one a second) after ${Math.round(slow.afterMs)} ms, header timeout 3000 ms`,
    );
    for (const c of cut) {
      assert.equal(statusOf(c.text), 408);
      assert.ok(c.afterMs >= 2_900 && c.afterMs < 8_000, `cut after ${c.afterMs} ms`);
    }
    const client = normalClient(server, '127.0.0.2');
    t.after(() => client.close());
    assert.equal(await client.calls['S3-compatible API'](), 200, 'the freed slots serve again');
  },
);

test(
  "while the event loop is starved, a crowd of new requests is shed with each surface's own 503 + Retry-After, a lone one is not; /metrics answers; nothing is shed otherwise",
  { timeout: 120_000 },
  async (t) => {
    const server = await startServer(t);
    const pid = server.child.pid!;
    const s3 = new S3Client({ endpoint: server.urls['S3-compatible API'], region: 'auto', forcePathStyle: true, credentials: S3_KEY });
    t.after(() => s3.destroy());
    await s3.send(new CreateBucketCommand({ Bucket: 'shed-test' }));
    const auth = `X-Auth-Email: ${ADMIN.EDGEPORT_ADMIN_EMAIL}\r\nX-Auth-Key: ${ADMIN.EDGEPORT_ADMIN_KEY}\r\n`;
    const rpc = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId' });
    // While starved, each checked request comes last on its connection after 20 pipelined ones, so they arrive in one loop turn: a
    // listener serves the first 16 requests after each sample of the loop's delay however far behind it runs (a pause of the loop's
    // own is no flood), and sheds beyond. S3 closes the connection after an unsigned request's 403, so its request comes alone.
    let crowd = false;
    const filler = (request: string): string => (crowd ? request.repeat(20) : '');
    const requests = (): Array<{ label: string; port: number; head: string }> => [
      {
        label: 'edge',
        port: portOf(server, 'edge'),
        head: `${filler('GET / HTTP/1.1\r\nHost: nozone.test\r\n\r\n')}GET / HTTP/1.1\r\nHost: nozone.test\r\nConnection: close\r\n\r\n`,
      },
      {
        label: 'api',
        port: portOf(server, 'management API'),
        head: `${filler(`GET /client/v4/zones HTTP/1.1\r\nHost: api\r\n${auth}\r\n`)}GET /client/v4/zones HTTP/1.1\r\nHost: api\r\n${auth}Connection: close\r\n\r\n`,
      },
      {
        label: 'gateway',
        port: portOf(server, 'gateway'),
        head: `${filler('GET /metrics HTTP/1.1\r\nHost: gw\r\n\r\n')}POST /v1/sepolia HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: ${rpc.length}\r\n\r\n${rpc}`,
      },
      { label: 's3', port: portOf(server, 'S3-compatible API'), head: 'GET /shed-test HTTP/1.1\r\nHost: s3\r\nConnection: close\r\n\r\n' },
      {
        label: 'metrics',
        port: portOf(server, 'gateway'),
        head: `${filler('GET /metrics HTTP/1.1\r\nHost: gw\r\n\r\n')}GET /metrics HTTP/1.1\r\nHost: gw\r\nConnection: close\r\n\r\n`,
      },
    ];
    /** Each label's last answer: the checked request's (the connection closes after it). */
    const send = async (): Promise<Array<{ label: string; text: string }>> =>
      Promise.all(
        requests().map(async ({ label, port, head }) => {
          const { text } = await (await openRaw(port, { localAddress: '127.0.0.2', send: head })).closed;
          return { label, text: text.split(/(?=HTTP\/1\.1 \d{3} )/).at(-1)! };
        }),
      );
    const expectedWhenServed: Record<string, number> = { edge: 530, api: 200, gateway: 200, s3: 403, metrics: 200 };
    // Never otherwise: before the starvation, everything is served.
    for (let i = 0; i < 5; i++) {
      for (const answer of await send()) assert.equal(statusOf(answer.text), expectedWhenServed[answer.label], `${answer.label} before`);
    }

    // The server stops (SIGSTOP); requests queue in the kernel; then it runs ~30 ms out of every 1.5 s.
    let answers: Array<{ label: string; text: string }> = [];
    process.kill(pid, 'SIGSTOP');
    crowd = true;
    try {
      let done = false;
      const sending = send().then((result) => {
        answers = result;
        done = true;
      });
      const starvedSince = performance.now();
      while (!done && performance.now() - starvedSince < 60_000) {
        await sleep(1_500);
        process.kill(pid, 'SIGCONT');
        await sleep(30);
        if (!done) process.kill(pid, 'SIGSTOP');
      }
      await sending;
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    const byLabel = Object.fromEntries(answers.map((a) => [a.label, a.text]));
    console.log(`starved (1.5 s stopped, ~30 ms running): ${answers.map((a) => `${a.label} ${statusOf(a.text)}`).join(', ')}`);
    for (const label of ['edge', 'api', 'gateway']) {
      assert.equal(statusOf(byLabel[label]!), 503, `${label} is shed: ${byLabel[label]}`);
      assert.equal(headerOf(byLabel[label]!, 'retry-after'), '1');
    }
    const message = 'edgeport is overloaded: new requests would wait more than 50 ms, so this one was not started. Retry after the Retry-After delay.';
    assert.equal(bodyOf(byLabel.edge!), `error 503: ${message}\n`);
    assert.deepEqual(JSON.parse(bodyOf(byLabel.api!)), { result: null, success: false, errors: [{ code: 10100, message }], messages: [] });
    assert.deepEqual(JSON.parse(bodyOf(byLabel.gateway!)), { jsonrpc: '2.0', id: null, error: { code: -32005, message } });
    // A lone request behind a pause is served (here, S3's 403 to an unsigned request); S3's SlowDown shape is in test/cli/listener-errors.test.ts.
    assert.equal(statusOf(byLabel.s3!), 403, 'a lone request is not shed');
    assert.equal(statusOf(byLabel.metrics!), 200, 'GET /metrics on the gateway is never shed');

    // Caught up: served again. The backlog of the starved turns is served first (on a busy machine
    // that takes a while), so wait until a round is served whole, then every round must be.
    crowd = false;
    const caughtUpBy = performance.now() + 30_000;
    while (!(await send()).every((answer) => statusOf(answer.text) === expectedWhenServed[answer.label])) {
      assert.ok(performance.now() < caughtUpBy, 'the server caught up within 30 s of the starvation');
      await sleep(250);
    }
    for (let i = 0; i < 5; i++) {
      for (const answer of await send()) assert.equal(statusOf(answer.text), expectedWhenServed[answer.label], `${answer.label} after`);
    }
  },
);
