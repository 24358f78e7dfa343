/**
 * `edgeport dev` end to end: the real CLI serves a script whose bucket binding is driven over
 * HTTP, cuts off a script that spins at its CPU limit while still serving, rejects a bad config
 * with exit code 1, and stops cleanly on SIGTERM.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { spawnNode, stopChild } from '../helpers/child-processes.ts';
import { until } from '../helpers/delivered-logs.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const KiB = 1024;

const BUCKET_SCRIPT = `
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const key = decodeURIComponent(url.pathname.slice(1));
    switch (request.method) {
      case 'PUT': {
        const object = await env.FILES.put(key, request.body, { httpMetadata: request.headers });
        return Response.json({ key: object.key, size: object.size, etag: object.etag });
      }
      case 'GET': {
        if (url.searchParams.has('list')) {
          const listing = await env.FILES.list({ prefix: key });
          return Response.json(listing.objects.map((o) => o.key));
        }
        if (url.pathname === '/spin') { while (true) {} }
        const object = await env.FILES.get(key, { range: request.headers });
        if (object === null) return new Response('not found', { status: 404 });
        const headers = new Headers({ etag: object.httpEtag });
        object.writeHttpMetadata(headers);
        if (object.range && request.headers.has('range')) {
          headers.set('content-range', 'bytes ' + object.range.offset + '-' + (object.range.offset + object.range.length - 1) + '/' + object.size);
          return new Response(object.body, { status: 206, headers });
        }
        return new Response(object.body, { headers });
      }
      case 'HEAD': {
        const object = await env.FILES.head(key);
        if (object === null) return new Response(null, { status: 404 });
        return new Response(null, { headers: { etag: object.httpEtag, 'x-size': String(object.size) } });
      }
      case 'DELETE':
        await env.FILES.delete(key);
        return new Response(null, { status: 204 });
    }
    return new Response('method not allowed', { status: 405 });
  },
};
`;

interface Dev {
  url: string;
  /** Everything the process wrote to stdout so far. */
  stdout(): string;
  stderr(): string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

/** A temp dir holding the script and its config; removed when the test ends. */
function writeScript(t: TestContext, source: string, config: string): { dir: string; config: string } {
  const dir = mkdtempSync(join(tmpdir(), 'edgeport-e2e-dev-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'script.mjs'), source);
  const file = join(dir, 'script.toml');
  writeFileSync(file, `name = "e2e"\nmain = "script.mjs"\ncompatibility_date = "2025-01-01"\n${config}`);
  return { dir, config: file };
}

/** Spawns `edgeport dev` exactly as a user would, on port 0; resolves with its URL or its exit code. */
function spawnDev(t: TestContext, config: string, dataDir: string): Promise<Dev | { exitCode: number | null; stderr: string }> {
  const child = spawnNode(['bin/edgeport.js', 'dev', config, '--port', '0', '--data-dir', dataDir], { cwd: ROOT });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  t.after(() => stopChild(child));
  return new Promise((resolve) => {
    const onData = () => {
      const match = /http:\/\/127\.0\.0\.1:(\d+)/.exec(stdout);
      if (!match) return;
      child.stdout!.off('data', onData);
      resolve({
        url: match[0],
        stdout: () => stdout,
        stderr: () => stderr,
        stop: async () => {
          child.kill('SIGTERM');
          return exited;
        },
      });
    };
    child.stdout!.on('data', onData);
    void exited.then((exitCode) => resolve({ exitCode, stderr }));
  });
}

async function startDev(t: TestContext, source: string, config = ''): Promise<Dev & { dataDir: string }> {
  const { dir, config: file } = writeScript(t, source, config);
  const dataDir = join(dir, 'data');
  const dev = await spawnDev(t, file, dataDir);
  assert.ok('url' in dev, `edgeport dev failed to start: ${'stderr' in dev ? dev.stderr : ''}`);
  return { ...dev, dataDir };
}

function pattern(size: number, seed: number): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i++) bytes[i] = (i * seed + 7) % 256;
  return bytes;
}

function md5(bytes: Uint8Array): string {
  return createHash('md5').update(bytes).digest('hex');
}

test('edgeport dev serves a script whose bucket binding is driven over HTTP', { timeout: 60_000 }, async (t) => {
  const dev = await startDev(t, BUCKET_SCRIPT, '\n[[store_buckets]]\nbinding = "FILES"\nbucket_name = "e2e-files"\n');
  assert.ok(existsSync(join(dev.dataDir, 'metadata.sqlite')), 'the bucket was created in the data dir on first use');
  assert.equal(
    dev
      .stdout()
      .split('\n')
      .filter((line) => line.includes('http://127.0.0.1:')).length,
    1,
    'exactly one ready line',
  );

  const small = pattern(3 * KiB, 3);
  const large = pattern(1024 * KiB + 17, 5);
  const putSmall = await fetch(`${dev.url}/docs/small.bin`, { method: 'PUT', body: small, headers: { 'content-type': 'application/x-small' } });
  assert.equal(putSmall.status, 200);
  assert.deepEqual(await putSmall.json(), { key: 'docs/small.bin', size: small.length, etag: md5(small) });
  const putLarge = await fetch(`${dev.url}/docs/large.bin`, { method: 'PUT', body: large });
  assert.deepEqual(await putLarge.json(), { key: 'docs/large.bin', size: large.length, etag: md5(large) });
  assert.equal(readdirSync(join(dev.dataDir, 'blobs')).length, 1, 'the large body went to a blob file');

  const getSmall = await fetch(`${dev.url}/docs/small.bin`);
  assert.equal(getSmall.status, 200);
  assert.equal(getSmall.headers.get('content-type'), 'application/x-small');
  assert.equal(getSmall.headers.get('etag'), `"${md5(small)}"`);
  assert.deepEqual(new Uint8Array(await getSmall.arrayBuffer()), small);
  // The large body is sent by the server straight from its blob file (the script never reads it).
  const getLarge = await fetch(`${dev.url}/docs/large.bin`);
  assert.equal(getLarge.headers.get('content-length'), String(large.length));
  assert.equal(md5(new Uint8Array(await getLarge.arrayBuffer())), md5(large));
  const ranged = await fetch(`${dev.url}/docs/large.bin`, { headers: { range: 'bytes=1000-1999' } });
  assert.equal(ranged.status, 206);
  assert.equal(ranged.headers.get('content-range'), `bytes 1000-1999/${large.length}`);
  assert.deepEqual(new Uint8Array(await ranged.arrayBuffer()), large.subarray(1000, 2000));

  const head = await fetch(`${dev.url}/docs/large.bin`, { method: 'HEAD' });
  assert.equal(head.status, 200);
  assert.equal(head.headers.get('x-size'), String(large.length));
  assert.equal(head.headers.get('etag'), `"${md5(large)}"`);

  assert.deepEqual(await (await fetch(`${dev.url}/docs/?list`)).json(), ['docs/large.bin', 'docs/small.bin']);
  assert.equal((await fetch(`${dev.url}/docs/small.bin`, { method: 'DELETE' })).status, 204);
  assert.equal((await fetch(`${dev.url}/docs/small.bin`)).status, 404);
  assert.equal((await fetch(`${dev.url}/docs/small.bin`, { method: 'HEAD' })).status, 404);
  assert.deepEqual(await (await fetch(`${dev.url}/docs/?list`)).json(), ['docs/large.bin']);

  assert.equal(await dev.stop(), 0, 'SIGTERM stops it cleanly');
});

test('a request that spins in while (true) {} fails at the CPU limit and the next request is served', { timeout: 60_000 }, async (t) => {
  const dev = await startDev(t, BUCKET_SCRIPT, 'limits = { cpu_ms = 300 }\n\n[[store_buckets]]\nbinding = "FILES"\nbucket_name = "e2e-spin"\n');
  assert.equal((await fetch(`${dev.url}/k`, { method: 'PUT', body: 'still here' })).status, 200);
  const started = performance.now();
  const spun = await fetch(`${dev.url}/spin`);
  const elapsed = performance.now() - started;
  assert.equal(spun.status, 503);
  assert.match(await spun.text(), /CPU time limit/);
  assert.ok(elapsed >= 300 && elapsed < 3000, `cut off at the limit, after ${Math.round(elapsed)} ms`);
  const next = await fetch(`${dev.url}/k`);
  assert.equal(next.status, 200);
  assert.equal(await next.text(), 'still here');
  // The log line is written by the server on its own time: wait for it rather than race it.
  await until(
    () => dev.stderr(),
    (out) => /"failure":"cpu"/.test(out),
    'the cut-off in the log (stderr)',
    10_000,
  );
  assert.equal(await dev.stop(), 0);
});

test('a bad script config is reported on stderr with exit code 1', { timeout: 60_000 }, async (t) => {
  const { dir, config } = writeScript(t, BUCKET_SCRIPT, 'colour = "blue"\nruntime = "node"\n');
  const result = await spawnDev(t, config, join(dir, 'data'));
  assert.ok('exitCode' in result, 'it must not start');
  assert.equal(result.exitCode, 1);
  assert.match(result.stderr, /unknown key\(s\) "colour"/);
  assert.match(result.stderr, /runtime: scripts now run in workerd only/);
  assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace for a user error');

  // A flag workerd does not know fails the start, in the platform's words.
  const flagged = writeScript(t, BUCKET_SCRIPT, 'compatibility_flags = ["warp_drive"]\n');
  const refused = await spawnDev(t, flagged.config, join(flagged.dir, 'data'));
  assert.ok('exitCode' in refused, 'it must not start');
  assert.equal(refused.exitCode, 1);
  assert.match(refused.stderr, /No such compatibility flag: warp_drive/);
  assert.doesNotMatch(refused.stderr, /\n\s+at /, 'no stack trace for a user error');
});

test('usage mistakes exit 2, for dev and start alike', { timeout: 60_000 }, async () => {
  const run = (args: string[]) =>
    new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawnNode(['bin/edgeport.js', ...args], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.once('exit', (code) => resolve({ code, stderr }));
    });
  const [noConfig, badPort, start] = await Promise.all([run(['dev']), run(['dev', 'x.toml', '--port', 'http']), run(['start', '--bogus'])]);
  assert.equal(noConfig.code, 2);
  assert.match(noConfig.stderr, /needs a script config/);
  assert.equal(badPort.code, 2);
  assert.match(badPort.stderr, /--port must be a port number/);
  assert.equal(start.code, 2);
  assert.match(start.stderr, /Unknown option '--bogus'/);
});
