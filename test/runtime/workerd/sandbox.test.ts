/**
 * What a script (in workerd, the only runtime) cannot reach: no file system, no process, no
 * environment, and by default no loopback, private or link-local address (edgeport's own ports
 * included), while the script's other requests go on being served; the operator's `outbound` list
 * opens what it names. A runaway script is cut off at its CPU and memory limits while another
 * script goes on being served. And what the platform has: HTMLRewriter and the Cache API.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { test, type TestContext } from 'node:test';
import { startTestHost, type TestHost } from '../../helpers/script-host.ts';
import { listen } from '../../helpers/listen.ts';

const PROBES = `
export default {
  async fetch(request) {
    const { pathname, searchParams } = new URL(request.url);
    if (pathname === '/fs') { const fs = await import('node:fs'); return new Response(fs.readFileSync('/etc/passwd', 'utf8')); }
    if (pathname === '/process') return new Response(typeof process === 'undefined' ? 'no process' : JSON.stringify(process.env));
    if (pathname === '/exit') { process.exit(1); }
    if (pathname === '/headers') return Response.json([...request.headers.keys()]);
    if (pathname === '/cf') return Response.json(request.cf ?? null);
    if (pathname === '/fetch') return new Response(await (await fetch(searchParams.get('to'))).text());
    if (pathname === '/spin') { while (true) {} }
    if (pathname === '/grow') { globalThis.kept = []; for (;;) globalThis.kept.push({ at: globalThis.kept.length, text: 'x'.repeat(64) + globalThis.kept.length }); }
    return new Response('ok');
  },
};
`;

async function loopbackServer(t: TestContext): Promise<string> {
  const server = createServer((_req, res) => res.end('private data'));
  const port = await listen(server, t);
  return `http://127.0.0.1:${port}/`;
}

/** The request fails as a script exception, whose logged error matches `error`; the next request is served. */
async function refused(host: TestHost, path: string, error: RegExp): Promise<void> {
  const before = host.logs.length;
  const res = await fetch(`${host.url}${path}`);
  assert.equal(res.status, 500, `${path} is refused`);
  await res.arrayBuffer();
  const logged = host.logs.slice(before).find((record) => record.msg === 'Script threw an exception.');
  assert.match(String(logged?.error), error, path);
  assert.equal(await (await fetch(host.url)).text(), 'ok', `after ${path}, the script still serves`);
}

test('a script has no node:fs, no process and no environment', { timeout: 30_000 }, async (t) => {
  const host = await startTestHost(t, PROBES);
  await refused(host, '/fs', /No such module "node:fs"/);
  assert.equal(await (await fetch(`${host.url}/process`)).text(), 'no process');
  await refused(host, '/exit', /process is not defined/);
});

test(
  "headers shaped like edgeport's own marks (which isolate, a tail, the probe) never reach the host worker or the script",
  { timeout: 30_000 },
  async (t) => {
    const host = await startTestHost(t, PROBES);
    const marks = ['x-edgeport-isolate-0123456789abcdef', 'x-edgeport-tail-fedcba9876543210', 'x-edgeport-probe-00112233445566ff'];
    const res = await fetch(`${host.url}/headers`, { headers: { 'x-kept': 'yes', ...Object.fromEntries(marks.map((mark) => [mark, 'x'])) } });
    assert.equal(res.status, 200, 'the script answered, not the probe');
    const seen = (await res.json()) as string[];
    assert.ok(seen.includes('x-kept'), JSON.stringify(seen));
    assert.deepEqual(
      seen.filter((name) => name.startsWith('x-edgeport-')),
      [],
    );
  },
);

test("request.cf tells a script nothing of the host: not the server process's pid or user id", { timeout: 30_000 }, async (t) => {
  const host = await startTestHost(t, PROBES);
  const cf = (await (await fetch(`${host.url}/cf`)).json()) as Record<string, unknown> | null;
  assert.equal(JSON.stringify(cf ?? {}).match(/clientPid|clientUid/), null, `request.cf: ${JSON.stringify(cf)}`);
  assert.equal(JSON.stringify(cf ?? {}).includes(String(process.pid)), false);
});

test('with nodejs_compat, node:fs is a virtual file system and process.env is empty', { timeout: 30_000 }, async (t) => {
  const host = await startTestHost(t, PROBES, { config: { compatibility_date: '2026-01-01', compatibility_flags: ['nodejs_compat'] } });
  await refused(host, '/fs', /ENOENT|no such file/i);
  assert.equal(await (await fetch(`${host.url}/process`)).text(), '{}');
});

test('fetch to loopback (the host itself included) and link-local addresses is refused unless the operator allows it', { timeout: 30_000 }, async (t) => {
  const privateUrl = await loopbackServer(t);
  const host = await startTestHost(t, PROBES);
  await refused(host, `/fetch?to=${encodeURIComponent(privateUrl)}`, /internal error|not allowed/);
  await refused(host, `/fetch?to=${encodeURIComponent(`${host.url}/`)}`, /internal error|not allowed/);
  await refused(host, `/fetch?to=${encodeURIComponent('http://169.254.169.254/latest/meta-data/')}`, /internal error|not allowed/);
  assert.ok(
    host.logs.some((record) => /connecting to 127\.0\.0\.1:\d+ is not allowed/.test(String(record.output))),
    'workerd says why',
  );

  const allowed = await startTestHost(t, PROBES, { config: { outbound: { allow: ['public', '127.0.0.1/32'] } } });
  assert.equal(await (await fetch(`${allowed.url}/fetch?to=${encodeURIComponent(privateUrl)}`)).text(), 'private data');
  const denied = await startTestHost(t, PROBES, { config: { outbound: { allow: ['public', 'local'], deny: ['127.0.0.1/32'] } } });
  await refused(denied, `/fetch?to=${encodeURIComponent(privateUrl)}`, /internal error|not allowed/);
});

test('a runaway script is cut off at its CPU limit or its memory limit while another script goes on being served', { timeout: 60_000 }, async (t) => {
  // Apart, so that the slow growth to the heap limit (V8 collects harder near it) is not cut off for CPU first.
  const spinner = await startTestHost(t, PROBES, { config: { limits: { cpu_ms: 1_000 } } });
  const grower = await startTestHost(t, PROBES, { config: { limits: { memory_mb: 32 } } });
  const neighbour = await startTestHost(t, PROBES);
  for (const [runaway, path, answer] of [
    [spinner, '/spin', 'The script exceeded its CPU time limit.\n'],
    [grower, '/grow', 'The script exceeded its memory limit.\n'],
  ] as const) {
    const cutOff = fetch(`${runaway.url}${path}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = performance.now();
    assert.equal(await (await fetch(neighbour.url)).text(), 'ok', `while ${path} runs, the other script answers`);
    // Generous on a shared 2-core machine; the point is that it does not wait for the cut-off.
    assert.ok(performance.now() - started < 900, `the other script answered in ${Math.round(performance.now() - started)} ms`);
    const res = await cutOff;
    assert.equal(`${res.status} ${await res.text()}`, `503 ${answer}`, path);
    assert.equal(await (await fetch(runaway.url)).text(), 'ok', `after ${path}, the script is served again`);
  }
});

test('caches.default.match honours Range, If-None-Match and If-Modified-Since as the platform does, and not Vary', { timeout: 30_000 }, async (t) => {
  const host = await startTestHost(
    t,
    `
export default {
  async fetch(request) {
    const key = 'https://example.test/doc';
    if (request.method === 'PUT') {
      await caches.default.put(new Request(key, { headers: { 'accept-language': 'en' } }), new Response('0123456789', {
        headers: { 'cache-control': 'max-age=60', etag: '"v1"', 'last-modified': 'Tue, 01 Sep 2026 10:00:00 GMT', vary: 'accept-language' },
      }));
      return new Response('stored');
    }
    const asked = {};
    for (const name of ['range', 'if-none-match', 'if-modified-since', 'accept-language']) {
      const value = request.headers.get('x-' + name);
      if (value !== null) asked[name] = value;
    }
    const hit = await caches.default.match(new Request(key, { headers: asked }));
    if (!hit) return new Response('miss');
    return Response.json({ status: hit.status, body: await hit.text(), range: hit.headers.get('content-range') });
  },
};
`,
  );
  assert.equal(await (await fetch(host.url, { method: 'PUT' })).text(), 'stored');
  const match = async (headers: Record<string, string>) =>
    (await fetch(host.url, { headers: Object.fromEntries(Object.entries(headers).map(([name, value]) => [`x-${name}`, value])) })).json();
  assert.deepEqual(await match({}), { status: 200, body: '0123456789', range: null });
  assert.deepEqual(await match({ range: 'bytes=2-4' }), { status: 206, body: '234', range: 'bytes 2-4/10' });
  assert.deepEqual(await match({ range: 'bytes=-3' }), { status: 206, body: '789', range: 'bytes 7-9/10' });
  assert.deepEqual(await match({ range: 'bytes=8-' }), { status: 206, body: '89', range: 'bytes 8-9/10' });
  assert.deepEqual(await match({ range: 'bytes=20-' }), { status: 416, body: '', range: 'bytes */10' });
  assert.deepEqual(await match({ range: 'bytes=0-1,4-5' }), { status: 200, body: '0123456789', range: null }, 'several ranges: the whole response');
  assert.deepEqual(await match({ 'if-none-match': 'W/"v1"' }), { status: 304, body: '', range: null });
  assert.deepEqual(await match({ 'if-none-match': '"v0", "v2"' }), { status: 200, body: '0123456789', range: null });
  assert.deepEqual(await match({ 'if-modified-since': 'Wed, 02 Sep 2026 10:00:00 GMT' }), { status: 304, body: '', range: null });
  assert.deepEqual(await match({ 'if-modified-since': 'Mon, 31 Aug 2026 10:00:00 GMT' }), { status: 200, body: '0123456789', range: null });
  assert.deepEqual(
    await match({ 'if-none-match': '"v0"', 'if-modified-since': 'Wed, 02 Sep 2026 10:00:00 GMT' }),
    { status: 200, body: '0123456789', range: null },
    'If-None-Match decides when both are sent',
  );
  assert.deepEqual(await match({ 'accept-language': 'fr' }), { status: 200, body: '0123456789', range: null }, 'Vary is not honoured');
});

test('HTMLRewriter and caches.default work', { timeout: 30_000 }, async (t) => {
  const host = await startTestHost(
    t,
    `
let made = 0;
export default {
  async fetch(request) {
    const { pathname } = new URL(request.url);
    if (pathname === '/html') {
      return new HTMLRewriter()
        .on('h1', { element(element) { element.setInnerContent('rewritten'); element.setAttribute('class', 'done'); } })
        .transform(new Response('<html><h1>original</h1><p>kept</p></html>', { headers: { 'content-type': 'text/html' } }));
    }
    const key = new Request('https://example.test' + pathname);
    if (pathname === '/other') return new Response(String(await (await caches.open('other')).match(new Request('https://example.test/page'))));
    const cache = caches.default;
    if (request.method === 'DELETE') return new Response(String(await cache.delete(key)));
    const hit = await cache.match(key);
    if (hit) return new Response('hit: ' + await hit.text(), { headers: { 'x-cached-header': hit.headers.get('x-made') ?? '' } });
    const fresh = new Response('made ' + ++made, { headers: { 'cache-control': pathname === '/nostore' ? 'no-store' : 'max-age=60', 'x-made': String(made) } });
    await cache.put(key, fresh.clone());
    return fresh;
  },
};
`,
  );
  const html = await fetch(`${host.url}/html`);
  assert.equal(await html.text(), '<html><h1 class="done">rewritten</h1><p>kept</p></html>');

  assert.equal(await (await fetch(`${host.url}/page`)).text(), 'made 1');
  const hit = await fetch(`${host.url}/page`);
  assert.equal(await hit.text(), 'hit: made 1');
  assert.equal(hit.headers.get('x-cached-header'), '1');
  assert.equal(await (await fetch(`${host.url}/other`)).text(), 'undefined', 'caches.open() names a cache of its own');
  assert.equal(await (await fetch(`${host.url}/page`, { method: 'DELETE' })).text(), 'true');
  assert.equal(await (await fetch(`${host.url}/page`)).text(), 'made 2');
  assert.equal(await (await fetch(`${host.url}/nostore`)).text(), 'made 3');
  assert.equal(await (await fetch(`${host.url}/nostore`)).text(), 'made 4', 'no-store is never served from cache');
});
