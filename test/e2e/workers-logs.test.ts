/**
 * Requests served by a script deployed through the API get their `http_requests` log lines like
 * any request of the zone: the zone's custom fields (a request header, a response header the
 * script set, a cookie), the status the script answered, one line per request.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { until } from '../helpers/delivered-logs.ts';
import { ADMIN, apiOf, createFileJob, createZone, fileLines, getVia, startOrigin, startServer } from '../helpers/edge-logs-setup.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { wranglerForm } from '../helpers/workers-upload.ts';

test("a deployed script's requests get http_requests lines with the zone's custom fields", { timeout: 120_000 }, async (t) => {
  const dir = tempDir(t);
  const server = await startServer(t, join(dir, 'data'));
  const api = apiOf(server);
  const origin = await startOrigin(t);
  const zoneId = await createZone(api, origin.url);
  const [account] = await api.call<Array<{ id: string }>>('GET', '/accounts');
  const apiUrl = server.urls['management API']!;
  const uploaded = await fetch(`${apiUrl}/accounts/${account!.id}/workers/scripts/logged`, {
    method: 'PUT',
    headers: { 'x-auth-email': ADMIN.EDGEPORT_ADMIN_EMAIL, 'x-auth-key': ADMIN.EDGEPORT_ADMIN_KEY },
    body: wranglerForm(
      `export default {
      fetch(request) {
        const teapot = new URL(request.url).pathname.endsWith('/teapot');
        return new Response('from the script', { status: teapot ? 418 : 200, headers: { 'x-origin': 'script', 'set-cookie': 'seen=1' } });
      },
    };`,
      {},
    ),
  });
  assert.equal(uploaded.status, 200, await uploaded.text());
  await api.call('POST', `/zones/${zoneId}/workers/routes`, { pattern: 'example.test/worker/*', script: 'logged' });
  const logs = join(dir, 'logs');
  await createFileJob(api, zoneId, logs, {
    output_options: { field_names: ['RayID', 'ClientRequestPath', 'EdgeResponseStatus', 'RequestHeaders', 'ResponseHeaders', 'Cookies'] },
  });
  // The route reaches the edge within a poll; until then the origin answers (and is asked only for /worker/wait).
  await until(
    () => getVia(server.urls.edge!, 'example.test', '/worker/wait'),
    (answer) => answer.body === 'from the script',
    'the route',
    5_000,
  );
  const ok = await getVia(server.urls.edge!, 'example.test', '/worker/ok');
  assert.deepEqual([ok.status, ok.body], [200, 'from the script']);
  const teapot = await getVia(server.urls.edge!, 'example.test', '/worker/teapot');
  assert.equal(teapot.status, 418);
  const rays = [ok.headers['edgeport-ray'], teapot.headers['edgeport-ray']] as string[];
  const lines = await until(
    () => fileLines(logs).filter((line) => rays.includes(line.RayID)),
    (found) => found.length === 2,
    "the script's log lines",
  );
  const byRay = new Map(lines.map((line) => [line.RayID, line]));
  assert.equal(byRay.get(rays[0]!)?.ClientRequestPath, '/worker/ok');
  assert.equal(byRay.get(rays[0]!)?.EdgeResponseStatus, 200);
  assert.deepEqual(byRay.get(rays[0]!)?.ResponseHeaders, { 'set-cookie': 'seen=1', 'x-origin': 'script' });
  assert.equal(byRay.get(rays[1]!)?.EdgeResponseStatus, 418);
  assert.ok(
    [...origin.seen.values()].every((seen) => seen.path === '/worker/wait'),
    'the origin saw none of them',
  );
});
