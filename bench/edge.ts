/**
 * The edge through `edgeport start`: a 1 KiB origin called directly, then through the edge with
 * no log job, then with two jobs logging every request (file:// destinations). Latency at one
 * connection (the edge's added p50/p99) and throughput at 32 connections.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEdgeport } from '../test/helpers/edgeport-server.ts';
import { managementApi } from '../test/helpers/management-api.ts';
import { runLoad, type LoadResult } from './load.ts';

const ORIGIN = `
const body = Buffer.alloc(1024, 97);
require('node:http').createServer((req, res) => { req.resume(); res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 1024 }); res.end(body); })
  .listen(0, '127.0.0.1', function () { console.log(this.address().port); });
`;

async function startOrigin(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['-e', ORIGIN], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<string>((resolve) => child.stdout!.once('data', (d: Buffer) => resolve(d.toString().trim())));
  return { url: `http://127.0.0.1:${port}`, child };
}

export async function benchEdge(seconds: number): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'edgeport-bench-edge-'));
  const origin = await startOrigin();
  const email = 'bench@example.test';
  const key = 'bench-admin-key-0123456789';
  const server = await startEdgeport({ dataDir: join(dir, 'data'), env: { EDGEPORT_ADMIN_EMAIL: email, EDGEPORT_ADMIN_KEY: key, EDGEPORT_LOG_LEVEL: 'error' } });
  const lines: string[] = [];
  const report = (label: string, result: LoadResult) => {
    const line = `${label.padEnd(44)} ${result.requestsPerSec.toFixed(0).padStart(8)} req/s  p50 ${result.p50.toFixed(3).padStart(7)} ms  p99 ${result.p99.toFixed(3).padStart(7)} ms (${result.tool})${result.errors ? `  errors ${result.errors}` : ''}`;
    lines.push(line);
    console.log(line);
  };
  try {
    const api = managementApi(server.urls['management API']!, email, key);
    const [account] = await api.call<Array<{ id: string }>>('GET', '/accounts');
    const zone = await api.call<{ id: string }>('POST', '/zones', { name: 'bench.test', account: { id: account!.id }, origin: origin.url });
    const lua = join(dir, 'host.lua');
    writeFileSync(lua, 'wrk.headers["Host"] = "bench.test"\n');
    const measure = async (label: string, url: string) => {
      for (const connections of [1, 32]) {
        report(`${label}, ${connections} conn`, await runLoad({ url, connections, seconds, lua, env: {}, autocannonRequest: () => ({ method: 'GET', headers: { host: 'bench.test' } }) }));
      }
    };
    await measure('origin directly', `${origin.url}/`);
    await measure('through the edge, no log job', `${server.urls.edge}/`);
    for (const name of ['one', 'two']) {
      const destination = `file://${join(dir, `logs-${name}`)}`;
      const challenge = await api.call<{ filename: string }>('POST', `/zones/${zone.id}/logshipping/ownership`, { destination_conf: destination });
      await api.call('POST', `/zones/${zone.id}/logshipping/jobs`, {
        name, destination_conf: destination, dataset: 'http_requests', enabled: true,
        ownership_challenge: readFileSync(challenge.filename, 'utf8').trim(),
        output_options: { field_names: ['RayID', 'EdgeStartTimestamp', 'ClientIP', 'ClientRequestURI', 'EdgeResponseStatus', 'EdgeResponseBytes'] },
      });
    }
    await measure('through the edge, two jobs logging all', `${server.urls.edge}/`);
  } finally {
    await server.stop();
    origin.child.kill();
    rmSync(dir, { recursive: true, force: true });
  }
  return lines;
}
