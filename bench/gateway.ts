/**
 * JSON-RPC gateway: eth_blockNumber, eth_getBalance, eth_call and a batch of 10 over real HTTP,
 * each sent to an upstream node directly and through the gateway in front of it, plus cache hits.
 * The upstream is an edgeport gateway serving the embedded chain in a child process (so "direct"
 * is also the embedded chain over HTTP); the gateway under test runs in this process with that
 * node as its only upstream, rate limit off. Throughput at 32 connections; latency at 2.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { systemClock } from '../src/core/clock.ts';
import { silentLogger } from '../src/core/log.ts';
import { gatewaySectionSchema, toGatewayConfig, type GatewaySection } from '../src/config/gateway.ts';
import { createGatewayService, DEV_ACCOUNTS } from '../src/gateway/index.ts';
import { runLoad } from './load.ts';
import { formatResult } from './stats.ts';

const ACCOUNT = DEV_ACCOUNTS[1]!.address;
/** Init code returning 42 (eth_call runs it without deploying). */
const CALL_DATA = '0x602a60005260206000f3';

const call = (method: string, params: unknown[], id: number | string = 1) => ({ jsonrpc: '2.0', id, method, params });
const WORKLOADS: Array<{ name: string; body: unknown }> = [
  { name: 'eth_blockNumber', body: call('eth_blockNumber', []) },
  { name: 'eth_getBalance', body: call('eth_getBalance', [ACCOUNT, 'latest']) },
  { name: 'eth_call', body: call('eth_call', [{ to: ACCOUNT, data: CALL_DATA }, 'latest']) },
  {
    name: 'batch of 10',
    body: Array.from({ length: 10 }, (_, i) => (i % 3 === 0 ? call('eth_blockNumber', [], i) : i % 3 === 1 ? call('eth_getBalance', [DEV_ACCOUNTS[i]!.address, 'latest'], i) : call('eth_call', [{ data: CALL_DATA }, 'latest'], i))),
  },
];

async function startGateway(section: GatewaySection) {
  const service = await createGatewayService({ networks: toGatewayConfig(gatewaySectionSchema.parse(section)), clock: systemClock, logger: silentLogger });
  const server = createServer(service.handler);
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await service.close();
    },
  };
}

/** Child-process mode: an upstream node (embedded sepolia) that prints its URL. */
async function serveUpstream(): Promise<void> {
  const gateway = await startGateway({ rate_limit: { requests_per_second: 0 }, networks: [{ name: 'rinkeby', enabled: false }] });
  process.stdout.write(`${gateway.url}\n`);
  process.on('SIGTERM', () => void gateway.close().then(() => process.exit(0)));
}

async function spawnUpstream(): Promise<{ url: string; stop(): void }> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--serve-upstream'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.once('data', (chunk: Buffer) => resolve(chunk.toString().trim()));
    child.once('exit', (code) => reject(new Error(`upstream node exited with ${code}`)));
  });
  return { url, stop: () => child.kill('SIGTERM') };
}

export async function benchGateway(seconds: number): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'edgeport-bench-gateway-'));
  const upstream = await spawnUpstream();
  const gateway = await startGateway({ rate_limit: { requests_per_second: 0 }, networks: [{ name: 'sepolia', upstreams: [`${upstream.url}/v1/sepolia`] }, { name: 'rinkeby', enabled: false }] });
  const lines: string[] = [];
  const measure = async (name: string, url: string, body: unknown, connections: number) => {
    const text = JSON.stringify(body);
    const lua = join(dir, 'post.lua');
    writeFileSync(lua, `wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = ${JSON.stringify(text)}\n`);
    const result = await runLoad({
      url, connections, seconds, lua, env: {},
      autocannonRequest: () => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: text }),
    });
    const line = formatResult({ name: `${name} (${result.tool}, c${connections})`, ops: result.requestsPerSec * seconds, seconds, p50: result.p50, p99: result.p99 })
      + (result.errors ? `  errors ${result.errors}` : '');
    lines.push(line);
    console.log(line);
  };
  try {
    // Warm both (JIT, connection pools) before measuring.
    for (const url of [`${upstream.url}/v1/sepolia`, `${gateway.url}/v1/sepolia`]) {
      for (let i = 0; i < 200; i++) await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(WORKLOADS[i % 4]!.body) }).then((r) => r.text());
    }
    for (const workload of WORKLOADS) {
      await measure(`direct ${workload.name}`, `${upstream.url}/v1/sepolia`, workload.body, 32);
      await measure(`gateway ${workload.name}`, `${gateway.url}/v1/sepolia`, workload.body, 32);
    }
    await measure('gateway cache hit getBlockByNumber', `${gateway.url}/v1/sepolia`, call('eth_getBlockByNumber', ['0x0', false]), 32);
    await measure('direct eth_blockNumber', `${upstream.url}/v1/sepolia`, WORKLOADS[0]!.body, 2);
    await measure('gateway eth_blockNumber', `${gateway.url}/v1/sepolia`, WORKLOADS[0]!.body, 2);
  } finally {
    await gateway.close();
    upstream.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return lines;
}

if (process.argv.includes('--serve-upstream') && process.argv[1] === fileURLToPath(import.meta.url)) await serveUpstream();
