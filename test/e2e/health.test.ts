/**
 * The probes on the management API's port, through the real `edgeport start`: `/healthz` (the
 * process answers) and `/readyz` (the database answers, the blob store takes a write and a delete,
 * the data dir has room), GET and HEAD, never the dashboard's page; `/readyz` turns 503 naming the
 * blob store while its directory is gone (within the probe's rate limit), and ready again once it
 * is back, while `/healthz` stays 200; /metrics carries the same (edgeport_ready).
 */
import assert from 'node:assert/strict';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { startEdgeport } from '../helpers/edgeport-server.ts';
import { tempDir } from '../helpers/temp-dir.ts';

test('GET and HEAD /healthz and /readyz on the API port: ok, ready, and 503 naming the blob store while it is gone', { timeout: 90_000 }, async (t) => {
  const dataDir = join(tempDir(t), 'data');
  const server = await startEdgeport({ owner: t, dataDir });
  const origin = new URL(server.urls['management API']!).origin;

  const health = await fetch(`${origin}/healthz`);
  assert.equal(health.status, 200);
  assert.equal(health.headers.get('content-type'), 'text/plain; charset=utf-8');
  assert.equal(await health.text(), 'ok\n');
  const ready = await fetch(`${origin}/readyz`);
  assert.equal(ready.status, 200);
  assert.deepEqual(await ready.json(), { status: 'ready', checks: { database: 'ok', blobs: 'ok', disk: 'ok' } });
  for (const path of ['/healthz', '/readyz']) {
    const head = await fetch(`${origin}${path}`, { method: 'HEAD' });
    assert.equal(head.status, 200, path);
    assert.equal(await head.text(), '', `${path}: HEAD has no body`);
    assert.equal(head.headers.get('cache-control'), 'no-store');
  }
  // The dashboard still answers its own pages, and a probe is never its HTML.
  assert.match(await (await fetch(`${origin}/`)).text(), /<html/i);
  assert.equal((await fetch(`${origin}/client/v4/healthz`)).status, 400, "the API path is the API's");

  const metrics = async () => (await fetch(`${origin}/metrics`)).text();
  assert.match(await metrics(), /^edgeport_ready\{check="blobs"\} 1$/m);
  assert.match(await metrics(), /^edgeport_disk_free_bytes \d+/m);

  rmSync(join(dataDir, 'blobs'), { recursive: true });
  // The blob probe (a write and a delete) runs at most once a second on the data dir.
  const broken = await statusWithin(`${origin}/readyz`, 503);
  const body = (await broken.json()) as { status: string; checks: Record<string, string> };
  assert.equal(body.status, 'not ready');
  assert.equal(body.checks.database, 'ok');
  assert.match(body.checks.blobs!, /ENOENT.*blobs/);
  assert.equal((await fetch(`${origin}/readyz`, { method: 'HEAD' })).status, 503);
  assert.match(await metrics(), /^edgeport_ready\{check="blobs"\} 0$/m);
  assert.equal((await fetch(`${origin}/healthz`)).status, 200, 'the process is still up');
  mkdirSync(join(dataDir, 'blobs'));
  await statusWithin(`${origin}/readyz`, 200);
});

/** Polls `url` until it answers `status` (within 10 s); returns that answer. */
async function statusWithin(url: string, status: number): Promise<Response> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const response = await fetch(url);
    if (response.status === status || Date.now() > deadline) {
      assert.equal(response.status, status, url);
      return response;
    }
    await response.arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
