/**
 * A script's life in workerd beyond one request and response, on one host shared by the file (one
 * workerd start): errors nobody awaits harm nothing, one isolate serves many
 * requests at once, HEAD and every kind of body go out as made, ctx.waitUntil work finishes after
 * the response, and a client that hangs up cancels the script's stream. (Ported from the removed
 * worker-thread runtime's tests: the same behaviour, now workerd's.)
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { after, before, test } from 'node:test';
import { startTestHost, type TestHost } from '../../helpers/script-host.ts';

const SCRIPT = `
import { createHash } from 'node:crypto';
export default {
  async fetch(request, env, ctx) {
    const { pathname, searchParams } = new URL(request.url);
    if (pathname === '/reject') { Promise.reject(new Error('nobody listens')); return new Response('rejected'); }
    if (pathname === '/late-throw') {
      ctx.waitUntil(new Promise((resolve) => setTimeout(() => { resolve(); throw new Error('from a timer'); }, 1)));
      return new Response('thrown later');
    }
    if (pathname === '/sleep') { await new Promise((resolve) => setTimeout(resolve, 200)); return new Response(searchParams.get('n')); }
    if (pathname === '/digest') {
      const hash = createHash('sha256');
      let bytes = 0;
      for await (const chunk of request.body) { hash.update(chunk); bytes += chunk.byteLength; }
      return Response.json({ bytes, sha256: hash.digest('hex') });
    }
    if (pathname === '/echo') return new Response(request.body, { headers: { 'content-type': request.headers.get('content-type') ?? 'none' } });
    if (pathname === '/chunks') {
      const count = Number(searchParams.get('n'));
      let sent = 0;
      return new Response(new ReadableStream({
        async pull(controller) {
          if (sent === count) return controller.close();
          await new Promise((resolve) => setTimeout(resolve, 5));
          controller.enqueue(new TextEncoder().encode('chunk ' + sent++ + '\\n'));
        },
      }));
    }
    if (pathname === '/bytes') return new Response(new Uint8Array([1, 2, 3, 4]), { status: 201, headers: { 'x-kind': 'bytes' } });
    if (pathname === '/empty') return new Response(null, { status: 204 });
    if (pathname === '/later') {
      ctx.waitUntil(new Promise((resolve) => setTimeout(resolve, 50)).then(() => { globalThis.later = 'done'; }));
      return new Response('soon');
    }
    if (pathname === '/state') return new Response(String(globalThis.later));
    if (pathname === '/forever') {
      return new Response(new ReadableStream({
        pull: (controller) => new Promise((resolve) => setTimeout(() => resolve(controller.enqueue(new Uint8Array(64 * 1024))), 1)),
        cancel: () => { globalThis.cancelled = (globalThis.cancelled ?? 0) + 1; },
      }));
    }
    if (pathname === '/cancelled') return new Response(String(globalThis.cancelled));
    return new Response('hello', { headers: { 'x-method': request.method } });
  },
};
`;

let host: TestHost;
// The host's clean-up runs once every test is done (node:test's `after` called inside `before` would run it at once).
const cleanUps: Array<(...args: never[]) => unknown> = [];
after(
  async () => {
    for (const cleanUp of cleanUps) await cleanUp();
  },
  { timeout: 30_000 },
);
before(
  async () => {
    host = await startTestHost({ after: (fn) => void (fn && cleanUps.push(fn)) }, SCRIPT, {
      config: { compatibility_date: '2025-01-01', compatibility_flags: ['nodejs_compat'] },
    });
  },
  { timeout: 60_000 },
);

test('an unhandled rejection or a throw from a timer does not take the script down', { timeout: 20_000 }, async () => {
  assert.equal(await (await fetch(`${host.url}/reject`)).text(), 'rejected');
  assert.equal(await (await fetch(`${host.url}/late-throw`)).text(), 'thrown later');
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(await (await fetch(host.url)).text(), 'hello');
  assert.ok(!host.logs.some((record) => record.failure !== undefined || /stopped unexpectedly|cut off/.test(record.msg)), 'workerd was never replaced');
});

test('one isolate serves many requests at once', { timeout: 20_000 }, async () => {
  const started = performance.now();
  const bodies = await Promise.all(Array.from({ length: 40 }, async (_, i) => (await fetch(`${host.url}/sleep?n=${i}`)).text()));
  assert.deepEqual(
    bodies,
    Array.from({ length: 40 }, (_, i) => String(i)),
  );
  // 40 requests of 200 ms each, one after another, would take 8 s.
  assert.ok(performance.now() - started < 4000, 'the requests overlapped');
});

test('a request body streams through the script and back', { timeout: 20_000 }, async () => {
  const body = new Uint8Array(5 * 1024 * 1024);
  for (let i = 0; i < body.length; i++) body[i] = (i * 31) % 251;
  const digest = await (await fetch(`${host.url}/digest`, { method: 'POST', body })).json();
  assert.deepEqual(digest, { bytes: body.length, sha256: createHash('sha256').update(body).digest('hex') });
  const echoed = await fetch(`${host.url}/echo`, { method: 'PUT', body, headers: { 'content-type': 'application/x-test' } });
  assert.equal(echoed.headers.get('content-type'), 'application/x-test');
  assert.deepEqual(new Uint8Array(await echoed.arrayBuffer()), body);
});

test('streamed, byte, empty and plain responses arrive as the script made them', { timeout: 20_000 }, async () => {
  assert.equal(await (await fetch(`${host.url}/chunks?n=5`)).text(), 'chunk 0\nchunk 1\nchunk 2\nchunk 3\nchunk 4\n');
  const bytes = await fetch(`${host.url}/bytes`);
  assert.equal(bytes.status, 201);
  assert.equal(bytes.headers.get('x-kind'), 'bytes');
  assert.equal(bytes.headers.get('content-length'), '4');
  assert.deepEqual(new Uint8Array(await bytes.arrayBuffer()), new Uint8Array([1, 2, 3, 4]));
  const empty = await fetch(`${host.url}/empty`);
  assert.equal(empty.status, 204);
  assert.equal(await empty.text(), '');
  const plain = await fetch(host.url);
  assert.equal(plain.headers.get('content-type'), 'text/plain;charset=UTF-8');
  assert.equal(plain.headers.get('content-length'), '5');
});

test('HEAD gets the head of the response and no body', { timeout: 20_000 }, async () => {
  const head = await new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
    request(`${host.url}/`, { method: 'HEAD' }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    })
      .on('error', reject)
      .end();
  });
  assert.equal(head.status, 200);
  assert.equal(head.headers['x-method'], 'HEAD');
  assert.equal(head.body, '');
  const streamed = await fetch(`${host.url}/chunks?n=3`, { method: 'HEAD' });
  assert.equal(streamed.status, 200);
  assert.equal(await streamed.text(), '');
});

test('ctx.waitUntil work finishes after the response is sent', { timeout: 20_000 }, async () => {
  assert.equal(await (await fetch(`${host.url}/later`)).text(), 'soon');
  assert.equal(await (await fetch(`${host.url}/state`)).text(), 'undefined');
  await until(async () => (await (await fetch(`${host.url}/state`)).text()) === 'done', 'the waitUntil work ran');
});

test('a client that hangs up mid-response cancels the script stream', { timeout: 20_000 }, async () => {
  const controller = new AbortController();
  const res = await fetch(`${host.url}/forever`, { signal: controller.signal });
  const reader = res.body!.getReader();
  let received = 0;
  while (received < 1024 * 1024) received += (await reader.read()).value!.byteLength;
  controller.abort();
  await until(async () => (await (await fetch(`${host.url}/cancelled`)).text()) === '1', 'the stream was cancelled');
});

async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
