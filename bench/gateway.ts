/**
 * The JSON-RPC gateway beside Anvil (Foundry's node, from its npm package) and a bare node:http
 * server, in one run: the same calls at 32 connections to edgeport's embedded chain, to Anvil
 * directly and to node:http answering each body with Anvil's fixed response (what HTTP alone costs
 * in Node); then edgeport in front of that Anvil as its upstream. Rounds alternate the servers
 * (in rotating order), and the table gives each server's median round. Every server is a child
 * process pinned to one core, the load generator (wrk, else autocannon) to another (taskset).
 *
 * `EDGEPORT_BENCH_GATEWAY_BASELINE=<another checkout>` adds that tree's gateway as a column (before
 * and after a change, in the same run); `EDGEPORT_BENCH_CPU_PROF=<dir>` writes edgeport's CPU
 * profiles there (node --cpu-prof).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEV_ACCOUNTS } from '../src/gateway/index.ts';
import { anvilBinary } from '../test/gateway/anvil.ts';
import { planCpus, pinned, pinSelf } from './cpu-pinning.ts';
import { hasWrk, runLoad, type LoadResult } from './load.ts';
import { median } from './stats.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SERVERS_SCRIPT = fileURLToPath(new URL('gateway-servers.ts', import.meta.url));
const CONNECTIONS = 32;
const ACCOUNT = DEV_ACCOUNTS[1]!.address;
/** Init code returning 42 (run by eth_call without a `to`). */
const CALL_DATA = '0x602a60005260206000f3';

const call = (method: string, params: unknown[], id: number | string = 1) => ({ jsonrpc: '2.0', id, method, params });

interface Row {
  name: string;
  /** `embedded`: edgeport's own chain; `proxy`: edgeport with Anvil as its upstream. */
  via: 'embedded' | 'proxy';
  body: string;
  connections: number;
  /** Each request with its own id (as clients send them), so no two bodies are the same. */
  freshIds: boolean;
}

/** Rows as written below: body as a value, 32 connections and one body unless said. */
type RowSpec = Omit<Row, 'body' | 'connections' | 'freshIds'> & { body: unknown; connections?: number; freshIds?: boolean };

const ROW_SPECS: RowSpec[] = [
  { name: 'eth_blockNumber', via: 'embedded', body: call('eth_blockNumber', []) },
  { name: 'eth_getBalance latest', via: 'embedded', body: call('eth_getBalance', [ACCOUNT, 'latest']) },
  { name: 'eth_call latest', via: 'embedded', body: call('eth_call', [{ to: ACCOUNT, data: CALL_DATA }, 'latest']) },
  { name: 'eth_getBlockByNumber 0x0', via: 'embedded', body: call('eth_getBlockByNumber', ['0x0', false]) },
  {
    name: 'batch of 10 (latest reads)',
    via: 'embedded',
    body: Array.from({ length: 10 }, (_, i) =>
      i % 3 === 0
        ? call('eth_blockNumber', [], i)
        : i % 3 === 1
          ? call('eth_getBalance', [DEV_ACCOUNTS[i]!.address, 'latest'], i)
          : call('eth_call', [{ data: CALL_DATA }, 'latest'], i),
    ),
  },
  { name: 'eth_blockNumber, a new id each call', via: 'embedded', body: call('eth_blockNumber', []), freshIds: true },
  { name: 'eth_blockNumber', via: 'proxy', body: call('eth_blockNumber', []) },
  { name: 'eth_getBlockByNumber 0x0', via: 'proxy', body: call('eth_getBlockByNumber', ['0x0', false]) },
  { name: 'eth_blockNumber, 1 connection', via: 'proxy', body: call('eth_blockNumber', []), connections: 1 },
  { name: 'eth_getBlockByNumber 0x0, 1 connection', via: 'proxy', body: call('eth_getBlockByNumber', ['0x0', false]), connections: 1 },
];
/** EDGEPORT_BENCH_GATEWAY_ROWS=<text> runs only the rows whose "name (via)" contains it. */
const ONLY = process.env.EDGEPORT_BENCH_GATEWAY_ROWS;
const ROWS: Row[] = ROW_SPECS.filter((row) => ONLY === undefined || `${row.name} (${row.via})`.includes(ONLY)).map((row) => ({
  ...row,
  body: JSON.stringify(row.body),
  connections: row.connections ?? CONNECTIONS,
  freshIds: row.freshIds ?? false,
}));

/** wrk's script for a row: the same body every time, or one with the next id. */
function wrkScript(row: Row): string {
  const head = 'wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\n';
  if (!row.freshIds) return `${head}wrk.body = ${JSON.stringify(row.body)}\n`;
  const [before, after] = row.body.split('"id":1');
  return `${head}local id = 0\nrequest = function()\n  id = id + 1\n  return wrk.format(nil, nil, nil, ${JSON.stringify(`${before}"id":`)} .. id .. ${JSON.stringify(after)})\nend\n`;
}

/** A server under test: where each row's calls go. */
interface Target {
  label: string;
  url(row: Row): string;
  /** The processes that work for a request of this row (the gateway and its upstream, for a proxy row). */
  processes(row: Row): Child[];
}

interface Measured extends LoadResult {
  /** CPU time the target's processes spent per request, in microseconds. */
  cpuUsPerRequest: number;
}

interface Child {
  url: string;
  /** CPU time (user + system, all threads) the process has used so far, in microseconds. */
  cpuUs(): number;
  stop(): Promise<void>;
}

const CLOCK_TICKS_PER_SECOND = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** From /proc (Linux); NaN elsewhere. */
function processCpuUs(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8')
      .replace(/^.*\) /, '')
      .split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return Number.NaN;
  }
}

const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

/** Spawns a server, waits for `ready` to give its URL, and returns a handle that stops it. */
async function startChild(label: string, command: [string, string[]], ready: (child: ChildProcess) => Promise<string>): Promise<Child> {
  const child = spawn(command[0], command[1], { stdio: ['pipe', 'pipe', 'inherit'], cwd: ROOT });
  children.add(child);
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      children.delete(child);
      resolve();
    }),
  );
  const stop = async () => {
    if (!children.has(child)) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
  try {
    const url = await Promise.race([ready(child), exited.then(() => Promise.reject(new Error(`${label} exited before it was ready`)))]);
    return { url, stop, cpuUs: () => processCpuUs(child.pid) };
  } catch (error) {
    await stop();
    throw error;
  }
}

function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve) => child.stdout!.once('data', (chunk: Buffer) => resolve(chunk.toString().trim())));
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function post(url: string, body: string): Promise<string> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return response.text();
}

/** Anvil, quiet (it would otherwise print every call), on a port chosen here. */
async function startAnvil(cpus: string | undefined): Promise<Child> {
  const binary = anvilBinary();
  if (binary === undefined) throw new Error('Anvil (the devDependency @foundry-rs/anvil) has no binary installed for this platform: run npm install');
  const port = await freePort();
  return startChild('anvil', pinned(cpus, binary, ['--host', '127.0.0.1', '--port', String(port), '--quiet']), async (child) => {
    child.stdout!.resume();
    const url = `http://127.0.0.1:${port}`;
    for (let i = 0; i < 200; i++) {
      try {
        await post(url, JSON.stringify(call('eth_chainId', [])));
        return url;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    throw new Error(`Anvil did not answer on ${url} within 10 s`);
  });
}

function startEdgeport(label: string, root: string, cpus: string | undefined, anvilUrl: string): Promise<Child> {
  const section = {
    rate_limit: { requests_per_second: 0 },
    networks: [
      { name: 'rinkeby', enabled: false },
      { name: 'anvil', chain_id: 31337, upstreams: [anvilUrl] },
    ],
  };
  const profileDir = process.env.EDGEPORT_BENCH_CPU_PROF;
  const profile = profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [];
  return startChild(
    label,
    pinned(cpus, process.execPath, [...profile, '--import', 'tsx', SERVERS_SCRIPT, 'edgeport', root, JSON.stringify(section)]),
    firstLine,
  );
}

/** A request is answered well when it is a JSON-RPC result (or, for a batch, all of them are). */
function answeredWell(text: string): boolean {
  try {
    const parsed = JSON.parse(text) as unknown;
    const answers = Array.isArray(parsed) ? parsed : [parsed];
    return answers.length > 0 && answers.every((a) => typeof a === 'object' && a !== null && 'result' in a && !('error' in a));
  } catch {
    return false;
  }
}

export async function benchGateway(seconds: number, rounds = 3): Promise<string[]> {
  const cpus = planCpus();
  pinSelf(cpus.load);
  const dir = mkdtempSync(join(tmpdir(), 'edgeport-bench-gateway-'));
  const lines: string[] = [];
  const say = (line: string) => {
    lines.push(line);
    console.log(line);
  };
  const started: Child[] = [];
  try {
    say(
      `${cpus.note}; load from ${hasWrk() ? 'wrk' : 'autocannon (wrk is not installed: `apt-get install wrk` for steadier figures)'}, ${CONNECTIONS} connections, ${rounds} rounds of ${seconds} s, rate limit off`,
    );
    const anvil = await startAnvil(cpus.server);
    started.push(anvil);
    // The bare server answers each body exactly as Anvil does.
    const answers: Record<string, string> = {};
    for (const row of ROWS) answers[row.freshIds ? '*' : row.body] = await post(anvil.url, row.body);
    const answersFile = join(dir, 'answers.json');
    writeFileSync(answersFile, JSON.stringify(answers));
    const bare = await startChild('bare node:http', pinned(cpus.server, process.execPath, ['--import', 'tsx', SERVERS_SCRIPT, 'bare', answersFile]), firstLine);
    started.push(bare);
    const edgeport = await startEdgeport('edgeport', ROOT, cpus.server, anvil.url);
    started.push(edgeport);
    const gatewayPath = (row: Row) => (row.via === 'embedded' ? '/v1/sepolia' : '/v1/anvil');
    const targets: Target[] = [
      { label: 'edgeport', url: (row) => `${edgeport.url}${gatewayPath(row)}`, processes: (row) => (row.via === 'proxy' ? [edgeport, anvil] : [edgeport]) },
      { label: 'Anvil', url: () => `${anvil.url}/`, processes: () => [anvil] },
      { label: 'bare node:http', url: () => `${bare.url}/`, processes: () => [bare] },
    ];
    const baselineRoot = process.env.EDGEPORT_BENCH_GATEWAY_BASELINE;
    if (baselineRoot) {
      const baseline = await startEdgeport('baseline', baselineRoot, cpus.server, anvil.url);
      started.push(baseline);
      targets.push({
        label: 'baseline',
        url: (row) => `${baseline.url}${gatewayPath(row)}`,
        processes: (row) => (row.via === 'proxy' ? [baseline, anvil] : [baseline]),
      });
      say(`baseline: the gateway of ${baselineRoot}`);
    }

    const luaOf = new Map(
      ROWS.map((row, i) => {
        const lua = join(dir, `row-${i}.lua`);
        writeFileSync(lua, wrkScript(row));
        return [row, lua];
      }),
    );
    const load = async (target: Target, row: Row, forSeconds: number): Promise<Measured> => {
      const cpu = () => target.processes(row).reduce((sum, p) => sum + p.cpuUs(), 0);
      const before = cpu();
      const result = await runLoad({
        url: target.url(row),
        connections: row.connections,
        seconds: forSeconds,
        lua: luaOf.get(row)!,
        env: {},
        cpus: cpus.load,
        autocannonRequest: () => {
          let id = 0;
          const request = { method: 'POST' as const, headers: { 'content-type': 'application/json' }, body: row.body };
          return row.freshIds ? { ...request, setupRequest: (r: object) => ({ ...r, body: row.body.replace('"id":1', `"id":${++id}`) }) } : request;
        },
      });
      return { ...result, cpuUsPerRequest: (cpu() - before) / (result.requestsPerSec * forSeconds) };
    };

    // Every server must answer every row with a result before it is measured; then a warm-up (JIT, pools).
    for (const row of ROWS) {
      for (const target of targets) {
        const text = await post(target.url(row), row.body);
        if (!answeredWell(text)) throw new Error(`${target.label} answered ${row.name} (${row.via}) with ${text.slice(0, 300)}`);
        await load(target, row, 1);
      }
    }

    const results = new Map<string, Measured[]>();
    const key = (target: Target, row: Row) => `${target.label}|${row.via}|${row.name}`;
    for (let round = 0; round < rounds; round++) {
      for (const row of ROWS) {
        const order = targets.map((_, i) => targets[(i + round) % targets.length]!);
        for (const target of order) {
          const result = await load(target, row, seconds);
          results.set(key(target, row), [...(results.get(key(target, row)) ?? []), result]);
          say(
            `round ${round + 1}  ${`${row.name} (${row.via})`.padEnd(38)} ${target.label.padEnd(15)} ${result.requestsPerSec.toFixed(0).padStart(7)} req/s  p50 ${result.p50.toFixed(2).padStart(6)} ms  p99 ${result.p99.toFixed(2).padStart(6)} ms  cpu ${result.cpuUsPerRequest.toFixed(0).padStart(4)} us/req${result.errors ? `  errors ${result.errors}` : ''}`,
          );
        }
      }
    }

    const stat = (target: Target, row: Row) => {
      const runs = results.get(key(target, row))!;
      return {
        rps: median(runs.map((r) => r.requestsPerSec)),
        p50: median(runs.map((r) => r.p50)),
        p99: median(runs.map((r) => r.p99)),
        cpu: median(runs.map((r) => r.cpuUsPerRequest)),
      };
    };
    const [ours, anvilTarget, bareTarget, baselineTarget] = targets as [Target, Target, Target, Target | undefined];
    const k = (rps: number) => `${(rps / 1000).toFixed(1)}k`;
    const ms = (value: number) => `${value.toFixed(2)} ms`;
    const us = (value: number) => `${value.toFixed(0)} us`;
    const rowName = (row: Row) => `${row.name}${row.via === 'proxy' ? ', gateway in front of Anvil' : ' (embedded)'}`;
    say('');
    say(
      `Medians of ${rounds} rounds (req/s at ${CONNECTIONS} connections unless said; p50/p99 latency; added p50: edgeport in front of Anvil less Anvil alone):`,
    );
    say(
      `| call | edgeport | Anvil | ratio | bare node:http | edgeport/bare | edgeport p50/p99 | Anvil p50/p99 | bare p50/p99 | added p50 |${baselineTarget ? ' baseline | edgeport/baseline |' : ''}`,
    );
    say(`|---|---|---|---|---|---|---|---|---|---|${baselineTarget ? '---|---|' : ''}`);
    for (const row of ROWS) {
      const e = stat(ours, row);
      const a = stat(anvilTarget, row);
      const b = stat(bareTarget, row);
      const added = row.via === 'proxy' ? ms(e.p50 - a.p50) : '';
      const base = baselineTarget ? stat(baselineTarget, row) : undefined;
      say(
        `| ${rowName(row)} | ${k(e.rps)} | ${k(a.rps)} | ${(e.rps / a.rps).toFixed(2)} | ${k(b.rps)} | ${(e.rps / b.rps).toFixed(2)} | ${ms(e.p50)} / ${ms(e.p99)} | ${ms(a.p50)} / ${ms(a.p99)} | ${ms(b.p50)} / ${ms(b.p99)} | ${added} |` +
          (base ? ` ${k(base.rps)} | ${(e.rps / base.rps).toFixed(2)} |` : ''),
      );
    }
    say('');
    say("CPU time per request (server processes, all threads; a proxy row adds the upstream's), steadier than req/s on a busy machine:");
    say(`| call | edgeport | Anvil | bare node:http |${baselineTarget ? ' baseline |' : ''}`);
    say(`|---|---|---|---|${baselineTarget ? '---|' : ''}`);
    for (const row of ROWS) {
      say(
        `| ${rowName(row)} | ${us(stat(ours, row).cpu)} | ${us(stat(anvilTarget, row).cpu)} | ${us(stat(bareTarget, row).cpu)} |${baselineTarget ? ` ${us(stat(baselineTarget, row).cpu)} |` : ''}`,
      );
    }
  } finally {
    await Promise.all(started.map((child) => child.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
  return lines;
}
