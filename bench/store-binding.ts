/**
 * Store through the bucket binding, in process, on disk: put/get/head of 1 KiB, put/get of
 * 1 MiB, list of 100 keys, and a 100 MiB multipart upload. 32 concurrent callers.
 *
 * Metadata in SQLite in a temporary data dir, or with EDGEPORT_BENCH_DB_URL=postgres://... in
 * PostgreSQL, in the URL's schema (default `bench_store`), dropped and recreated first.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { PgDatabase, parsePgUrl, redact } from '../src/db/postgres/pg-database.ts';
import { createStoreBucket } from '../src/store/binding/index.ts';
import { openStoreEngine } from '../src/store/engine/open-store-engine.ts';
import { formatResult, runClosedLoop } from './stats.ts';

const KiB = 1024;
const MiB = 1024 * KiB;

export async function benchStoreBinding(seconds: number): Promise<string[]> {
  const database = await openBenchDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), 'edgeport-bench-'));
  const engine = await openStoreEngine({
    dataDir,
    recover: true,
    maintenance: true,
    backgroundCheckpoints: true,
    ...(database ? { database } : {}),
  });
  console.log(database ? `binding: metadata on PostgreSQL, schema ${database.schema}` : 'binding: metadata on SQLite');
  await engine.ensureBucket('bench');
  const bucket = createStoreBucket(engine, 'bench', { listHonorsInclude: true });
  const lines: string[] = [];
  const report = (line: string) => {
    lines.push(line);
    console.log(line);
  };
  const opts = { concurrency: 32, durationMs: seconds * 1000 };
  try {
    const small = new Uint8Array(KiB).fill(97);
    report(
      formatResult(
        await runClosedLoop('binding put 1 KiB', { ...opts, bytesPerOp: KiB }, async (i) => {
          await bucket.put(`d/${String(i % 100).padStart(2, '0')}/${String(Math.floor(i / 100) % 100).padStart(3, '0')}`, small);
        }),
      ),
    );
    const key = () => `d/${String(Math.floor(Math.random() * 100)).padStart(2, '0')}/${String(Math.floor(Math.random() * 100)).padStart(3, '0')}`;
    report(
      formatResult(
        await runClosedLoop('binding get 1 KiB', { ...opts, bytesPerOp: KiB }, async () => {
          const object = await bucket.get(key());
          if (object && 'arrayBuffer' in object) await object.arrayBuffer();
        }),
      ),
    );
    report(
      formatResult(
        await runClosedLoop('binding head 1 KiB', opts, async () => {
          await bucket.head(key());
        }),
      ),
    );
    report(
      formatResult(
        await runClosedLoop('binding list 100 keys', opts, async () => {
          await bucket.list({ prefix: `d/${String(Math.floor(Math.random() * 100)).padStart(2, '0')}/`, limit: 100 });
        }),
      ),
    );
    const big = new Uint8Array(MiB).fill(98);
    report(
      formatResult(
        await runClosedLoop('binding put 1 MiB', { ...opts, bytesPerOp: MiB }, async (i) => {
          await bucket.put(`big/${i % 64}`, big);
        }),
      ),
    );
    report(
      formatResult(
        await runClosedLoop('binding get 1 MiB', { ...opts, bytesPerOp: MiB }, async () => {
          const object = await bucket.get(`big/${Math.floor(Math.random() * 64)}`);
          if (object && 'body' in object)
            for await (const _ of object.body as unknown as AsyncIterable<Uint8Array>) {
              /* drain */
            }
        }),
      ),
    );
    const part = new Uint8Array(10 * MiB).fill(99);
    const started = performance.now();
    const upload = await bucket.createMultipartUpload('mpu/100MiB');
    const parts = await Promise.all(Array.from({ length: 10 }, (_, i) => upload.uploadPart(i + 1, part)));
    await upload.complete(parts);
    const ms = performance.now() - started;
    report(formatResult({ name: 'binding multipart 100 MiB (10 MiB parts)', ops: 1, seconds: ms / 1000, bytesPerOp: 100 * MiB, p50: ms, p99: ms }));
  } finally {
    await engine.close();
    await database?.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  return lines;
}

/** EDGEPORT_BENCH_DB_URL's database in a fresh schema (the URL's, default bench_store); undefined without it. */
async function openBenchDatabase(): Promise<PgDatabase | undefined> {
  const given = process.env.EDGEPORT_BENCH_DB_URL;
  if (!given) return undefined;
  const url = new URL(given);
  if (!url.searchParams.has('schema')) url.searchParams.set('schema', 'bench_store');
  if (!url.searchParams.has('pool')) url.searchParams.set('pool', '16');
  const { config, schema } = parsePgUrl(url.toString());
  if (schema === 'public')
    throw new Error(`EDGEPORT_BENCH_DB_URL=${redact(given)}: name a schema of the benchmark's own (?schema=bench); it is dropped first.`);
  const admin = new pg.Client(config);
  await admin.connect();
  try {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await admin.end();
  }
  return PgDatabase.open({ url: url.toString(), now: Date.now() });
}
