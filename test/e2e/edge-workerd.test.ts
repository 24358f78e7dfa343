/**
 * `edgeport start` with a script on workerd (`runtime = "workerd"`): the edge routes the script's
 * paths to it, its bucket binding reaches the server's store, HTMLRewriter and caches.default work,
 * its fetch() to the edge's own port is refused while other requests go on, and the log records
 * of its requests are those of any script (the script's response headers are the ones logged).
 */
import assert from 'node:assert/strict';
import { request, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { until } from '../helpers/delivered-logs.ts';
import { ADMIN, S3_KEY, apiOf, createFileJob, createZone, fileLines, startOrigin } from '../helpers/edge-logs-setup.ts';
import { startEdgeport, writeScriptConfig } from '../helpers/edgeport-server.ts';
import { tempDir } from '../helpers/temp-dir.ts';

/** A request through the edge with a Host header (fetch cannot set Host). */
function via(edge: string, host: string, path: string): Promise<{ status: number; body: string; headers: IncomingMessage['headers'] }> {
  return new Promise((resolve, reject) => {
    const url = new URL(edge);
    const req = request({ host: url.hostname, port: url.port, path, headers: { host } });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => { body += chunk; });
      res.on('end', () => resolve({ status: res.statusCode!, body, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

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
  const args = writeScriptConfig(dir, { name: 'on-workerd', route: 'example.test/api/*', bucket: 'script-data', source: SCRIPT, extra: 'runtime = "workerd"\n' });
  const origin = await startOrigin(t);
  const server = await startEdgeport({ owner: t, dataDir: join(dir, 'data'), args, env: { ...ADMIN, ...S3_KEY, EDGEPORT_LOGS_MAX_BATCH_INTERVAL_MS: '100', EDGEPORT_LOGS_FILE_ROOTS: dir } });
  assert.match(server.banner, /script "on-workerd" on example\.test\/api\/\*/);
  const api = apiOf(server);
  const zoneId = await createZone(api, origin.url);
  await createFileJob(api, zoneId, join(dir, 'logs'), { output_options: { field_names: ['ClientRequestPath', 'EdgeResponseStatus', 'OriginResponseStatus', 'ResponseHeaders'] } });
  const edge = server.urls.edge!;

  const first = await via(edge, 'example.test', '/api/one');
  assert.equal(first.body, 'script:1');
  assert.equal(first.headers['x-from'], 'workerd');
  assert.equal((await via(edge, 'example.test', '/api/two')).body, 'script:2', 'the binding keeps what the script stored');
  assert.equal((await via(edge, 'example.test', '/api/html')).body, '<title>on workerd</title>');
  assert.equal((await via(edge, 'example.test', '/api/cached')).body, 'miss');
  assert.equal((await via(edge, 'example.test', '/api/cached')).body, 'hit stored');

  const back = await via(edge, 'example.test', `/api/edge?to=${encodeURIComponent(`${edge}/home`)}`);
  assert.equal(back.status, 500, "the script cannot reach the edge's port");
  assert.equal(back.body, 'The script threw an exception.\n');
  assert.equal((await via(edge, 'example.test', '/home')).body, 'ok', 'the origin is still served');
  assert.equal((await via(edge, 'example.test', '/api/three')).body, 'script:3', 'the script is still served');

  const lines = await until(() => fileLines(join(dir, 'logs')), (l) => l.length >= 8, 'every record');
  const byPath = Object.fromEntries(lines.map((l) => [l.ClientRequestPath, l]));
  assert.deepEqual(byPath['/api/one'], { ClientRequestPath: '/api/one', EdgeResponseStatus: 200, OriginResponseStatus: 0, ResponseHeaders: { 'set-cookie': 'sc=1' } });
  assert.deepEqual(byPath['/api/html'], { ClientRequestPath: '/api/html', EdgeResponseStatus: 200, OriginResponseStatus: 0, ResponseHeaders: { 'set-cookie': 'html=1' } });
  assert.deepEqual(byPath['/api/edge'], { ClientRequestPath: '/api/edge', EdgeResponseStatus: 500, OriginResponseStatus: 0, ResponseHeaders: {} });
  assert.deepEqual(byPath['/home'], { ClientRequestPath: '/home', EdgeResponseStatus: 200, OriginResponseStatus: 200, ResponseHeaders: { 'set-cookie': 'a=1', 'x-origin': 'origin-1' } });
});
