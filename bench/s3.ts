/**
 * S3 API: PUT/GET of 1 KiB and 1 MiB over a real listener, each request SigV4-verified (presigned
 * URLs, so wrk/autocannon can replay them), beside the same operations through the binding in
 * process, and a bare node:http server under the same load (what HTTP alone costs on this
 * machine). 32 connections; with wrk, each line also gives the server's CPU per request. Then
 * 100 MiB uploads with @aws-sdk/lib-storage (its default 5 MiB parts, 4 at a time) to a real
 * `edgeport start`, with the CPU of server and client and the server's peak RSS growth meanwhile.
 */
import { createServer } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { systemClock } from '../src/core/clock.ts';
import { silentLogger } from '../src/core/log.ts';
import { createStoreBucket } from '../src/store/binding/index.ts';
import { openStoreEngine } from '../src/store/engine/open-store-engine.ts';
import { adminKey } from '../src/store/s3/key-grant.ts';
import { createS3Handler } from '../src/store/s3/s3-handler.ts';
import { startEdgeport } from '../test/helpers/edgeport-server.ts';
import { cpuMs, peakRssGrowth } from '../test/helpers/process-memory.ts';
import { runLoad } from './load.ts';
import { formatResult, median, runClosedLoop, withCpu } from './stats.ts';

const KiB = 1024;
const MiB = 1024 * KiB;

export async function benchS3(seconds: number, rounds = 3): Promise<string[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'edgeport-bench-s3-'));
  const engine = await openStoreEngine({ dataDir, recover: true, maintenance: true, backgroundCheckpoints: true });
  await engine.ensureBucket('bench');
  const handler = createS3Handler({
    engine,
    clock: systemClock,
    logger: silentLogger,
    keys: (id) => (id === 'BENCHKEY' ? adminKey('bench-secret') : undefined),
  });
  const server = createServer((req, res) => {
    void handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = new S3Client({ endpoint, region: 'auto', forcePathStyle: true, credentials: { accessKeyId: 'BENCHKEY', secretAccessKey: 'bench-secret' } });
  const binding = createStoreBucket(engine, 'bench', { listHonorsInclude: true });
  const bare = await startBareHttp(Buffer.alloc(KiB, 97));
  const lines: string[] = [];
  const report = (line: string) => {
    lines.push(line);
    console.log(line);
  };
  try {
    const getLua = join(dataDir, 'get.lua');
    writeFileSync(getLua, 'wrk.method = "GET"\n');
    // Every HTTP load of the table, measured once per round in turn: a machine whose speed drifts
    // (a shared VM's does) drifts under all of them alike, and the medians compare.
    const loads: HttpLoad[] = [];
    const sizes = (
      [
        ['1 KiB', KiB],
        ['1 MiB', MiB],
      ] as const
    ).map(([label, size]) => ({ label, size, body: Buffer.alloc(size, 97), key: `obj-${size}` }));
    for (const { label, size, body, key } of sizes) {
      await client.send(new PutObjectCommand({ Bucket: 'bench', Key: key, Body: body }));
      const getUrl = await getSignedUrl(client, new GetObjectCommand({ Bucket: 'bench', Key: key }), { expiresIn: 3600 });
      const putUrl = await getSignedUrl(client, new PutObjectCommand({ Bucket: 'bench', Key: `put-${size}` }), { expiresIn: 3600 });
      const bodyFile = join(dataDir, `body-${size}`);
      writeFileSync(bodyFile, body);
      const lua = join(dataDir, `put-${size}.lua`);
      writeFileSync(lua, `wrk.method = "PUT"\nlocal f = io.open("${bodyFile}", "rb")\nwrk.body = f:read("*all")\nf:close()\n`);
      if (size === KiB) {
        // What node:http alone does on this machine: the floor under any HTTP face's numbers.
        loads.push({ name: 'bare node:http GET 1 KiB', url: bare.url, lua: getLua, method: 'GET', size });
        loads.push({ name: 'bare node:http PUT 1 KiB', url: bare.url, lua, method: 'PUT', body, size });
      }
      loads.push({ name: `s3 signed GET ${label}`, url: getUrl, lua: getLua, method: 'GET', size });
      loads.push({ name: `s3 signed PUT ${label}`, url: putUrl, lua, method: 'PUT', body, size });
    }
    report(
      `HTTP loads: 32 connections, ${rounds} rounds of ${seconds} s each, taken in turn; each line is the median round, cpu is this server's CPU per request (lowest-highest round)`,
    );
    for (const line of await measureInRounds(loads, seconds, rounds)) report(line);
    for (const { label, size, body, key } of sizes) {
      report(
        formatResult(
          await runClosedLoop(`binding get ${label}`, { concurrency: 32, durationMs: seconds * 1000, bytesPerOp: size }, async () => {
            const object = await binding.get(key);
            if (object && 'arrayBuffer' in object) await object.arrayBuffer();
          }),
        ),
      );
      report(
        formatResult(
          await runClosedLoop(`binding put ${label}`, { concurrency: 32, durationMs: seconds * 1000, bytesPerOp: size }, async (i) => {
            await binding.put(`bput-${size}-${i % 100}`, body);
          }),
        ),
      );
    }
  } finally {
    client.destroy();
    bare.close();
    server.closeAllConnections();
    server.close();
    await engine.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  for (const line of await benchLibStorageUpload()) report(line);
  return lines;
}

interface HttpLoad {
  name: string;
  url: string;
  lua: string;
  method: 'GET' | 'PUT';
  body?: Buffer;
  size: number;
}

interface RoundResult {
  tool: string;
  requestsPerSec: number;
  p50: number;
  p99: number;
  errors: number;
  cpuUsPerOp: number | undefined;
}

/** Each load once per round, in turn, after a second's warm-up each (steady state, not the JIT compiling the path). */
async function measureInRounds(loads: readonly HttpLoad[], seconds: number, rounds: number): Promise<string[]> {
  const runs = new Map<HttpLoad, RoundResult[]>(loads.map((load) => [load, []]));
  for (const load of loads) await runHttpLoad(load, 1);
  for (let round = 0; round < rounds; round++) {
    for (const load of loads) runs.get(load)!.push(await measureHttpLoad(load, seconds));
  }
  return loads.map((load) => {
    const results = runs.get(load)!;
    const cpus = results.flatMap((r) => (r.cpuUsPerOp === undefined ? [] : [r.cpuUsPerOp]));
    const line = formatResult({
      name: `${load.name} (${results[0]!.tool})`,
      ops: median(results.map((r) => r.requestsPerSec)),
      seconds: 1,
      p50: median(results.map((r) => r.p50)),
      p99: median(results.map((r) => r.p99)),
      bytesPerOp: load.size,
      ...(cpus.length > 0 ? { cpuUsPerOp: median(cpus) } : {}),
    });
    const spread = cpus.length > 1 ? ` (${Math.min(...cpus).toFixed(0)}-${Math.max(...cpus).toFixed(0)})` : '';
    const errors = results.reduce((sum, r) => sum + r.errors, 0);
    return line + spread + (errors ? `  errors ${errors}` : '');
  });
}

function runHttpLoad(load: HttpLoad, seconds: number) {
  const { url, lua, method, body } = load;
  return runLoad({ url, connections: 32, seconds, lua, env: {}, autocannonRequest: () => (body ? { method, body } : { method }) });
}

/** wrk (or autocannon) against a server in this process; with wrk apart, this process's CPU is the server's. */
async function measureHttpLoad(load: HttpLoad, seconds: number): Promise<RoundResult> {
  const { result, cpuUs } = await withCpu(() => runHttpLoad(load, seconds));
  const ops = result.requestsPerSec * seconds;
  return {
    tool: result.tool,
    requestsPerSec: result.requestsPerSec,
    p50: result.p50,
    p99: result.p99,
    errors: result.errors,
    cpuUsPerOp: result.tool === 'wrk' && ops > 0 ? cpuUs / ops : undefined,
  };
}

/** A bare node:http server answering 1 KiB GETs and taking 1 KiB PUTs (body read, empty 200). */
async function startBareHttp(body: Buffer): Promise<{ url: string; close: () => void }> {
  const server = createServer((req, res) => {
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-length': body.byteLength, etag: '"0123456789abcdef0123456789abcdef"' });
      res.end(body);
      return;
    }
    req.resume();
    req.once('end', () => {
      res.writeHead(200, { 'content-length': 0, etag: '"0123456789abcdef0123456789abcdef"' });
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/bench/object`,
    close() {
      server.closeAllConnections();
      server.close();
    },
  };
}

const UPLOAD_KEY = { EDGEPORT_S3_ACCESS_KEY_ID: 'EDGEPORTBENCHKEY', EDGEPORT_S3_SECRET_ACCESS_KEY: 'bench-secret-0123456789abcdef' };

/**
 * 100 MiB uploads through lib-storage, the body given whole (a Buffer) and streamed (a generator of
 * 1 MiB chunks, which lib-storage gathers into parts itself): after one warm-up upload, five of
 * each; the median and best rates, and the server's peak RSS growth meanwhile.
 */
async function benchLibStorageUpload(): Promise<string[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'edgeport-bench-upload-'));
  const server = await startEdgeport({ dataDir, env: { ...UPLOAD_KEY, EDGEPORT_LOG_LEVEL: 'error' } });
  const client = new S3Client({
    endpoint: server.urls['S3-compatible API'],
    region: 'auto',
    forcePathStyle: true,
    credentials: { accessKeyId: UPLOAD_KEY.EDGEPORT_S3_ACCESS_KEY_ID, secretAccessKey: UPLOAD_KEY.EDGEPORT_S3_SECRET_ACCESS_KEY },
  });
  const whole = Buffer.alloc(100 * MiB, 7);
  const block = whole.subarray(0, MiB);
  const bodies = {
    'Buffer body': () => whole,
    'streamed body': () =>
      Readable.from(
        (function* () {
          for (let i = 0; i < 100; i++) yield block;
        })(),
      ),
  };
  try {
    await client.send(new CreateBucketCommand({ Bucket: 'upload' }));
    await new Upload({ client, params: { Bucket: 'upload', Key: 'warm-up', Body: bodies['Buffer body']() } }).done();
    const lines: string[] = [];
    for (const [label, body] of Object.entries(bodies)) {
      const rates: number[] = [];
      let growth = 0;
      const serverCpu = cpuMs(server.child.pid!);
      const { cpuUs: clientCpu } = await withCpu(async () => {
        for (let run = 0; run < 5; run++) {
          growth = Math.max(
            growth,
            await peakRssGrowth(server.child.pid!, async () => {
              const started = performance.now();
              await new Upload({ client, params: { Bucket: 'upload', Key: `big-${run}`, Body: body() } }).done();
              rates.push(100 / ((performance.now() - started) / 1000));
            }),
          );
        }
      });
      rates.sort((a, b) => a - b);
      lines.push(
        `lib-storage upload 100 MiB, ${label.padEnd(13)} ${rates[2]!.toFixed(0).padStart(6)} MiB/s median, best ${rates[4]!.toFixed(0)} (5 runs); ` +
          `CPU per upload: server ${((cpuMs(server.child.pid!) - serverCpu) / 5).toFixed(0)} ms, client ${(clientCpu / 5000).toFixed(0)} ms; ` +
          `server RSS growth at most ${(growth / MiB).toFixed(1)} MiB`,
      );
    }
    return lines;
  } finally {
    client.destroy();
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
