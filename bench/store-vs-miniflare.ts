/**
 * The store driver script (bench/drivers/store-driver.mjs) through `edgeport dev` beside the same
 * script in Miniflare (what `wrangler dev` runs, its bucket persisted on disk), both seeded alike
 * and loaded alike (wrk, 32 connections), in alternating rounds; prints each round, the medians and
 * edgeport/Miniflare per operation. Miniflare is not a dependency of edgeport: it is loaded from the
 * directory named by EDGEPORT_BENCH_MINIFLARE (`cd /tmp/mf && npm init -y && npm install miniflare`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startDevServer } from '../test/helpers/dev-server.ts';
import { runLoad, type LoadResult } from './load.ts';
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
  stop(): Promise<void>;
}

interface MiniflareModule {
  Miniflare: new (options: Record<string, unknown>) => { ready: Promise<URL>; dispose(): Promise<void> };
}

async function startMiniflare(from: string): Promise<Server> {
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
  return {
    name: 'miniflare',
    url,
    async stop() {
      await mf.dispose();
      rmSync(persist, { recursive: true, force: true });
    },
  };
}

async function startEdgeport(): Promise<Server> {
  const server = await startDevServer(`${DRIVERS}store-driver.mjs`, [{ binding: 'BUCKET', bucket_name: 'bench' }]);
  return { name: 'edgeport', url: server.url, stop: () => server.stop() };
}

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
    servers.push(await startEdgeport(), await startMiniflare(from));
    for (const server of servers) await seed(server.url);
    say(
      `store driver, edgeport dev beside Miniflare: ${rounds} alternating rounds of ${seconds} s, ${CONNECTIONS} connections; load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
    const results = new Map<string, LoadResult[]>();
    for (const [op, name, env] of operations) {
      for (const server of servers) {
        // A short warm-up per operation and server, so the first round is not the cold one.
        await runLoad({
          url: server.url,
          connections: CONNECTIONS,
          seconds: 1,
          lua: `${DRIVERS}store-driver.lua`,
          env: { OP: op, ...env },
          autocannonRequest: acRequest(op),
        });
      }
      for (let round = 0; round < rounds; round++) {
        const order = round % 2 === 0 ? servers : [...servers].reverse();
        for (const server of order) {
          const load = await runLoad({
            url: server.url,
            connections: CONNECTIONS,
            seconds,
            lua: `${DRIVERS}store-driver.lua`,
            env: { OP: op, ...env },
            autocannonRequest: acRequest(op),
          });
          // Answered requests only: a refusal (a 503 shed by a loaded listener) is no request served.
          const result = { ...load, requestsPerSec: Math.max(0, load.requestsPerSec - load.errors / seconds) };
          const key = `${name}|${server.name}`;
          results.set(key, [...(results.get(key) ?? []), result]);
          say(
            `round ${round + 1}  ${name.padEnd(14)} ${server.name.padEnd(9)} ${Math.round(result.requestsPerSec).toString().padStart(6)} req/s  p50 ${result.p50.toFixed(1).padStart(6)} ms${result.errors ? `  errors ${result.errors}` : ''}  load ${loadavg()[0]!.toFixed(1)}`,
          );
        }
      }
    }
    say(
      `medians of ${rounds} rounds (load average now ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}):`,
    );
    for (const [, name] of operations) {
      const edgeport = results.get(`${name}|edgeport`)!;
      const miniflare = results.get(`${name}|miniflare`)!;
      const perRound = edgeport.map((r, i) => r.requestsPerSec / miniflare[i]!.requestsPerSec);
      say(
        `  ${name.padEnd(14)} edgeport ${Math.round(median(edgeport.map((r) => r.requestsPerSec)))
          .toString()
          .padStart(6)} req/s  miniflare ${Math.round(median(miniflare.map((r) => r.requestsPerSec)))
          .toString()
          .padStart(6)} req/s  edgeport/miniflare ${median(perRound).toFixed(2)}x (rounds ${perRound.map((r) => r.toFixed(2)).join(', ')})`,
      );
    }
  } finally {
    for (const server of servers) await server.stop();
  }
  return lines;
}
