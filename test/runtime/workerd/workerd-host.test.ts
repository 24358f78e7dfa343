/**
 * Scripts on workerd through the real script host (a workerd process started, supervised and
 * stopped by the host): requests and responses pass as they are made, failures are answered and
 * logged as in every runtime, a crashed or spinning workerd is replaced while requests go on, and
 * no workerd outlives its host, even when the server is killed.
 */
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import { request, type IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { RuntimeError } from '../../../src/runtime/errors.ts';
import { spawnNode, stopChild } from '../../helpers/child-processes.ts';
import { startTestHost } from '../../helpers/script-host.ts';
import { bodyOf, openRaw, statusOf } from '../../helpers/raw-connections.ts';
import { tempDir } from '../../helpers/temp-dir.ts';
import { workerdProcesses } from '../../helpers/workerd-processes.ts';

// `runtime = "workerd"` is the only runtime and may be left out; these configs name it, as older configs do.
const WORKERD = { runtime: 'workerd' };

const SCRIPT = `
export default {
  async fetch(request, env, ctx) {
    const { pathname, searchParams } = new URL(request.url);
    if (pathname === '/echo') {
      return new Response(request.body, { status: 201, headers: { 'x-method': request.method, 'x-url': request.url, 'x-seen': request.headers.get('x-sent') ?? '', 'set-cookie': 'a=1' } });
    }
    if (pathname === '/headers') return new Response([...request.headers.keys()].join(',') + ' ' + (await request.text()));
    if (pathname === '/digest') {
      const digest = await crypto.subtle.digest('SHA-256', await request.arrayBuffer());
      return new Response([...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join(''));
    }
    if (pathname === '/big') return new Response(new Uint8Array(Number(searchParams.get('n'))).fill(97));
    if (pathname === '/throw') throw new Error('kaboom');
    if (pathname === '/not-a-response') return { status: 200 };
    if (pathname === '/log') { console.log('hello from the script'); return new Response('logged'); }
    if (pathname === '/slow') { await new Promise((resolve) => setTimeout(resolve, 5000)); return new Response('slow'); }
    if (pathname === '/spin') { while (true) {} }
    if (pathname === '/grow') { globalThis.kept = []; for (;;) globalThis.kept.push({ at: globalThis.kept.length, text: 'x'.repeat(64) + globalThis.kept.length }); }
    if (pathname === '/wait-until') { ctx.waitUntil(Promise.resolve()); return new Response('waited'); }
    return new Response('ok');
  },
};
`;

test('a script on workerd gets the request as sent and its response goes out as made; bodies stream both ways', { timeout: 30_000 }, async (t) => {
  const host = await startTestHost(t, SCRIPT, { config: WORKERD });
  const echo = await new Promise<{ status: number; headers: IncomingHttpHeaders; body: string }>((resolve, reject) => {
    const sent = request(`${host.url}/echo?q=1`, { method: 'PUT', headers: { 'x-sent': 'yes', host: 'example.test' } }, (res) => {
      let body = '';
      res
        .setEncoding('utf8')
        .on('data', (chunk: string) => (body += chunk))
        .on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    sent.on('error', reject);
    sent.end('sent body');
  });
  assert.equal(echo.status, 201);
  assert.equal(echo.headers['x-method'], 'PUT');
  assert.equal(echo.headers['x-url'], 'http://example.test/echo?q=1', 'the URL is made of the Host header, as on the platform');
  assert.equal(echo.headers['x-seen'], 'yes');
  assert.deepEqual(echo.headers['set-cookie'], ['a=1']);
  assert.equal(echo.body, 'sent body');

  const body = randomBytes(4 * 1024 * 1024);
  const digest = await fetch(`${host.url}/digest`, { method: 'POST', body });
  assert.equal(await digest.text(), createHash('sha256').update(body).digest('hex'));
  const big = await fetch(`${host.url}/big?n=${8 * 1024 * 1024}`);
  assert.equal((await big.arrayBuffer()).byteLength, 8 * 1024 * 1024);
  assert.equal(await (await fetch(`${host.url}/wait-until`)).text(), 'waited');

  assert.equal(await (await fetch(`${host.url}/log`)).text(), 'logged');
  await until(() => host.logs.some((record) => record.output === 'hello from the script'), 'console.log reaches the log');
});

test(
  'headers a request names in Connection (hop-by-hop: curl --http2 names HTTP2-Settings) never reach the script; Host and Content-Length still frame it',
  { timeout: 30_000 },
  async (t) => {
    const host = await startTestHost(t, SCRIPT, { config: WORKERD });
    const { port } = new URL(host.url);
    const raw =
      'PUT /headers HTTP/1.1\r\nHost: example.test\r\nConnection: X-Hop, HTTP2-Settings, content-length, host, close\r\n' +
      'X-Hop: secret\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\nX-End-To-End: kept\r\nContent-Length: 4\r\n\r\nbody';
    const { text } = await (await openRaw(Number(port), { send: raw })).closed;
    assert.equal(statusOf(text), 200, text);
    const [names, body] = bodyOf(text).split(' ');
    const seen = names!.split(',');
    assert.ok(seen.includes('x-end-to-end'), `the script saw ${names}`);
    for (const hop of ['x-hop', 'http2-settings', 'connection']) assert.ok(!seen.includes(hop), `the script saw ${hop}: ${names}`);
    assert.ok(seen.includes('host') && seen.includes('content-length'), `the request kept its Host and Content-Length: ${names}`);
    assert.equal(body, 'body');
  },
);

test('a script that throws or answers no Response gets a 500, logged with its stack, and the next request is served', { timeout: 30_000 }, async (t) => {
  const host = await startTestHost(t, SCRIPT, { config: WORKERD });
  const res = await fetch(`${host.url}/throw`);
  assert.equal(res.status, 500);
  assert.equal(await res.text(), 'The script threw an exception.\n');
  const logged = host.logs.find((record) => record.msg === 'Script threw an exception.');
  assert.ok(logged, 'the exception is logged');
  assert.equal(logged.error, 'Error: kaboom');
  assert.match(String(logged.stack), /script\.js/);
  assert.equal(logged.answer, 500);
  const wrong = await fetch(`${host.url}/not-a-response`);
  assert.equal(wrong.status, 500);
  assert.ok(host.logs.some((record) => /must return a Response, but it returned an object \(Object\)/.test(String(record.error))));
  assert.equal(await (await fetch(host.url)).text(), 'ok');
});

test('a workerd that dies fails its requests in flight with 502 and is restarted; after stop no workerd is left', { timeout: 30_000 }, async (t) => {
  const host = await startTestHost(t, SCRIPT, { config: WORKERD });
  const [pid] = workerdProcesses();
  assert.ok(pid, 'workerd runs below the test process');
  const slow = fetch(`${host.url}/slow`);
  await new Promise((resolve) => setTimeout(resolve, 200));
  process.kill(pid, 'SIGKILL');
  const failed = await slow;
  assert.equal(failed.status, 502);
  assert.equal(await failed.text(), 'The script stopped unexpectedly.\n');
  // Served by the replacement (the request waits for it).
  assert.equal(await (await fetch(host.url)).text(), 'ok');
  assert.ok(host.logs.some((record) => record.msg.includes('stopped unexpectedly')));
  const [replacement] = workerdProcesses();
  assert.ok(replacement !== undefined && replacement !== pid);
  await host.stop();
  assert.deepEqual(workerdProcesses(), [], 'the host stopped its workerd');
  assert.equal(existsSync(`/proc/${replacement}`), false);
});

test('while (true) {} is cut off at the CPU limit with a 503, and the next request is served', { timeout: 30_000 }, async (t) => {
  const host = await startTestHost(t, SCRIPT, { config: { ...WORKERD, limits: { cpu_ms: 500 } } });
  const started = performance.now();
  const res = await fetch(`${host.url}/spin`);
  const elapsed = performance.now() - started;
  assert.equal(res.status, 503);
  assert.equal(await res.text(), 'The script exceeded its CPU time limit.\n');
  assert.ok(elapsed >= 500 && elapsed < 5000, `cut off at the limit, after ${Math.round(elapsed)} ms`);
  assert.equal(await (await fetch(host.url)).text(), 'ok');
  assert.ok(
    host.logs.some((record) => record.failure === 'cpu'),
    'the cut-off is logged',
  );
});

test("a script past its memory limit (V8's heap limit in workerd) is answered 503, logged, and the next request is served", { timeout: 30_000 }, async (t) => {
  const host = await startTestHost(t, SCRIPT, { config: { ...WORKERD, limits: { memory_mb: 32 } } });
  const res = await fetch(`${host.url}/grow`);
  const text = await res.text();
  const seen = () => host.logs.map((record) => `${record.msg} ${String(record.output ?? record.failure ?? '')}`).join('\n');
  assert.equal(`${res.status} ${text}`, '503 The script exceeded its memory limit.\n', `what the host logged:\n${seen()}`);
  assert.equal(await (await fetch(host.url)).text(), 'ok');
  await until(() => host.logs.some((record) => record.failure === 'memory'), 'the memory failure is logged');
});

test('a script that cannot load fails the start with what is wrong', { timeout: 30_000 }, async (t) => {
  const startFails = async (source: string, config: Record<string, unknown>, message: RegExp) => {
    await assert.rejects(startTestHost(t, source, { config: { ...WORKERD, ...config } }), (error: unknown) => {
      assert.ok(error instanceof RuntimeError);
      assert.equal(error.code, 'RUNTIME_SCRIPT_START_FAILED');
      assert.match(error.message, message);
      return true;
    });
  };
  await startFails('throw new Error("bad at load"); export default {};', {}, /failed to start in workerd.*Uncaught Error: bad at load/s);
  await startFails('export default { fetch() {', {}, /cannot be bundled for workerd:\n.*script\.mjs:1:\d+: Unexpected end of file/s);
  await startFails('export default {};', {}, /must have a default export with a fetch\(request, env, ctx\) method/);
  await startFails('export default { fetch: () => new Response("") };', { compatibility_flags: ['warp_drive'] }, /No such compatibility flag: warp_drive/);
  assert.deepEqual(workerdProcesses(), [], 'no workerd is left of a failed start');
});

test('workerd does not outlive a server that is killed', { timeout: 30_000 }, async (t) => {
  const dir = tempDir(t);
  writeFileSync(join(dir, 'script.mjs'), 'export default { fetch: () => new Response("held") };');
  const child = spawnNode(['--import', 'tsx', new URL('../../helpers/fixtures/holds-workerd-host.ts', import.meta.url).pathname], {
    env: { ...process.env, HOLDER_DIR: dir },
  });
  t.after(() => stopChild(child, 1_000));
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => line === 'ready' && resolve());
    child.once('exit', (code) => reject(new Error(`the holder exited (${code}) before it was ready`)));
  });
  const held = workerdProcesses(child.pid);
  assert.equal(held.length, 1);
  child.kill('SIGKILL');
  await until(() => !existsSync(`/proc/${held[0]}`), 'workerd stops once its server is gone');
});

async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
