/**
 * Held log records survive `kill -9`. The real `edgeport start` on PostgreSQL, reached through a
 * TCP proxy the test cuts (never the shared server, as backend-faults.test.ts does): while the
 * database is away, requests for a host the edge never looked up are answered 503 and their
 * records held (`<data dir>/logs/held-records`); the server is SIGKILLed while such requests are
 * still coming in. With the database back, a new start on the same data dir delivers the line of
 * every request that was answered, through the zone's file:// job, once (with the custom fields
 * taken from the held request headers); then the file is empty, and a further restart delivers
 * nothing again.
 */
import assert from 'node:assert/strict';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { within } from '../../src/core/within.ts';
import { HELD_RECORDS_FILE, scanHeld } from '../../src/edge/held-records-file.ts';
import { until } from '../helpers/delivered-logs.ts';
import { answeredRay } from '../helpers/edge-request.ts';
import { ADMIN, S3_KEY, apiOf, createFileJob, createZone, fileLines, getVia } from '../helpers/edge-logs-setup.ts';
import { startEdgeport, TEST_PG_SECRETS_KEY, type EdgeportServer } from '../helpers/edgeport-server.ts';
import { listen } from '../helpers/listen.ts';
import { pgTestUrl } from '../helpers/postgres.ts';
import { startTcpProxy } from '../helpers/tcp-proxy.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const ENV = { ...ADMIN, ...S3_KEY, EDGEPORT_LOGS_MAX_BATCH_INTERVAL_MS: '200' };
/** Answers of the never-seen host before the kill, at least (the clients keep sending while it lands). */
const ANSWERS_BEFORE_KILL = 150;

/** One GET through the edge with `headers`; the status and RayID of its answer, received whole. */
function getWith(edge: string, host: string, path: string, headers: Record<string, string>): Promise<{ status: number; ray: string }> {
  const url = new URL(edge);
  return new Promise((resolve, reject) => {
    request({ host: url.hostname, port: url.port, path, headers: { host, ...headers } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ray: String(res.headers['edgeport-ray']) }));
    })
      .on('error', reject)
      .end();
  });
}

test('SIGKILL while the database is away: every answered 503 of a never-seen host is delivered by the next start, once', { timeout: 240_000 }, async (t) => {
  const dir = tempDir(t);
  const dataDir = join(dir, 'data');
  const logs = join(dir, 'logs');
  const url = new URL(await pgTestUrl(t, { pool: 6 }));
  const proxy = await startTcpProxy(t, { host: url.hostname, port: Number(url.port || 5432) });
  url.host = `127.0.0.1:${proxy.port}`;
  writeFileSync(join(dir, 'edgeport.toml'), `[db]\nurl = "${url}"\ntimeout_ms = 1500\n`);
  const start = (): Promise<EdgeportServer> =>
    startEdgeport({
      shedding: false,
      owner: t,
      dataDir,
      env: { ...ENV, EDGEPORT_LOGS_FILE_ROOTS: dir, EDGEPORT_SECRETS_KEY: TEST_PG_SECRETS_KEY },
      args: ['--config', join(dir, 'edgeport.toml')],
    });
  const originPort = await listen(
    createServer((_req, res) => res.end('origin')),
    t,
  );

  const first = await start();
  const zoneId = await createZone(apiOf(first), `http://127.0.0.1:${originPort}`);
  await createFileJob(apiOf(first), zoneId, logs, {
    output_options: { field_names: ['RayID', 'ClientRequestHost', 'ClientRequestPath', 'EdgeResponseStatus', 'RequestHeaders'] },
  });
  const edge = first.urls.edge!;
  assert.equal((await getVia(edge, 'www.example.test', '/warm')).status, 200);

  proxy.cut('reset');
  // Past the edge's one-second cache: every read goes to the database now.
  await sleep(1_100);
  const traced: Array<{ ray: string; path: string; trace: string }> = [];
  for (let i = 0; i < 5; i++) {
    const answer = await getWith(edge, 'api.example.test', `/held-${i}`, { 'x-trace': `trace-${i}` });
    assert.equal(answer.status, 503, 'a host never looked up while the database is away');
    traced.push({ ray: answer.ray, path: `/held-${i}`, trace: `trace-${i}` });
  }
  const heldPath = join(dataDir, 'logs', HELD_RECORDS_FILE);
  const onDisk = new Set(scanHeld(readFileSync(heldPath)).entries.map((held) => held.entry.record.RayID));
  assert.ok(
    traced.every(({ ray }) => onDisk.has(ray)),
    'each answered request is in the file while the server runs',
  );

  // Clients keep asking for the never-seen host; the kill lands among them.
  const port = Number(new URL(edge).port);
  const answered: string[] = [];
  let stop = false;
  let enough: () => void = () => {};
  const reached = new Promise<void>((resolve) => {
    enough = resolve;
  });
  const client = async (c: number): Promise<void> => {
    for (let n = 0; !stop; n++) {
      try {
        answered.push(await answeredRay({ host: '127.0.0.1', port, path: `/flood-${c}-${n}`, headers: { host: 'api.example.test' } }));
      } catch {
        return; // the server is gone
      }
      if (answered.length >= ANSWERS_BEFORE_KILL) enough();
    }
  };
  const exited = new Promise((resolve) => first.child.once('exit', resolve));
  const clients = Array.from({ length: 4 }, (_, c) => client(c));
  await within(reached, 30_000, undefined);
  first.child.kill('SIGKILL');
  stop = true;
  await Promise.all(clients);
  await exited;
  t.diagnostic(`answered before the kill: ${traced.length} traced + ${answered.length} flood requests`);
  assert.ok(answered.length >= ANSWERS_BEFORE_KILL, `${answered.length} answered`);

  proxy.restore();
  const second = await start();
  const owed = [...traced.map(({ ray }) => ray), ...answered];
  const lines = await until(
    () => fileLines(logs),
    (found) => {
      const delivered = new Set(found.map((line) => line.RayID));
      return owed.every((ray) => delivered.has(ray));
    },
    "every answered request's line",
    90_000,
  );
  const counts = new Map<string, number>();
  for (const line of lines) counts.set(line.RayID, (counts.get(line.RayID) ?? 0) + 1);
  for (const ray of owed) assert.equal(counts.get(ray), 1, `ray ${ray} delivered once`);
  const statusOf = new Map(lines.map((line) => [line.RayID, line.EdgeResponseStatus]));
  assert.ok(
    owed.every((ray) => statusOf.get(ray) === 503),
    'each a 503 of the outage',
  );
  for (const { ray, path, trace } of traced) {
    const line = lines.find((each) => each.RayID === ray)!;
    assert.deepEqual(
      [line.ClientRequestHost, line.ClientRequestPath, line.EdgeResponseStatus, line.RequestHeaders['x-trace']],
      ['api.example.test', path, 503, trace],
      'the zone name and custom fields filled in from the held request',
    );
  }
  assert.ok(
    lines.some((line) => line.ClientRequestPath === '/warm'),
    'the line spooled before the outage too',
  );
  await until(
    () => statSync(heldPath).size,
    (size) => size === 0,
    'the held records out of the file once in the spool',
    10_000,
  );
  const deliveredOnce = lines.length;
  assert.equal(counts.size, deliveredOnce, 'nothing delivered twice');
  await second.stop();

  const third = await start();
  await sleep(2_500);
  assert.equal(fileLines(logs).length, deliveredOnce, 'a later start gives none of them again');
  await third.stop();
});
