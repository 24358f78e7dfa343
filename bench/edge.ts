/**
 * The edge through `edgeport start`: a 1 KiB origin called directly, then through the edge with
 * no log job and with two jobs logging every request (file:// destinations). Latency at one
 * connection (the edge's added p50/p99) and throughput at 1 and 32 connections. The two edge
 * cases alternate over three rounds, in alternating order, with the jobs disabled and enabled
 * through the API, so neither gains from going second (a warmer JIT, a fuller page cache).
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnNode } from '../test/helpers/child-processes.ts';
import { startEdgeport } from '../test/helpers/edgeport-server.ts';
import { managementApi } from '../test/helpers/management-api.ts';
import { runLoad, type LoadResult } from './load.ts';

const ORIGIN = `
const body = Buffer.alloc(1024, 97);
require('node:http').createServer((req, res) => { req.resume(); res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 1024 }); res.end(body); })
  .listen(0, '127.0.0.1', function () { console.log(this.address().port); });
`;

async function startOrigin(): Promise<{ url: string; child: ChildProcess }> {
  // Tied to this process's life (child-processes.ts): a bench that crashes leaves no origin running.
  const child = spawnNode(['-e', ORIGIN], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<string>((resolve) => child.stdout!.once('data', (d: Buffer) => resolve(d.toString().trim())));
  return { url: `http://127.0.0.1:${port}`, child };
}

/** The run with the median request rate. */
function median(results: LoadResult[]): LoadResult {
  return [...results].sort((a, b) => a.requestsPerSec - b.requestsPerSec)[Math.floor(results.length / 2)]!;
}

export async function benchEdge(seconds: number): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'edgeport-bench-edge-'));
  const origin = await startOrigin();
  const email = 'bench@example.test';
  const key = 'bench-admin-key-0123456789';
  const server = await startEdgeport({
    dataDir: join(dir, 'data'),
    env: { EDGEPORT_ADMIN_EMAIL: email, EDGEPORT_ADMIN_KEY: key, EDGEPORT_LOG_LEVEL: 'error', EDGEPORT_LOGS_FILE_ROOTS: dir },
  });
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
    const load = (url: string, connections: number) =>
      runLoad({ url, connections, seconds, lua, env: {}, autocannonRequest: () => ({ method: 'GET', headers: { host: 'bench.test' } }) });
    for (const connections of [1, 32]) report(`origin directly, ${connections} conn`, await load(`${origin.url}/`, connections));

    const jobIds: string[] = [];
    for (const name of ['one', 'two']) {
      const destination = `file://${join(dir, `logs-${name}`)}`;
      const challenge = await api.call<{ filename: string }>('POST', `/zones/${zone.id}/logshipping/ownership`, { destination_conf: destination });
      const job = await api.call<{ id: string }>('POST', `/zones/${zone.id}/logshipping/jobs`, {
        name,
        destination_conf: destination,
        dataset: 'http_requests',
        enabled: false,
        ownership_challenge: readFileSync(challenge.filename, 'utf8').trim(),
        output_options: { field_names: ['RayID', 'EdgeStartTimestamp', 'ClientIP', 'ClientRequestURI', 'EdgeResponseStatus', 'EdgeResponseBytes'] },
      });
      jobIds.push(job.id);
    }
    const setJobs = async (enabled: boolean) => {
      for (const id of jobIds) await api.call('PUT', `/zones/${zone.id}/logshipping/jobs/${id}`, { enabled });
    };
    for (const connections of [1, 32]) {
      const runs: Record<'off' | 'on', LoadResult[]> = { off: [], on: [] };
      for (let round = 0; round < 3; round++) {
        for (const mode of round % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const)) {
          await setJobs(mode === 'on');
          runs[mode].push(await load(`${server.urls.edge}/`, connections));
        }
      }
      const off = median(runs.off);
      const on = median(runs.on);
      report(`through the edge, no log job, ${connections} conn`, off);
      report(`through the edge, two jobs logging all, ${connections} conn`, on);
      const line =
        `two jobs vs none, ${connections} conn: ${((100 * on.requestsPerSec) / off.requestsPerSec).toFixed(0)}% of the rate (medians of 3 alternating rounds; ` +
        `rounds ${runs.off.map((r, i) => `${r.requestsPerSec.toFixed(0)}/${runs.on[i]!.requestsPerSec.toFixed(0)}`).join(', ')})`;
      lines.push(line);
      console.log(line);
    }
  } finally {
    await server.stop();
    origin.child.kill();
    rmSync(dir, { recursive: true, force: true });
  }
  return lines;
}
