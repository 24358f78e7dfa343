/**
 * A thousand scripts on one instance (`npm run bench isolates`): `edgeport start` on the embedded
 * default, ACCOUNTS accounts (the operator and accounts made with `edgeport accounts create`), SCRIPTS
 * scripts deployed across them as wrangler deploys them, each routed at `<account zone>/<script>/*`.
 * Then REQUESTED distinct scripts are asked for once each, spread over every account, within one
 * minute: the first request of each account's first script starts its account's process, the
 * others load an isolate in a process already running. Prints both cold-start latencies, how many
 * answered 200, the workerd processes running, and the resident memory of edgeport and of every
 * workerd (from /proc). EDGEPORT_BENCH_ACCOUNTS / _SCRIPTS / _REQUESTED change the sizes (default
 * 20 / 1000 / 500), EDGEPORT_BENCH_CONCURRENCY how many requests are in flight at once (default 1:
 * each cold start's own latency); `--seconds` is not used.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEdgeport } from '../test/helpers/edgeport-server.ts';
import { workerdProcesses } from '../test/helpers/workerd-processes.ts';
import { deploy, eachLimited, tenant, type Tenant } from '../test/helpers/workers-tenants.ts';

const ADMIN = { EDGEPORT_ADMIN_EMAIL: 'bench-0@example.test', EDGEPORT_ADMIN_KEY: 'bench-isolates-operator-key-0123' };

function source(account: number, script: number): string {
  return `let served = 0;
export default {
  async fetch(request) {
    return new Response(${JSON.stringify(`account ${account} script ${script}`)} + ' ' + ++served);
  },
};`;
}

function residentMiB(pid: number): number {
  const kib = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kib ?? 0) / 1024;
}

function get(edge: URL, host: string, path: string, agent: Agent): Promise<{ status: number; body: string; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    request({ host: edge.hostname, port: edge.port, path, headers: { host }, agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, ms: performance.now() - started }));
    })
      .on('error', reject)
      .end();
  });
}

function percentiles(values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!.toFixed(1);
  return `p50 ${at(0.5)} ms, p99 ${at(0.99)} ms (${sorted.length} requests)`;
}

export async function benchIsolates(): Promise<string[]> {
  const accounts = Number(process.env.EDGEPORT_BENCH_ACCOUNTS ?? 20);
  const scripts = Number(process.env.EDGEPORT_BENCH_SCRIPTS ?? 1000);
  const requested = Number(process.env.EDGEPORT_BENCH_REQUESTED ?? 500);
  const concurrency = Number(process.env.EDGEPORT_BENCH_CONCURRENCY ?? 1);
  const perAccount = Math.ceil(scripts / accounts);
  const dir = mkdtempSync(join(tmpdir(), 'edgeport-bench-isolates-'));
  const dataDir = join(dir, 'data');
  const lines: string[] = [];
  const say = (line: string) => {
    lines.push(line);
    console.log(line);
  };
  const server = await startEdgeport({ dataDir, env: ADMIN });
  try {
    const apiUrl = server.urls['management API']!;
    const edge = new URL(server.urls.edge!);
    const setUp = performance.now();
    const tenants: Tenant[] = [];
    for (let i = 0; i < accounts; i++) {
      tenants.push(await tenant(apiUrl, dataDir, `bench-${i}@example.test`, `account-${i}.bench`, i === 0 ? ADMIN.EDGEPORT_ADMIN_KEY : undefined));
    }
    const deployments = Array.from({ length: scripts }, (_, n) => ({ account: n % accounts, script: Math.floor(n / accounts) }));
    await eachLimited(deployments, 4, async ({ account, script }) => deploy(apiUrl, tenants[account]!, `s${script}`, source(account, script)));
    say(
      `set up: ${accounts} accounts, ${scripts} scripts (${perAccount} per account) deployed in ${((performance.now() - setUp) / 1000).toFixed(1)} s; load average ${loadavg()[0]!.toFixed(1)}`,
    );
    // The edge learns the routes within a poll.
    const agent = new Agent({ keepAlive: true, maxSockets: 8 });
    for (const deadline = Date.now() + 30_000; (await get(edge, tenants[0]!.zone, '/s0/', agent)).status !== 200;) {
      if (Date.now() > deadline) throw new Error('the deployed scripts were not served within 30 s');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    // Only account 0's process runs now (its s0 answered the poll above): every other account's first request starts its process.
    // Requests: script j of every account in turn, REQUESTED in all (account 0's s0 already ran).
    const wanted: Array<{ account: number; script: number }> = [];
    for (let script = 0; wanted.length < requested; script++) {
      for (let account = 0; account < accounts && wanted.length < requested; account++) {
        if (!(account === 0 && script === 0)) wanted.push({ account, script });
      }
    }
    const newProcess: number[] = [];
    const runningProcess: number[] = [];
    let ok = 0;
    const failures: string[] = [];
    const started = performance.now();
    const processRunning = new Set([0]);
    await eachLimited(wanted, concurrency, async ({ account, script }) => {
      const fresh = !processRunning.has(account);
      processRunning.add(account);
      const answer = await get(edge, tenants[account]!.zone, `/s${script}/`, agent);
      if (answer.status === 200 && answer.body === `account ${account} script ${script} 1`) ok++;
      else failures.push(`${tenants[account]!.zone}/s${script}: ${answer.status} ${answer.body.slice(0, 100)}`);
      (fresh ? newProcess : runningProcess).push(answer.ms);
    });
    const seconds = (performance.now() - started) / 1000;
    // The same scripts once more, now loaded: what a request costs without a cold start, beside the cold ones.
    const warm: number[] = [];
    await eachLimited(wanted, concurrency, async ({ account, script }) => {
      warm.push((await get(edge, tenants[account]!.zone, `/s${script}/`, agent)).ms);
    });
    const workerds = workerdProcesses(server.child.pid);
    const edgeportMiB = residentMiB(server.child.pid!);
    const workerdMiB = workerds.reduce((sum, pid) => sum + residentMiB(pid), 0);
    const metrics = await (await fetch(`${server.urls['management API']!.replace(/\/client\/v4$/, '')}/metrics`)).text();
    const metric = (name: string) =>
      /^(\S+) (\S+)$/m.exec(
        metrics
          .split('\n')
          .filter((line) => line.startsWith(name))
          .join('\n'),
      )?.[2];
    say(
      `${requested} distinct scripts requested once each in ${seconds.toFixed(1)} s (${concurrency} at a time): ${ok} answered 200${failures.length ? `; failed: ${failures.slice(0, 5).join('; ')}` : ''}`,
    );
    say(`first request of a script whose account has no process yet: ${percentiles(newProcess)}`);
    say(`first request of a script whose account's process runs:      ${percentiles(runningProcess)}`);
    say(`a second request of each (its isolate loaded):                ${percentiles(warm)}`);
    say(
      `workerd processes: ${workerds.length} for ${accounts} accounts (metrics: ${metric('edgeport_workers_account_processes')} account processes, ${metric('edgeport_workers_isolates')} isolates)`,
    );
    say(
      `resident memory: edgeport ${edgeportMiB.toFixed(0)} MiB + workerd ${workerdMiB.toFixed(0)} MiB = ${(edgeportMiB + workerdMiB).toFixed(0)} MiB ` +
        `(${(workerdMiB / Math.max(1, workerds.length)).toFixed(0)} MiB per process on average); load average ${loadavg()[0]!.toFixed(1)}`,
    );
    agent.destroy();
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return lines;
}
