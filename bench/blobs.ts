/**
 * Blob backends: put/get of 1 MiB (and one streamed 64 MiB put) through the store engine, with
 * blobs on local disk beside blobs on an S3-compatible store (`s3://` blobs URL): edgeport's own
 * S3 API in a separate process, or the store of EDGEPORT_BENCH_BLOBS_URL. 16 concurrent callers.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { redact } from '../src/store/blobs/open-blob-store.ts';
import { openStoreEngine } from '../src/store/engine/open-store-engine.ts';
import { formatResult, runClosedLoop } from './stats.ts';

const MiB = 1024 * 1024;

export async function benchBlobs(seconds: number): Promise<string[]> {
  const lines: string[] = [];
  const report = (line: string) => {
    lines.push(line);
    console.log(line);
  };
  const endpointDir = mkdtempSync(join(tmpdir(), 'edgeport-bench-blobs-endpoint-'));
  const endpoint = process.env.EDGEPORT_BENCH_BLOBS_URL ? undefined : await startEndpoint(endpointDir);
  try {
    const s3Url =
      process.env.EDGEPORT_BENCH_BLOBS_URL ?? `s3://blobs/bench?endpoint=${endpoint!.url}&region=auto&access-key-id=BENCHKEY&secret-access-key=bench-secret`;
    for (const [label, blobsUrl] of [
      ['disk', undefined],
      ['s3', s3Url],
    ] as const) {
      if (blobsUrl) console.log(`blobs: ${redact(blobsUrl)}`);
      await benchOne(label, blobsUrl, seconds, report);
    }
  } finally {
    endpoint?.stop();
    rmSync(endpointDir, { recursive: true, force: true });
  }
  return lines;
}

async function benchOne(label: string, blobsUrl: string | undefined, seconds: number, report: (line: string) => void): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'edgeport-bench-blobs-'));
  const engine = await openStoreEngine({ dataDir, blobsUrl, recover: true, maintenance: true, backgroundCheckpoints: true });
  const opts = { concurrency: 16, durationMs: seconds * 1000, bytesPerOp: MiB };
  try {
    await engine.ensureBucket('bench');
    const big = new Uint8Array(MiB).fill(98);
    report(
      formatResult(
        await runClosedLoop(`engine put 1 MiB (${label})`, opts, async (i) => {
          await engine.put('bench', `big/${i % 64}`, big);
        }),
      ),
    );
    report(
      formatResult(
        await runClosedLoop(`engine get 1 MiB (${label})`, opts, async () => {
          const got = await engine.get('bench', `big/${Math.floor(Math.random() * 64)}`);
          if (got?.body)
            for await (const _ of got.body.stream()) {
              /* drain */
            }
        }),
      ),
    );
    const chunk = new Uint8Array(256 * 1024).fill(99);
    const total = 64 * MiB;
    const started = performance.now();
    await engine.put('bench', 'huge', {
      length: total,
      stream: (async function* () {
        for (let at = 0; at < total; at += chunk.byteLength) yield chunk;
      })(),
    });
    const ms = performance.now() - started;
    report(formatResult({ name: `engine put 64 MiB streamed (${label})`, ops: 1, seconds: ms / 1000, bytesPerOp: total, p50: ms, p99: ms }));
  } finally {
    await engine.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function startEndpoint(dataDir: string): Promise<{ url: string; stop(): void }> {
  const child = fork(fileURLToPath(new URL('./blobs-endpoint.ts', import.meta.url)), [dataDir], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`The S3 endpoint exited (${code ?? 'signal'}) before listening.`)));
    child.stdout!.once('data', (data: Buffer) => resolve(data.toString().trim()));
  });
  return { url, stop: () => child.kill('SIGTERM') };
}
