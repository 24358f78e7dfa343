/**
 * Floods of large bodies against the real `edgeport start` (default limits), with an honest
 * client on another address: 32 parallel 5 MB batches, and 12 concurrent eth_calls holding 5 MB
 * of data each (the flood runs in a worker thread, so the honest client's own event loop stays
 * free). Large bodies beyond the gateway's budget are refused with 503 before they are read, so
 * the honest client's eth_getBalance (a new address each time: the chain answers) keeps a p50
 * under 200 ms. When the shared event loop still falls behind, the listener itself sheds new
 * requests with 503 (src/cli/listener.ts), the honest client's too: those are counted, and must
 * stay rare.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { Agent } from 'undici';
import { startEdgeport } from '../helpers/edgeport-server.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { startBodyFlood, type BodyKind } from './body-flooder.ts';

const FLOOD_MS = 4_000;
const HONEST_P50_MS = 200;

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function floodWithHonestClient(t: TestContext, kind: BodyKind, parallel: number): Promise<void> {
  const server = await startEdgeport({ owner: t, dataDir: join(tempDir(t), 'data') });
  const endpoint = `${new URL(server.urls.gateway!).origin}/v1/sepolia`;
  const honestAgent = new Agent({ localAddress: '127.0.0.2' });
  t.after(() => honestAgent.close());
  let shed = 0;
  const getBalance = async (i: number): Promise<number> => {
    const started = performance.now();
    const response = await fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'eth_getBalance', params: [`0x${i.toString(16).padStart(40, '0')}`, 'latest'] }),
      dispatcher: honestAgent,
    } as RequestInit);
    const text = await response.text();
    if (response.status === 503 && /overloaded/i.test(text)) {
      shed += 1;
      return performance.now() - started;
    }
    assert.equal(response.status, 200, text);
    assert.equal((JSON.parse(text) as { result: string }).result, '0x0');
    return performance.now() - started;
  };
  await getBalance(0);
  const flood = startBodyFlood({ url: endpoint, parallel, kind });
  t.after(() => flood.stop().catch(() => undefined));
  const honest: number[] = [];
  await new Promise((resolve) => setTimeout(resolve, 300));
  const until = performance.now() + FLOOD_MS;
  for (let i = 1; performance.now() < until; i++) {
    honest.push(await getBalance(i));
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const stats = await flood.stop();
  const metrics = await (await fetch(`${new URL(endpoint).origin}/metrics`)).text();
  const refused = Number(/edgeport_gateway_overloaded_requests_total (\d+)/.exec(metrics)?.[1] ?? 0);
  t.diagnostic(
    `${parallel} × ${kind}: ${stats.sent} sent, statuses ${JSON.stringify(stats.statuses)}, ${stats.closed} closed while sending; ${refused} refused by the server`,
  );
  t.diagnostic(
    `honest eth_getBalance meanwhile: ${honest.length} calls (${shed} shed with 503), p50 ${percentile(honest, 50).toFixed(1)} ms, p99 ${percentile(honest, 99).toFixed(1)} ms`,
  );
  assert.ok(shed <= honest.length / 4, `${shed} of ${honest.length} honest calls were shed`);
  assert.ok(refused > 0, 'large bodies over the budget were refused');
  assert.ok((stats.statuses['200'] ?? 0) > 0, 'large bodies within the budget were served');
  assert.ok(percentile(honest, 50) < HONEST_P50_MS, `honest p50 ${percentile(honest, 50)} ms`);
}

test(
  '32 parallel 5 MB batches: the excess is refused with 503 before it is read, and an honest eth_getBalance keeps a p50 under 200 ms',
  { timeout: 90_000 },
  async (t) => {
    await floodWithHonestClient(t, 'batch-5mb', 32);
  },
);

test(
  '12 concurrent eth_calls with 5 MB of data: the excess is refused with 503, and an honest eth_getBalance keeps a p50 under 200 ms',
  { timeout: 90_000 },
  async (t) => {
    await floodWithHonestClient(t, 'call-data-5mb', 12);
  },
);
