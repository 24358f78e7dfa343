/**
 * Script isolation through the real worker pool and node:http: a script that throws, spins or
 * exhausts its memory fails only its own requests, and the next request is served.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startTestHost } from '../helpers/script-host.ts';

const FAILING_SCRIPT = `
export default {
  async fetch(request) {
    const { pathname } = new URL(request.url);
    if (pathname === '/throw') throw new Error('kaboom');
    if (pathname === '/spin') { while (true) {} }
    if (pathname === '/bomb') { const hoard = []; while (true) hoard.push(new Array(1e5).fill(Math.random())); }
    if (pathname === '/reject') { Promise.reject(new Error('nobody listens')); return new Response('rejected'); }
    if (pathname === '/late-throw') { setTimeout(() => { throw new Error('from a timer'); }, 1); return new Response('thrown later'); }
    if (pathname === '/not-a-response') return { status: 200 };
    if (pathname === '/exit') process.exit(3);
    return new Response('ok');
  },
};
`;

test('a script that throws gets a 500, the error is logged, and the worker keeps serving; one that exits is replaced', { timeout: 10_000 }, async (t) => {
  const host = await startTestHost(t, FAILING_SCRIPT);
  const res = await fetch(`${host.url}/throw`);
  assert.equal(res.status, 500);
  assert.match(await res.text(), /threw an exception/);
  const logged = host.logs.find((record) => record.msg === 'Script threw an exception.');
  assert.ok(logged, 'the exception is logged');
  assert.match(String(logged.error), /kaboom/);
  assert.match(String(logged.stack), /script\.mjs/);
  assert.equal(logged.answer, 500);
  assert.equal(await (await fetch(host.url)).text(), 'ok');

  const wrong = await fetch(`${host.url}/not-a-response`);
  assert.equal(wrong.status, 500);
  assert.ok(host.logs.some((record) => /must return a Response/.test(String(record.error))));

  const exited = await fetch(`${host.url}/exit`);
  assert.equal(exited.status, 502);
  assert.match(await exited.text(), /stopped unexpectedly/);
  assert.equal(await (await fetch(host.url)).text(), 'ok');
  assert.ok(host.logs.some((record) => record.failure === 'crash'));
});

test('an unhandled rejection or a throw from a timer does not take the worker down', { timeout: 10_000 }, async (t) => {
  const host = await startTestHost(t, FAILING_SCRIPT, { poolSize: 1 });
  assert.equal(await (await fetch(`${host.url}/reject`)).text(), 'rejected');
  assert.equal(await (await fetch(`${host.url}/late-throw`)).text(), 'thrown later');
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(await (await fetch(host.url)).text(), 'ok');
  assert.ok(host.logs.some((record) => /nobody listens/.test(String(record.error))));
  assert.ok(host.logs.some((record) => /from a timer/.test(String(record.error))));
  assert.ok(!host.logs.some((record) => record.msg.includes('cut off')), 'no worker was replaced');
});

test('while (true) {} fails at the CPU limit, other requests go on, and the next request is served', { timeout: 10_000 }, async (t) => {
  const host = await startTestHost(t, FAILING_SCRIPT, { config: { limits: { cpu_ms: 300 } } });
  const started = performance.now();
  const spinning = fetch(`${host.url}/spin`);
  // While one worker spins, the other still answers.
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(await (await fetch(host.url)).text(), 'ok');
  const res = await spinning;
  const elapsed = performance.now() - started;
  assert.equal(res.status, 503);
  assert.match(await res.text(), /CPU time limit/);
  assert.ok(elapsed >= 300 && elapsed < 3000, `cut off at the limit, after ${Math.round(elapsed)} ms`);
  assert.equal(await (await fetch(host.url)).text(), 'ok');
  assert.ok(host.logs.some((record) => record.failure === 'cpu'), 'the cut-off is logged');
});

test('a memory bomb fails at the memory limit and the next request is served', { timeout: 10_000 }, async (t) => {
  const host = await startTestHost(t, FAILING_SCRIPT, { config: { limits: { memory_mb: 64, cpu_ms: 20_000 } }, poolSize: 1 });
  const res = await fetch(`${host.url}/bomb`);
  assert.equal(res.status, 503);
  assert.match(await res.text(), /memory limit/);
  // With one worker, this waits for the replacement.
  assert.equal(await (await fetch(host.url)).text(), 'ok');
  assert.ok(host.logs.some((record) => record.failure === 'memory'));
});

test('one worker serves many requests at once', { timeout: 10_000 }, async (t) => {
  const host = await startTestHost(t, `
export default {
  async fetch(request) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    return new Response(new URL(request.url).pathname);
  },
};
`, { poolSize: 1 });
  const started = performance.now();
  const bodies = await Promise.all(Array.from({ length: 40 }, async (_, i) => (await fetch(`${host.url}/${i}`)).text()));
  assert.deepEqual(bodies, Array.from({ length: 40 }, (_, i) => `/${i}`));
  assert.ok(performance.now() - started < 2000, 'the requests overlapped');
});

const STREAMING_SCRIPT = `
import { createHash } from 'node:crypto';
export default {
  async fetch(request, env, ctx) {
    const { pathname, searchParams } = new URL(request.url);
    if (pathname === '/echo') return new Response(request.body, { headers: { 'content-type': request.headers.get('content-type') ?? 'none' } });
    if (pathname === '/digest') {
      const hash = createHash('sha256');
      let bytes = 0;
      for await (const chunk of request.body) { hash.update(chunk); bytes += chunk.byteLength; }
      return Response.json({ bytes, sha256: hash.digest('hex') });
    }
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

test('a request body streams through the script and back, both ways under flow control', { timeout: 10_000 }, async (t) => {
  const host = await startTestHost(t, STREAMING_SCRIPT, { poolSize: 1 });
  const body = new Uint8Array(5 * 1024 * 1024);
  for (let i = 0; i < body.length; i++) body[i] = (i * 31) % 251;
  const { createHash } = await import('node:crypto');
  const digest = await (await fetch(`${host.url}/digest`, { method: 'POST', body })).json();
  assert.deepEqual(digest, { bytes: body.length, sha256: createHash('sha256').update(body).digest('hex') });

  const echoed = await fetch(`${host.url}/echo`, { method: 'PUT', body, headers: { 'content-type': 'application/x-test' } });
  assert.equal(echoed.headers.get('content-type'), 'application/x-test');
  assert.deepEqual(new Uint8Array(await echoed.arrayBuffer()), body);
});

test('streamed, byte, empty and JSON responses arrive as the script made them', { timeout: 10_000 }, async (t) => {
  const host = await startTestHost(t, STREAMING_SCRIPT);
  const chunks = await fetch(`${host.url}/chunks?n=5`);
  assert.equal(await chunks.text(), 'chunk 0\nchunk 1\nchunk 2\nchunk 3\nchunk 4\n');

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

test('HEAD gets the head of the response and no body', { timeout: 10_000 }, async (t) => {
  const host = await startTestHost(t, STREAMING_SCRIPT);
  const { request } = await import('node:http');
  const head = await new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
    request(`${host.url}/`, { method: 'HEAD' }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    }).on('error', reject).end();
  });
  assert.equal(head.status, 200);
  assert.equal(head.headers['x-method'], 'HEAD');
  assert.equal(head.headers['content-length'], '5');
  assert.equal(head.body, '');

  const streamed = await fetch(`${host.url}/chunks?n=3`, { method: 'HEAD' });
  assert.equal(streamed.status, 200);
  assert.equal(await streamed.text(), '');
});

test('ctx.waitUntil work finishes after the response is sent', { timeout: 10_000 }, async (t) => {
  const host = await startTestHost(t, STREAMING_SCRIPT, { poolSize: 1 });
  assert.equal(await (await fetch(`${host.url}/later`)).text(), 'soon');
  assert.equal(await (await fetch(`${host.url}/state`)).text(), 'undefined');
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(await (await fetch(`${host.url}/state`)).text(), 'done');
});

test('a script that cannot load fails the start with its error', { timeout: 10_000 }, async (t) => {
  await assert.rejects(startTestHost(t, 'export default {};\n'), (error: Error & { code?: string }) => {
    assert.equal(error.code, 'RUNTIME_SCRIPT_START_FAILED');
    assert.match(error.message, /must have a default export with a fetch\(request, env, ctx\) method/);
    return true;
  });
  await assert.rejects(startTestHost(t, 'throw new Error("top-level");\n'), /top-level/);
});

test('a client that hangs up mid-response cancels the script stream', { timeout: 10_000 }, async (t) => {
  const host = await startTestHost(t, STREAMING_SCRIPT, { poolSize: 1 });
  const controller = new AbortController();
  const res = await fetch(`${host.url}/forever`, { signal: controller.signal });
  const reader = res.body!.getReader();
  let received = 0;
  while (received < 1024 * 1024) received += (await reader.read()).value!.byteLength;
  controller.abort();
  let cancelled = '';
  for (let attempt = 0; attempt < 50 && cancelled !== '1'; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    cancelled = await (await fetch(`${host.url}/cancelled`)).text();
  }
  assert.equal(cancelled, '1');
});
