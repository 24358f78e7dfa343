/**
 * `edgeport start` with a script on workerd (`runtime = "workerd"`): the edge routes the script's
 * paths to it, its bucket binding reaches the server's store, HTMLRewriter and caches.default work,
 * its fetch() to the edge's own port is refused while other requests go on, and the log records
 * of its requests are those of any script (the script's response headers are the ones logged).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { until } from '../helpers/delivered-logs.ts';
import { apiOf, createFileJob, createZone, fileLines, getVia, startOrigin, startServer } from '../helpers/edge-logs-setup.ts';
import { writeScriptConfig } from '../helpers/edgeport-server.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const SCRIPT = `export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === '/api/html') {
      return new HTMLRewriter().on('title', { element(e) { e.setInnerContent('on workerd'); } })
        .transform(new Response('<title>x</title>', { headers: { 'content-type': 'text/html', 'set-cookie': 'html=1' } }));
    }
    if (url.pathname === '/api/cached') {
      const key = new Request('https://example.test/cached');
      const hit = await caches.default.match(key);
      if (hit) return new Response('hit ' + await hit.text());
      await caches.default.put(key, new Response('stored', { headers: { 'cache-control': 'max-age=60' } }));
      return new Response('miss');
    }
    if (url.pathname === '/api/edge') return fetch(url.searchParams.get('to'));
    await env.BUCKET.put(url.pathname, 'seen');
    const listed = await env.BUCKET.list();
    return new Response('script:' + listed.objects.length, { headers: { 'x-from': 'workerd', 'set-cookie': 'sc=1' } });
  },
};`;

test('a script on workerd behind the edge: its binding, HTMLRewriter, caches, no way back to the edge, and its records', { timeout: 90_000 }, async (t) => {
  const dir = tempDir(t);
  const args = writeScriptConfig(dir, {
    name: 'on-workerd',
    route: 'example.test/api/*',
    bucket: 'script-data',
    source: SCRIPT,
    extra: 'runtime = "workerd"\n',
  });
  const origin = await startOrigin(t);
  const server = await startServer(t, join(dir, 'data'), { args, batchIntervalMs: 100 });
  assert.match(server.banner, /script "on-workerd" on example\.test\/api\/\*/);
  const api = apiOf(server);
  const zoneId = await createZone(api, origin.url);
  await createFileJob(api, zoneId, join(dir, 'logs'), {
    output_options: { field_names: ['ClientRequestPath', 'EdgeResponseStatus', 'OriginResponseStatus', 'ResponseHeaders'] },
  });
  const edge = server.urls.edge!;

  const first = await getVia(edge, 'example.test', '/api/one');
  assert.equal(first.body, 'script:1');
  assert.equal(first.headers['x-from'], 'workerd');
  assert.equal((await getVia(edge, 'example.test', '/api/two')).body, 'script:2', 'the binding keeps what the script stored');
  assert.equal((await getVia(edge, 'example.test', '/api/html')).body, '<title>on workerd</title>');
  assert.equal((await getVia(edge, 'example.test', '/api/cached')).body, 'miss');
  assert.equal((await getVia(edge, 'example.test', '/api/cached')).body, 'hit stored');

  const back = await getVia(edge, 'example.test', `/api/edge?to=${encodeURIComponent(`${edge}/home`)}`);
  assert.equal(back.status, 500, "the script cannot reach the edge's port");
  assert.equal(back.body, 'The script threw an exception.\n');
  assert.equal((await getVia(edge, 'example.test', '/home')).body, 'ok', 'the origin is still served');
  assert.equal((await getVia(edge, 'example.test', '/api/three')).body, 'script:3', 'the script is still served');

  const lines = await until(
    () => fileLines(join(dir, 'logs')),
    (l) => l.length >= 8,
    'every record',
  );
  const byPath = Object.fromEntries(lines.map((l) => [l.ClientRequestPath, l]));
  assert.deepEqual(byPath['/api/one'], {
    ClientRequestPath: '/api/one',
    EdgeResponseStatus: 200,
    OriginResponseStatus: 0,
    ResponseHeaders: { 'set-cookie': 'sc=1' },
  });
  assert.deepEqual(byPath['/api/html'], {
    ClientRequestPath: '/api/html',
    EdgeResponseStatus: 200,
    OriginResponseStatus: 0,
    ResponseHeaders: { 'set-cookie': 'html=1' },
  });
  assert.deepEqual(byPath['/api/edge'], { ClientRequestPath: '/api/edge', EdgeResponseStatus: 500, OriginResponseStatus: 0, ResponseHeaders: {} });
  assert.deepEqual(byPath['/home'], {
    ClientRequestPath: '/home',
    EdgeResponseStatus: 200,
    OriginResponseStatus: 200,
    ResponseHeaders: { 'set-cookie': 'a=1', 'x-origin': 'origin-1' },
  });
});
