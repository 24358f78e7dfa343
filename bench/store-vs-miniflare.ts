/**
 * The store driver script (bench/drivers/store-driver.mjs) through `edgeport dev` beside the same
 * script in Miniflare (what `wrangler dev` runs, its bucket persisted on disk), both seeded alike
 * and loaded alike (wrk, 32 connections), and beside them the floor of edgeport's topology
 * (bench/floor-topology.ts: bare processes in edgeport's places, the backend answering each
 * operation with bodies of the store's sizes), in alternating rounds; prints each round (req/s and
 * the CPU per request of each side's processes), the medians, edgeport/Miniflare, floor/Miniflare
 * (how far the floor itself reaches) and edgeport/floor per operation. `EDGEPORT_FLOOR=config`
 * measures the old floor (a process per script). Miniflare is not a dependency of edgeport: it is
 * loaded from the directory named by EDGEPORT_BENCH_MINIFLARE (`cd /tmp/mf && npm init -y && npm
 * install miniflare`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startDevServer } from '../test/helpers/dev-server.ts';
import { workerdProcesses } from '../test/helpers/workerd-processes.ts';
import { floorShapesFromEnv, startFloor } from './floor-topology.ts';
import { runLoad, type LoadResult } from './load.ts';
import { cpuSeconds } from './process-cpu.ts';
import { median } from './stats.ts';
import { acRequest, seed } from './store-http.ts';

const DRIVERS = fileURLToPath(new URL('drivers/', import.meta.url));
const CONNECTIONS = 32;
const KiB = 1024;

/** Driver operation, its name in the table, and the environment of its wrk script. */
const OPERATIONS: Array<[string, string, Record<string, string>]> = [
  ['get', 'get 1 KiB', {}],
  ['head', 'head', {}],
  ['put', 'put 1 KiB', { BODY_SIZE: String(KiB) }],
  ['getbig', 'get 1 MiB', {}],
  ['list', 'list 100 keys', {}],
];

interface Server {
  name: string;
  url: string;
  /** The processes whose CPU its requests cost. */
  pids: number[];
  stop(): Promise<void>;
}

interface Result extends LoadResult {
  /** CPU per answered request (us), all of the server's processes. */
  cpu: number;
}

interface MiniflareModule {
  Miniflare: new (options: Record<string, unknown>) => { ready: Promise<URL>; dispose(): Promise<void> };
}

async function startMiniflare(from: string, others: number[]): Promise<Server> {
  const entry = join(from, 'node_modules', 'miniflare', 'dist', 'src', 'index.js');
  const { Miniflare } = (await import(pathToFileURL(entry).href)) as MiniflareModule;
  const persist = mkdtempSync(join(tmpdir(), 'edgeport-bench-miniflare-'));
  const mf = new Miniflare({
    modules: true,
    scriptPath: `${DRIVERS}store-driver.mjs`,
    modulesRoot: DRIVERS,
    compatibilityDate: '2025-01-01',
    r2Buckets: { BUCKET: 'bench' },
    r2Persist: persist,
    host: '127.0.0.1',
    port: 0,
  });
  const url = String(await mf.ready).replace(/\/$/, '');
  // Miniflare's workerd, and this process, where Miniflare's own Node side runs.
  const workerd = workerdProcesses().filter((pid) => !others.includes(pid));
  return {
    name: 'miniflare',
    url,
    pids: [process.pid, ...workerd],
    async stop() {
      await mf.dispose();
      rmSync(persist, { recursive: true, force: true });
    },
  };
}

async function startEdgeport(): Promise<Server> {
  const server = await startDevServer(`${DRIVERS}store-driver.mjs`, [{ binding: 'BUCKET', bucket_name: 'bench' }]);
  await seed(server.url);
  const workerd = workerdProcesses(server.child.pid);
  return { name: 'edgeport', url: server.url, pids: [server.child.pid!, ...workerd], stop: () => server.stop() };
}

async function startFloorServer(): Promise<Server> {
  const floor = await startFloor(floorShapesFromEnv()[0]!);
  return { name: 'floor', url: floor.url, pids: Object.values(floor.pids), stop: () => floor.stop() };
}

const cpuOf = (server: Server) => server.pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0);
const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`;

export async function benchStoreVsMiniflare(seconds: number, rounds = 3): Promise<string[]> {
  const from = process.env.EDGEPORT_BENCH_MINIFLARE;
  if (!from) throw new Error('Set EDGEPORT_BENCH_MINIFLARE to a directory where miniflare is installed (cd /tmp/mf && npm init -y && npm install miniflare).');
  const only = process.env.EDGEPORT_BENCH_OPS?.split(',');
  const operations = OPERATIONS.filter(([op]) => !only || only.includes(op));
  const lines: string[] = [];
  const say = (line: string) => {
    lines.push(line);
    console.log(line);
  };
  const servers: Server[] = [];
  try {
    const edgeport = await startEdgeport();
    servers.push(edgeport);
    const miniflare = await startMiniflare(from, edgeport.pids);
    await seed(miniflare.url);
    servers.push(miniflare, await startFloorServer());
    say(
      `store driver, edgeport dev beside Miniflare and the floor of edgeport's topology (${floorShapesFromEnv()[0]!}): ${rounds} alternating rounds of ${seconds} s, ${CONNECTIONS} connections; load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
    const results = new Map<string, Result[]>();
    for (const [op, name, env] of operations) {
      const load = (server: Server, forSeconds: number) =>
        runLoad({
          url: server.url,
          connections: CONNECTIONS,
          seconds: forSeconds,
          lua: `${DRIVERS}store-driver.lua`,
          env: { OP: op, ...env },
          autocannonRequest: acRequest(op),
        });
      // A warm-up per operation and server as long as a round, so the first round is not the cold
      // one: a put through edgeport took 4 s of load to settle (round 1 of 4 s after 1 s of
      // warm-up: 1,170 puts/s and 1,426 us of CPU each; the rounds after, 1,390-1,768 and 870-1,110).
      for (const server of servers) await load(server, seconds);
      for (let round = 0; round < rounds; round++) {
        // Each server in each place of the order in turn: the machine's drift falls on all alike.
        const order = servers.map((_, i) => servers[(i + round) % servers.length]!);
        for (const server of order) {
          const before = cpuOf(server);
          const run = await load(server, seconds);
          // Answered requests only: a refusal (a 503 shed by a loaded listener) is no request served.
          const answered = Math.max(0, run.requestsPerSec * seconds - run.errors);
          const result = { ...run, requestsPerSec: answered / seconds, cpu: ((cpuOf(server) - before) * 1e6) / Math.max(1, answered) };
          const key = `${name}|${server.name}`;
          results.set(key, [...(results.get(key) ?? []), result]);
          say(
            `round ${round + 1}  ${name.padEnd(14)} ${server.name.padEnd(9)} ${Math.round(result.requestsPerSec).toString().padStart(6)} req/s  p50 ${result.p50.toFixed(1).padStart(6)} ms  CPU ${Math.round(result.cpu).toString().padStart(5)} us/req${result.errors ? `  errors ${result.errors}` : ''}  load ${loadavg()[0]!.toFixed(1)}`,
          );
        }
        const of = (server: string) => results.get(`${name}|${server}`)![round]!.requestsPerSec;
        say(
          `round ${round + 1}  ${name.padEnd(14)} edgeport/miniflare ${ratio(of('edgeport'), of('miniflare'))}  floor/miniflare ${ratio(of('floor'), of('miniflare'))}  edgeport/floor ${ratio(of('edgeport'), of('floor'))}`,
        );
      }
    }
    say(
      `medians of ${rounds} rounds, req/s (CPU per request), and the medians of each round's ratios (load average now ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}):`,
    );
    for (const [, name] of operations) {
      const of = (server: string) => results.get(`${name}|${server}`)!;
      const [edgeport, miniflare, floor] = [of('edgeport'), of('miniflare'), of('floor')];
      const summary = (runs: Result[]) =>
        `${Math.round(median(runs.map((r) => r.requestsPerSec)))
          .toString()
          .padStart(6)} (${Math.round(median(runs.map((r) => r.cpu)))} us)`;
      const perRound = (a: Result[], b: Result[]) => a.map((r, i) => r.requestsPerSec / b[i]!.requestsPerSec);
      const described = (ratios: number[]) => `${median(ratios).toFixed(2)}x (${ratios.map((r) => r.toFixed(2)).join(', ')})`;
      say(
        `  ${name.padEnd(14)} edgeport ${summary(edgeport)}  miniflare ${summary(miniflare)}  floor ${summary(floor)}  edgeport/miniflare ${described(perRound(edgeport, miniflare))}  floor/miniflare ${described(perRound(floor, miniflare))}  edgeport/floor ${described(perRound(edgeport, floor))}`,
      );
    }
  } finally {
    for (const server of servers) await server.stop();
  }
  return lines;
}
