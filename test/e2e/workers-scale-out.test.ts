/**
 * Deploys reach every instance: two `edgeport start` instances on one PostgreSQL schema; a script
 * deployed through A's API is served by B's edge within 2 s, and a redeploy through B replaces it on
 * A within 2 s while a request that is still streaming its answer from the old version completes.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { startEdgeport } from '../helpers/edgeport-server.ts';
import { pgTestUrl } from '../helpers/postgres.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { servedWithin, viaEdge, wranglerForm } from '../helpers/workers-upload.ts';

const ADMIN = { EDGEPORT_ADMIN_EMAIL: 'scaled@example.test', EDGEPORT_ADMIN_KEY: 'workers-scale-out-key-0123' };
const HEADERS = { 'x-auth-email': ADMIN.EDGEPORT_ADMIN_EMAIL, 'x-auth-key': ADMIN.EDGEPORT_ADMIN_KEY };

/** Answers `label` at once for `/`, and for `/slow` streams it over `ms`. */
function source(label: string): string {
  return `export default {
  async fetch(request) {
    if (new URL(request.url).pathname !== '/slow') return new Response(${JSON.stringify(label)});
    const { readable, writable } = new TransformStream();
    const writer = writable.getWriter();
    (async () => {
      for (let i = 0; i < 10; i++) {
        await writer.write(new TextEncoder().encode(${JSON.stringify(label)} + i));
        await new Promise((resolve) => setTimeout(resolve, 150));
      }
      await writer.close();
    })();
    return new Response(readable);
  },
};`;
}

async function deploy(apiUrl: string, accountId: string, label: string): Promise<void> {
  const response = await fetch(`${apiUrl}/accounts/${accountId}/workers/scripts/shared`, {
    method: 'PUT',
    headers: HEADERS,
    body: wranglerForm(source(label), {}),
  });
  assert.equal(response.status, 200, await response.text());
}

test(
  'a deploy on one instance is served by another on the same PostgreSQL within 2 s; a redeploy drains requests in flight',
  { timeout: 180_000 },
  async (t) => {
    const dir = tempDir(t);
    const env = { ...ADMIN, EDGEPORT_DB_URL: await pgTestUrl(t, { pool: 6 }), EDGEPORT_BLOBS_URL: `file://${join(dir, 'shared-blobs')}` };
    const [a, b] = await Promise.all([startEdgeport({ owner: t, dataDir: join(dir, 'a'), env }), startEdgeport({ owner: t, dataDir: join(dir, 'b'), env })]);
    const apiA = a.urls['management API']!;
    const apiB = b.urls['management API']!;
    const accounts = (await (await fetch(`${apiA}/accounts`, { headers: HEADERS })).json()) as { result: Array<{ id: string }> };
    const accountId = accounts.result[0]!.id;
    const zone = (await (
      await fetch(`${apiA}/zones`, {
        method: 'POST',
        headers: { ...HEADERS, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'scaled.test', account: { id: accountId } }),
      })
    ).json()) as { result: { id: string } };
    await deploy(apiA, accountId, 'first');
    const routed = await fetch(`${apiA}/zones/${zone.result.id}/workers/routes`, {
      method: 'POST',
      headers: { ...HEADERS, 'content-type': 'application/json' },
      body: JSON.stringify({ pattern: 'scaled.test/*', script: 'shared' }),
    });
    assert.equal(routed.status, 200, await routed.text());
    const onB = await servedWithin(b.urls.edge!, 'scaled.test', 'first', 2_000);
    t.diagnostic(`A's deploy and route served by B after ${Math.round(onB)} ms`);
    await servedWithin(a.urls.edge!, 'scaled.test', 'first', 2_000);

    // A request streaming from the first version on A, while B deploys the second.
    const inFlight = viaEdge(a.urls.edge!, 'scaled.test', '/slow');
    await new Promise((resolve) => setTimeout(resolve, 200));
    await deploy(apiB, accountId, 'second');
    const onA = await servedWithin(a.urls.edge!, 'scaled.test', 'second', 2_000);
    t.diagnostic(`B's redeploy served by A after ${Math.round(onA)} ms`);
    const finished = await inFlight;
    assert.deepEqual(
      finished,
      { status: 200, body: Array.from({ length: 10 }, (_, i) => `first${i}`).join('') },
      'the request in flight finished on the version it started on',
    );
    await servedWithin(b.urls.edge!, 'scaled.test', 'second', 2_000);
  },
);
