/**
 * Log delivery through failures, end to end through `edgeport start`: an HTTP receiver that
 * answers 500 for a while (the API shows the error; then every line arrives once and the error
 * clears), and a SIGKILL mid-traffic after which, on restart, every request answered before the
 * kill is delivered exactly once.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { gunzipLines, until } from '../helpers/delivered-logs.ts';
import { apiOf, createFileJob, createZone, fileLines, load, raw, startOrigin, startServer } from '../helpers/edge-logs-setup.ts';
import { tempDir } from '../helpers/temp-dir.ts';

test(
  'an HTTP receiver answering 500 for a while: the API shows the error, then every line arrives once and the error clears',
  { timeout: 60_000 },
  async (t) => {
    const dir = tempDir(t);
    let failing = false;
    const received: string[] = [];
    const receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        if (failing) return void res.writeHead(500).end('receiver down');
        const text = gunzipLines<{ RayID?: string }>([Buffer.concat(chunks)]);
        for (const line of text) if (line.RayID) received.push(line.RayID);
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    t.after(
      () =>
        new Promise<void>((resolve) => {
          receiver.closeAllConnections();
          receiver.close(() => resolve());
        }),
    );
    const origin = await startOrigin(t);
    const server = await startServer(t, join(dir, 'data'));
    const api = apiOf(server);
    const zoneId = await createZone(api, origin.url);
    const destination = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/ingest`;
    // Created while the receiver is up: the API's test upload must succeed.
    const job = await api.call<{ id: number }>('POST', `/zones/${zoneId}/logshipping/jobs`, {
      name: 'http-job',
      destination_conf: destination,
      dataset: 'http_requests',
      enabled: true,
      output_options: { field_names: ['RayID'] },
    });
    failing = true;
    await load(server.urls.edge!, 200);
    type JobJson = { last_complete: string | null; last_error: string | null; error_message: string | null };
    const failed = await until(
      () => api.call<JobJson>('GET', `/zones/${zoneId}/logshipping/jobs/${job.id}`),
      (j) => j.error_message !== null,
      'the error on the job',
      15_000,
    );
    assert.match(failed.error_message!, /500/);
    assert.ok(failed.last_error !== null && !Number.isNaN(Date.parse(failed.last_error)), 'last_error is a time');
    assert.equal(received.length, 0);
    failing = false;
    await load(server.urls.edge!, 100);
    const rays = await until(
      () => received,
      (r) => r.length >= 300,
      'all 300 lines',
      30_000,
    );
    assert.equal(new Set(rays).size, 300, 'nothing lost, nothing delivered twice');
    assert.deepEqual(new Set(rays), new Set(origin.seen.keys()));
    const healed = await until(
      () => api.call<JobJson>('GET', `/zones/${zoneId}/logshipping/jobs/${job.id}`),
      (j) => j.error_message === null,
      'the error cleared',
      15_000,
    );
    assert.ok(healed.last_complete !== null);
  },
);

test('SIGKILL mid-traffic, then restart: every request answered before the kill is delivered once', { timeout: 120_000 }, async (t) => {
  const dir = tempDir(t);
  const dataDir = join(dir, 'data');
  const origin = await startOrigin(t);
  const first = await startServer(t, dataDir);
  const zoneId = await createZone(apiOf(first), origin.url);
  await createFileJob(apiOf(first), zoneId, join(dir, 'killed'), { output_options: { field_names: ['RayID'] } });

  const edgePort = Number(new URL(first.urls.edge!).port);
  const answered: string[] = [];
  let stop = false;
  const client = async (): Promise<void> => {
    while (!stop) {
      try {
        answered.push(await raw(edgePort, [], `/api/k${answered.length}`));
      } catch {
        return; // the server is gone
      }
    }
  };
  const clients = Array.from({ length: 8 }, () => client());
  await until(
    () => answered.length,
    (n) => n >= 300,
    'traffic before the kill',
    60_000,
  );
  const exited = new Promise((resolve) => first.child.once('exit', resolve));
  first.child.kill('SIGKILL');
  stop = true;
  await Promise.all(clients);
  await exited;

  const second = await startServer(t, dataDir);
  void second;
  const delivered = await until(
    () => fileLines(join(dir, 'killed')),
    (lines) => new Set(lines.map((l) => l.RayID)).size >= answered.length,
    'the spool after restart',
  );
  const rays = delivered.map((l) => l.RayID as string);
  const counts = new Map<string, number>();
  for (const ray of rays) counts.set(ray, (counts.get(ray) ?? 0) + 1);
  for (const ray of answered) assert.equal(counts.get(ray), 1, `ray ${ray} delivered once`);
  assert.equal(rays.length, counts.size, 'nothing delivered twice');
});
