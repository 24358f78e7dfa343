/**
 * Deployed scripts cost nothing until they are asked for: an instance starts a script's workerd on
 * its first request, runs at most `[workers] max_running` at once (the one idle longest is stopped
 * to make room; with every one busy, the newcomer gets 503 and the busy ones keep serving), and
 * stops one idle for `idle_stop_ms`; the `edgeport_workers_running_scripts` gauge tells how many run.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { startEdgeport } from '../helpers/edgeport-server.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { viaEdge, wranglerForm } from '../helpers/workers-upload.ts';

const ADMIN = { EDGEPORT_ADMIN_EMAIL: 'lazy@example.test', EDGEPORT_ADMIN_KEY: 'workers-lazy-start-key-0123' };
const HEADERS = { 'x-auth-email': ADMIN.EDGEPORT_ADMIN_EMAIL, 'x-auth-key': ADMIN.EDGEPORT_ADMIN_KEY };

/** Answers `label` for `/`, and for `/hold` after 2 s. */
function source(label: string): string {
  return `export default {
  async fetch(request) {
    if (new URL(request.url).pathname === '/hold') await new Promise((resolve) => setTimeout(resolve, 2000));
    return new Response(${JSON.stringify(label)});
  },
};`;
}

test('deployed scripts start on their first request, at most max_running at once, and stop when idle', { timeout: 180_000 }, async (t) => {
  const dir = tempDir(t);
  const config = join(dir, 'edgeport.toml');
  writeFileSync(config, '[workers]\nmax_running = 1\nidle_stop_ms = 1500\n');
  const server = await startEdgeport({ owner: t, dataDir: join(dir, 'data'), env: ADMIN, args: ['--config', config] });
  const api = server.urls['management API']!;
  const edge = server.urls.edge!;
  const running = async (): Promise<number> => {
    const text = await (await fetch(`${api.replace(/\/client\/v4$/, '')}/metrics`)).text();
    return Number(/^edgeport_workers_running_scripts (\d+)$/m.exec(text)?.[1]);
  };
  const accountId = ((await (await fetch(`${api}/accounts`, { headers: HEADERS })).json()) as { result: Array<{ id: string }> }).result[0]!.id;
  for (const name of ['one', 'two']) {
    const zone = (await (
      await fetch(`${api}/zones`, {
        method: 'POST',
        headers: { ...HEADERS, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `${name}.test`, account: { id: accountId } }),
      })
    ).json()) as { result: { id: string } };
    const uploaded = await fetch(`${api}/accounts/${accountId}/workers/scripts/${name}`, {
      method: 'PUT',
      headers: HEADERS,
      body: wranglerForm(source(name), {}),
    });
    assert.equal(uploaded.status, 200, await uploaded.text());
    const routed = await fetch(`${api}/zones/${zone.result.id}/workers/routes`, {
      method: 'POST',
      headers: { ...HEADERS, 'content-type': 'application/json' },
      body: JSON.stringify({ pattern: `${name}.test/*`, script: name }),
    });
    assert.equal(routed.status, 200, await routed.text());
  }
  // Give the edge a poll to learn the routes: nothing runs until a request comes.
  await new Promise((resolve) => setTimeout(resolve, 1_200));
  assert.equal(await running(), 0, 'deployed, and not one workerd started');

  const first = performance.now();
  assert.deepEqual(await viaEdge(edge, 'one.test'), { status: 200, body: 'one' });
  t.diagnostic(`first request of a script not running: ${Math.round(performance.now() - first)} ms (its workerd started for it)`);
  const warm = performance.now();
  assert.deepEqual(await viaEdge(edge, 'one.test'), { status: 200, body: 'one' });
  t.diagnostic(`next request: ${Math.round(performance.now() - warm)} ms`);
  assert.equal(await running(), 1);

  // max_running = 1: "two" takes the place of the idle "one".
  assert.deepEqual(await viaEdge(edge, 'two.test'), { status: 200, body: 'two' });
  assert.equal(await running(), 1);

  // Every running script busy: a newcomer is refused, the busy one keeps serving.
  const holding = new Promise<{ status: number; body: string }>((resolve, reject) => {
    const url = new URL(edge);
    const req = request({ host: url.hostname, port: url.port, path: '/hold', headers: { host: 'two.test' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.deepEqual(await viaEdge(edge, 'one.test'), { status: 503, body: 'The script is not running.\n' });
  assert.deepEqual(await holding, { status: 200, body: 'two' });

  // Idle for idle_stop_ms: stopped; the next request starts it again.
  const deadline = performance.now() + 10_000;
  while ((await running()) !== 0) {
    assert.ok(performance.now() < deadline, 'the idle script was stopped within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  assert.deepEqual(await viaEdge(edge, 'one.test'), { status: 200, body: 'one' });
  assert.equal(await running(), 1);
});
