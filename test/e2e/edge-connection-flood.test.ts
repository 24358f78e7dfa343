/**
 * The edge of `edgeport start` while 20 client addresses each hold as many slow connections (a
 * partial request head, never finished) as they may, reopening every one that closes: an honest
 * client from another address, opening a new connection for each request, is never refused and
 * is served within a second (p50 and p99 printed). Before fair shares and eviction, 20 addresses at
 * 256 connections took all 4,096 slots and almost every honest request got a 503.
 */
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startConnectionFlood } from '../helpers/connection-flood.ts';
import { onTestEnd } from '../helpers/cleanup.ts';
import { startEdgeport } from '../helpers/edgeport-server.ts';
import { managementApi } from '../helpers/management-api.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const ADMIN = { EDGEPORT_ADMIN_EMAIL: 'owner@example.test', EDGEPORT_ADMIN_KEY: 'e2e-admin-key-0123456789' };
const FLOOD_ADDRESSES = Array.from({ length: 20 }, (_, i) => `127.0.0.${i + 2}`);
const HONEST_ADDRESS = '127.0.0.30';

async function startOrigin(t: TestContext): Promise<string> {
  const origin: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end('origin ok'));
  });
  await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
  onTestEnd(
    t,
    () =>
      new Promise<void>((resolve) => {
        origin.closeAllConnections();
        origin.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
}

/** One GET on a connection of its own from `localAddress`; resolves with its status and how long it took. */
function honestGet(url: string, localAddress: string): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { host: 'flood.test' }, agent: false, localAddress, timeout: 10_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started }));
    });
    req.on('timeout', () => req.destroy(new Error('no answer within 10 s')));
    req.on('error', reject);
    req.end();
  });
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

test(
  '20 addresses holding every slow connection they may: an honest client is never refused and is served within a second',
  { timeout: 150_000 },
  async (t) => {
    const origin = await startOrigin(t);
    const server = await startEdgeport({ owner: t, dataDir: join(tempDir(t), 'data'), env: ADMIN });
    const api = managementApi(server.urls['management API']!, ADMIN.EDGEPORT_ADMIN_EMAIL, ADMIN.EDGEPORT_ADMIN_KEY);
    const [account] = await api.call<Array<{ id: string }>>('GET', '/accounts');
    await api.call('POST', '/zones', { name: 'flood.test', account: { id: account!.id }, origin });
    const edge = `${server.urls.edge}/`;
    for (let i = 0; i < 10; i++) assert.equal((await honestGet(edge, HONEST_ADDRESS)).status, 200);

    // 256 per address is the per-client limit (max_connections_per_client): 5,120 in all against 4,096 slots.
    const flood = startConnectionFlood({
      port: Number(new URL(edge).port),
      addresses: FLOOD_ADDRESSES,
      perAddress: 256,
      head: 'GET / HTTP/1.1\r\nHost: flood.test\r\nX-Slow: ',
    });
    onTestEnd(t, () => flood.stop());
    for (const until = performance.now() + 30_000; performance.now() < until; await sleep(250)) {
      if ((await flood.stats()).held >= 4_000) break;
    }
    const filled = await flood.stats();
    assert.ok(filled.held >= 3_800, `the flood holds most of the 4,096 slots: ${JSON.stringify(filled)}`);

    const answers: Array<{ status: number; ms: number }> = [];
    for (let i = 0; i < 150; i++) answers.push(await honestGet(edge, HONEST_ADDRESS));
    const during = await flood.stats();
    await flood.stop();

    const latencies = answers.map((a) => a.ms);
    const statuses = answers.reduce<Record<number, number>>((counts, a) => ({ ...counts, [a.status]: (counts[a.status] ?? 0) + 1 }), {});
    console.log(
      `flood: 20 addresses x 256 slow connections; held ${filled.held} once filled, ${during.held} after the honest requests ` +
        `(${during.answered} answered (503/408), ${during.closedSilently} closed to make room or timed out)`,
    );
    console.log(
      `honest client (${HONEST_ADDRESS}, a new connection per request): ${answers.length} requests, statuses ${JSON.stringify(statuses)}, ` +
        `p50 ${percentile(latencies, 0.5).toFixed(1)} ms, p90 ${percentile(latencies, 0.9).toFixed(1)} ms, p99 ${percentile(latencies, 0.99).toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms`,
    );
    assert.deepEqual(statuses, { 200: 150 }, 'no honest request is refused');
    assert.ok(percentile(latencies, 0.99) < 1_000, `honest p99 ${percentile(latencies, 0.99).toFixed(1)} ms`);
  },
);
