/**
 * The log pipeline on a real control store and real destinations: records are filtered, sampled,
 * formatted, spooled and delivered as gzip batches; a failing HTTP receiver makes the job report
 * its error and retry until everything arrives; a restart delivers what was spooled; a deleted
 * job's spool goes away.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test, type TestContext } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { systemClock } from '../../src/core/clock.ts';
import { silentLogger } from '../../src/core/log.ts';
import type { LogJobRecord } from '../../src/db/control-store.ts';
import type { HttpRequestRecord } from '../../src/logs/http-request-record.ts';
import { FileRoots } from '../../src/logs/destinations/file-roots.ts';
import { LogPipeline } from '../../src/logs/log-pipeline.ts';
import { accountStore } from '../../src/store/engine/account-store.ts';
import { DeliveryNote } from '../../src/logs/spool/delivery-note.ts';
import { openStoreEngine } from '../../src/store/engine/open-store-engine.ts';
import { openTestControlStore, openTestDatabase } from '../helpers/control-store.ts';
import { traceFs } from '../helpers/fs-trace.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { jobFields, ndjsonOutput } from '../helpers/log-fixtures.ts';

const OUTPUT = ndjsonOutput(['RayID', 'EdgeResponseStatus', 'EdgeStartTimestamp']);

async function fixture(t: TestContext) {
  const dataDir = tempDir(t);
  // Where file:// jobs deliver: the only file root, beside the data dir.
  const out = tempDir(t);
  const database = await openTestDatabase(t, { clock: systemClock });
  const engine = await openStoreEngine({ dataDir, ...(database ? { database } : {}) });
  t.after(() => engine.close());
  const control = await openTestControlStore(t, { dataDir, clock: systemClock, database });
  const now = Date.now();
  await control.createAccount({ id: 'a'.repeat(32), email: 'owner@example.test', name: 'owner', keyHash: 'x', created: now });
  await control.createZone({ id: 'z'.repeat(32), accountId: 'a'.repeat(32), name: 'example.test', origin: null, paused: false, created: now, modified: now });
  const createJob = (destinationConf: string, extra: Partial<LogJobRecord> = {}) =>
    control.createJob('z'.repeat(32), () => ({ ...jobFields('z'.repeat(32), destinationConf, OUTPUT, now), ...extra }));
  const fileRoots = new FileRoots({ roots: [out], dataDir });
  const pipeline = (maxIntervalMs = 100, shutdownDeadlineMs = 5_000) =>
    new LogPipeline({
      dataDir,
      jobs: control,
      engine,
      clock: systemClock,
      logger: silentLogger,
      fileRoots,
      maxIntervalMs,
      shutdownDeadlineMs,
    });
  return { dataDir, out, engine, control, createJob, pipeline };
}

function record(i: number, status = 200): HttpRequestRecord {
  return {
    RayID: `ray${String(i).padStart(13, '0')}`,
    ZoneName: 'example.test',
    EdgeStartTimestamp: Date.parse('2026-11-23T02:00:00Z') + i,
    EdgeEndTimestamp: 0,
    ClientIP: '127.0.0.1',
    ClientRequestHost: 'example.test',
    ClientRequestMethod: 'GET',
    ClientRequestURI: '/',
    ClientRequestPath: '/',
    ClientRequestProtocol: 'HTTP/1.1',
    ClientRequestScheme: 'http',
    ClientRequestUserAgent: '',
    ClientRequestReferer: '',
    ClientRequestBytes: 0,
    EdgeResponseStatus: status,
    EdgeResponseBytes: 0,
    EdgeResponseContentType: '',
    OriginResponseStatus: 0,
    OriginResponseTime: 0,
    WorkerSubrequest: false,
    RequestHeaders: {},
    ResponseHeaders: {},
    Cookies: {},
  };
}

function readDelivered(dir: string): Array<Record<string, unknown>> {
  const lines: Array<Record<string, unknown>> = [];
  const walk = (at: string): void => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(at, entry.name));
      else if (entry.name.endsWith('.log.gz'))
        lines.push(
          ...gunzipSync(readFileSync(join(at, entry.name)))
            .toString()
            .trim()
            .split('\n')
            .map((l) => JSON.parse(l) as Record<string, unknown>),
        );
    }
  };
  if (existsSync(dir)) walk(dir);
  return lines;
}

async function until(check: () => boolean | Promise<boolean>, what: string, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/** Everything in the jobs' spool files, as text. */
function spooledText(dataDir: string): string {
  let text = '';
  const walk = (at: string): void => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(at, entry.name));
      else text += readFileSync(join(at, entry.name), 'latin1');
    }
  };
  walk(join(dataDir, 'logs', 'jobs'));
  return text;
}

test('a record is in the spool before its `written` runs: the first of a turn at once, the rest at the end of the turn', { timeout: 10_000 }, async (t) => {
  const f = await fixture(t);
  await f.createJob(`file://${f.out}`);
  const pipeline = f.pipeline(60_000);
  t.after(() => pipeline.close());
  const jobs = await pipeline.jobsFor('z'.repeat(32));
  const done: number[] = [];
  const written = (i: number) => () => {
    assert.ok(spooledText(f.dataDir).includes(record(i).RayID), `record ${i} is in the spool when its response may end`);
    done.push(i);
  };
  pipeline.emit(jobs, record(0), written(0));
  assert.deepEqual(done, [0], 'the first record of a turn does not wait for the next turn');
  pipeline.emit(jobs, record(1), written(1));
  pipeline.emit(jobs, record(2), written(2));
  assert.deepEqual(done, [0], 'records that follow in the same turn are batched');
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(done, [0, 1, 2]);
  pipeline.emit(jobs, record(3), written(3));
  assert.deepEqual(done, [0, 1, 2, 3], 'a new turn starts with an immediate write again');
});

test('filtered records reach a file:// destination as dated gzip batches; the job reports success', { timeout: 10_000 }, async (t) => {
  const f = await fixture(t);
  const { out } = f;
  const job = await f.createJob(`file://${out}/logs/{DATE}`, { filter: JSON.stringify({ where: { key: 'EdgeResponseStatus', operator: 'geq', value: 400 } }) });
  const pipeline = f.pipeline();
  pipeline.start();
  const jobs = await pipeline.jobsFor('z'.repeat(32));
  for (let i = 0; i < 300; i++) pipeline.emit(jobs, record(i, i % 3 === 0 ? 500 : 200));
  await until(() => readDelivered(out).length === 100, '100 delivered lines');
  const lines = readDelivered(out);
  assert.ok(lines.every((line) => line.EdgeResponseStatus === 500));
  assert.deepEqual(Object.keys(lines[0]!), ['RayID', 'EdgeResponseStatus', 'EdgeStartTimestamp']);
  assert.equal(lines[0]!.EdgeStartTimestamp, '2026-11-23T02:00:00Z');
  assert.ok(readdirSync(join(out, 'logs')).includes('20261123'), 'the {DATE} in the path is the day');
  await until(async () => (await f.control.getJob('z'.repeat(32), job.id))?.lastComplete !== null, 'last_complete');
  await pipeline.close();
});

test("a store:// job writes into its zone's account's bucket, never another account's bucket of the same name", { timeout: 10_000 }, async (t) => {
  const f = await fixture(t);
  const mine = accountStore(f.engine, 'a'.repeat(32));
  const theirs = accountStore(f.engine, 'b'.repeat(32));
  await mine.createBucket('logs');
  await theirs.createBucket('logs');
  await theirs.createBucket('only-theirs');
  await f.createJob('store://logs/edge/{DATE}');
  const stray = await f.createJob('store://only-theirs/edge');
  const pipeline = f.pipeline();
  pipeline.start();
  t.after(() => pipeline.close());
  const jobs = await pipeline.jobsFor('z'.repeat(32));
  for (let i = 0; i < 5; i++) pipeline.emit(jobs, record(i));
  await until(async () => (await mine.list('logs', { prefix: 'edge/' })).objects.length > 0, 'a batch in my bucket');
  const [batch] = (await mine.list('logs', { prefix: 'edge/' })).objects;
  assert.match(batch!.key, /^edge\/20261123\/.*\.log\.gz$/);
  await until(async () => (await f.control.getJob('z'.repeat(32), stray.id))?.errorMessage != null, "the error of the job naming the other account's bucket");
  assert.match((await f.control.getJob('z'.repeat(32), stray.id))!.errorMessage!, /bucket does not exist/);
  assert.deepEqual((await theirs.list('logs')).objects, [], "nothing reached the other account's logs");
  assert.deepEqual((await theirs.list('only-theirs')).objects, []);
});

test('a receiver answering 500 for a while: the error shows on the job, then everything arrives once', { timeout: 10_000 }, async (t) => {
  const f = await fixture(t);
  let failing = true;
  const received: string[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (failing) {
        res.writeHead(500).end('down');
        return;
      }
      assert.equal(req.headers['content-encoding'], 'gzip');
      assert.equal(req.headers['x-api-key'], 'secret value');
      received.push(...gunzipSync(Buffer.concat(chunks)).toString().trim().split('\n'));
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/ingest?header_X-Api-Key=secret%20value`;
  const job = await f.createJob(url);
  const pipeline = f.pipeline();
  pipeline.start();
  const jobs = await pipeline.jobsFor('z'.repeat(32));
  for (let i = 0; i < 50; i++) pipeline.emit(jobs, record(i));
  await until(async () => (await f.control.getJob('z'.repeat(32), job.id))?.errorMessage?.includes('HTTP 500') === true, 'the error on the job');
  const failed = (await f.control.getJob('z'.repeat(32), job.id))!;
  assert.ok(failed.lastError !== null);
  failing = false;
  for (let i = 50; i < 60; i++) pipeline.emit(jobs, record(i));
  await until(() => received.length === 60, 'all 60 lines', 10_000);
  assert.equal(new Set(received).size, 60, 'nothing delivered twice');
  await until(async () => (await f.control.getJob('z'.repeat(32), job.id))?.errorMessage === null, 'the error cleared');
  await pipeline.close();
});

test('a restart delivers what was spooled; close() delivers before it returns; a deleted job ships nothing', { timeout: 10_000 }, async (t) => {
  const f = await fixture(t);
  const { out } = f;
  const job = await f.createJob(`file://${out}`);
  const first = f.pipeline(60_000);
  const jobs = await first.jobsFor('z'.repeat(32));
  for (let i = 0; i < 20; i++) first.emit(jobs, record(i));
  // Not started and its interval not reached: a new pipeline on the same data dir finds the spool.
  const second = f.pipeline(60_000);
  second.start();
  await until(() => readDelivered(out).length === 20, 'the spooled lines after the restart');
  const more = await second.jobsFor('z'.repeat(32));
  for (let i = 20; i < 25; i++) second.emit(more, record(i));
  await second.close();
  assert.equal(readDelivered(out).length, 25, 'close() delivered the rest');

  const third = f.pipeline(60_000);
  const again = await third.jobsFor('z'.repeat(32));
  third.emit(again, record(99));
  await f.control.deleteJob('z'.repeat(32), job.id);
  third.start();
  await until(() => !existsSync(join(f.dataDir, 'logs', 'jobs', String(job.id))), 'the spool removed', 8_000);
  await third.close();
  assert.equal(readDelivered(out).length, 25);
});

test(
  'file:// delivery is durable in order: in-flight mark, note, batch fsynced and renamed, its directories fsynced, note cleared, then the cursor',
  { timeout: 20_000 },
  async (t) => {
    const f = await fixture(t);
    const job = await f.createJob(`file://${f.out}/{DATE}`);
    const pipeline = f.pipeline(60_000);
    const jobs = await pipeline.jobsFor('z'.repeat(32));
    for (let i = 0; i < 5; i++) pipeline.emit(jobs, record(i));
    const trace = await traceFs(t, tmpdir());
    await pipeline.close(); // not started: close() delivers the batch
    const spool = join(f.dataDir, 'logs', 'jobs', String(job.id));
    const [batch] = readdirSync(join(f.out, '20261123'));
    const final = join(f.out, '20261123', batch!);
    const label = (path: string) => path.replace(`${final}.`, 'batch.').replace(final, 'batch').replace(spool, 'spool').replace(f.out, 'out');
    const calls = trace.calls.filter((c) => !c.path.includes('metadata.sqlite')).map((c) => [c.op, label(c.path), ...(c.to ? [label(c.to)] : [])].join(' '));
    const durably = (file: string) => [`open ${file}.tmp`, `sync ${file}.tmp`, `rename ${file}.tmp ${file}`, 'open spool', 'sync spool'];
    const tmp = calls.find((c) => /^open batch\.[0-9a-f]{16}\.tmp$/.test(c))!.slice('open '.length);
    assert.deepEqual(calls, [
      ...durably('spool/cursor.json'),
      ...durably('spool/delivering.json'),
      `open ${tmp}`,
      `sync ${tmp}`,
      `rename ${tmp} batch`,
      'open out/20261123',
      'sync out/20261123',
      'open out',
      'sync out',
      'unlink spool/delivering.json',
      ...durably('spool/cursor.json'),
    ]);
    assert.equal(readDelivered(f.out).length, 5);
  },
);

test('a restart removes the temporary file a delivery killed mid-write left, and delivers the batch once', { timeout: 20_000 }, async (t) => {
  const f = await fixture(t);
  const job = await f.createJob(`file://${f.out}`);
  const first = f.pipeline(60_000, 0);
  const jobs = await first.jobsFor('z'.repeat(32));
  for (let i = 0; i < 10; i++) first.emit(jobs, record(i));
  await first.close(); // a zero deadline: nothing delivered
  // What a kill between the note and the rename leaves: the note, and part of a temporary file.
  const spool = join(f.dataDir, 'logs', 'jobs', String(job.id));
  const tmp = join(f.out, '20261123', `20261123T020000Z_20261123T020000Z_0123abcd.log.gz.${'a1'.repeat(8)}.tmp`);
  mkdirSync(join(f.out, '20261123'));
  writeFileSync(tmp, 'part of a batch');
  writeFileSync(join(spool, 'delivering.json'), JSON.stringify({ temp: tmp }));

  const second = f.pipeline(100);
  t.after(() => second.close());
  assert.equal(existsSync(tmp), false, 'removed when the pipeline opens, before any delivery');
  assert.equal(existsSync(join(spool, 'delivering.json')), false);
  second.start();
  await until(() => readDelivered(f.out).length === 10, 'the spooled lines');
  await second.close();
  const files = readdirSync(f.out, { recursive: true }).map(String);
  assert.deepEqual(
    files.filter((name) => name.endsWith('.tmp')),
    [],
    'no temporary file left',
  );
  assert.deepEqual(
    readDelivered(f.out).map((l) => l.RayID),
    Array.from({ length: 10 }, (_, i) => record(i).RayID),
  );
});

test('a note that names anything but a batch temporary file removes nothing', { timeout: 20_000 }, (t) => {
  const dir = tempDir(t);
  const precious = join(dir, 'precious.log.gz');
  writeFileSync(precious, 'keep me');
  for (const temp of [precious, `${precious}.tmp`, 'relative/x.log.gz.0123456789abcdef.tmp', 42]) {
    writeFileSync(join(dir, 'delivering.json'), JSON.stringify({ temp }));
    assert.equal(DeliveryNote.sweep(dir), null);
    assert.equal(existsSync(join(dir, 'delivering.json')), false, 'the note is dropped');
  }
  assert.equal(readFileSync(precious, 'utf8'), 'keep me');
  assert.equal(DeliveryNote.sweep(dir), null, 'no note at all');
});

test('a destination that may not be written (here: inside the data dir) fails the job with a message naming the roots', { timeout: 20_000 }, async (t) => {
  const f = await fixture(t);
  const job = await f.createJob(`file://${join(f.dataDir, 'blobs')}`);
  const pipeline = f.pipeline(50);
  t.after(() => pipeline.close());
  pipeline.start();
  pipeline.emit(await pipeline.jobsFor('z'.repeat(32)), record(1));
  await until(async () => (await f.control.getJob('z'.repeat(32), job.id))?.errorMessage !== null, 'the error on the job');
  const failed = await f.control.getJob('z'.repeat(32), job.id);
  assert.match(
    failed!.errorMessage!,
    new RegExp(`^refused to write below ${join(f.dataDir, 'blobs')}.*: it lies inside the server's data directory; .*\\(\\[logs\\] file_roots\\): ${f.out}`),
  );
  assert.equal(existsSync(join(f.dataDir, 'blobs', '20261123')), false);
});
