/**
 * Store through `edgeport dev`: the driver script (bench/drivers/store-driver.mjs, one
 * binding call per request) under wrk/autocannon at 32 connections, as the targets measure.
 */
import { fileURLToPath } from 'node:url';
import type autocannon from 'autocannon';
import { startDevServer } from '../test/helpers/dev-server.ts';
import { runLoad } from './load.ts';
import { formatResult, runClosedLoop, type BenchResult } from './stats.ts';

const DRIVERS = fileURLToPath(new URL('drivers/', import.meta.url));
const KiB = 1024;
const MiB = 1024 * KiB;

export async function seed(url: string): Promise<void> {
  const small = new Uint8Array(KiB).fill(97);
  const jobs: Array<() => Promise<unknown>> = [];
  for (let a = 0; a < 100; a++)
    for (let b = 0; b < 100; b++) {
      const key = `d/${String(a).padStart(2, '0')}/${String(b).padStart(3, '0')}`;
      jobs.push(() => fetch(`${url}/o/${key}`, { method: 'PUT', body: small }).then((r) => r.arrayBuffer()));
    }
  const big = new Uint8Array(MiB).fill(98);
  for (let i = 0; i < 64; i++) jobs.push(() => fetch(`${url}/o/big/${i}`, { method: 'PUT', body: big }).then((r) => r.arrayBuffer()));
  let next = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < jobs.length) await jobs[next++]!();
    }),
  );
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

export function acRequest(op: string): () => autocannon.Request {
  return () => ({
    setupRequest: (req: autocannon.Request) => {
      const a = pad(Math.floor(Math.random() * 100), 2);
      const b = pad(Math.floor(Math.random() * 100), 3);
      switch (op) {
        case 'get':
          return { ...req, method: 'GET', path: `/o/d/${a}/${b}` };
        case 'head':
          return { ...req, method: 'HEAD', path: `/o/d/${a}/${b}` };
        case 'getbig':
          return { ...req, method: 'GET', path: `/o/big/${Math.floor(Math.random() * 64)}` };
        case 'list':
          return { ...req, method: 'GET', path: `/list?prefix=d/${a}/&limit=100` };
        default:
          return { ...req, method: 'PUT', path: `/o/put/${Math.random()}`, body: Buffer.alloc(Number(process.env.BODY_SIZE ?? KiB), 97) };
      }
    },
  });
}

async function multipart(url: string, totalMiB: number, partMiB: number): Promise<BenchResult> {
  const part = new Uint8Array(partMiB * MiB).fill(99);
  const start = performance.now();
  const key = `mpu/${Date.now()}`;
  const uploadId = await (await fetch(`${url}/mpu/${key}`, { method: 'POST' })).text();
  const count = totalMiB / partMiB;
  const parts = await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const res = await fetch(`${url}/mpu/${key}?id=${encodeURIComponent(uploadId)}&part=${i + 1}`, { method: 'PUT', body: part });
      return res.json() as Promise<{ partNumber: number; etag: string }>;
    }),
  );
  const done = await fetch(`${url}/mpu/${key}?id=${encodeURIComponent(uploadId)}&complete`, { method: 'POST', body: JSON.stringify(parts) });
  if (!done.ok) throw new Error(`complete failed: ${done.status} ${await done.text()}`);
  const ms = performance.now() - start;
  return { name: `http multipart ${totalMiB} MiB (${partMiB} MiB parts)`, ops: 1, seconds: ms / 1000, bytesPerOp: totalMiB * MiB, p50: ms, p99: ms };
}

export async function benchStoreHttp(seconds: number): Promise<string[]> {
  // The driver script runs in workerd, the only runtime.
  const server = await startDevServer(`${DRIVERS}store-driver.mjs`, [{ binding: 'BUCKET', bucket_name: 'bench' }]);
  const lines: string[] = [];
  // `edgeport dev` keeps its metadata in SQLite in its data dir; it has no database option.
  if (process.env.EDGEPORT_BENCH_DB_URL)
    console.log('http: metadata on SQLite (edgeport dev has no database option; EDGEPORT_BENCH_DB_URL applies to the binding legs)');
  try {
    await seed(server.url);
    const ops: Array<[string, string, Record<string, string>, number?]> = [
      ['get 1 KiB', 'get', {}, KiB],
      ['head 1 KiB', 'head', {}],
      ['list 100 keys', 'list', {}],
      ['put 1 KiB', 'put', { BODY_SIZE: String(KiB) }, KiB],
      ['get 1 MiB', 'getbig', {}, MiB],
      ['put 1 MiB', 'put', { BODY_SIZE: String(MiB) }, MiB],
    ];
    // EDGEPORT_BENCH_OPS=get,put picks operations by their driver name (get head list put getbig).
    const only = process.env.EDGEPORT_BENCH_OPS?.split(',');
    for (const [name, op, env, bytes] of ops) {
      if (only && !only.includes(op)) continue;
      const r = await runLoad({
        url: server.url,
        connections: 32,
        seconds,
        lua: `${DRIVERS}store-driver.lua`,
        env: { OP: op, ...env },
        autocannonRequest: acRequest(op),
      });
      const line = formatResult({
        name: `http ${name} (${r.tool}, 32 conn)`,
        ops: r.requestsPerSec * seconds,
        seconds,
        p50: r.p50,
        p99: r.p99,
        ...(bytes ? { bytesPerOp: bytes } : {}),
      });
      lines.push(r.errors ? `${line}  errors ${r.errors}` : line);
      console.log(lines.at(-1));
    }
    const mpu = await multipart(server.url, 100, 10);
    lines.push(formatResult(mpu));
    console.log(lines.at(-1));
  } finally {
    await server.stop();
  }
  return lines;
}

export { runClosedLoop };
