/**
 * The log pipeline's bounds, on a real control store and real destinations, an attacker's job and
 * an honest one side by side: a destination that never answers fills its job's spool up to the cap
 * and no further (lines beyond are dropped, counted on the job, and the edge never waits); a
 * destination that keeps failing pauses its job (last_error, error_message), which resumes on the
 * first success; a deleted job's spool is gone at once. Time that decides (batch age, backoff,
 * pause) is a FakeClock's.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test, type TestContext } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { FakeClock } from '../../src/core/clock.ts';
import { silentLogger } from '../../src/core/log.ts';
import type { LogJobRecord } from '../../src/db/control-store.ts';
import { toJobJson } from '../../src/api/logshipping/job-schema.ts';
import type { HttpRequestRecord } from '../../src/logs/http-request-record.ts';
import { FileRoots } from '../../src/logs/destinations/file-roots.ts';
import { LogPipeline, type LogPipelineOptions } from '../../src/logs/log-pipeline.ts';
import { openStoreEngine } from '../../src/store/engine/open-store-engine.ts';
import { openTestControlStore, openTestDatabase } from '../helpers/control-store.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { jobFields, ndjsonOutput } from '../helpers/log-fixtures.ts';
import { listen } from '../helpers/listen.ts';

const ZONE = 'z'.repeat(32);
const OUTPUT = ndjsonOutput(['RayID', 'EdgeResponseStatus', 'ClientRequestURI']);

async function fixture(t: TestContext) {
  const clock = new FakeClock(Date.parse('2026-11-23T02:00:00Z'));
  const dataDir = tempDir(t);
  const out = tempDir(t);
  const database = await openTestDatabase(t, { clock });
  const engine = await openStoreEngine({ dataDir, clock, ...(database ? { database } : {}) });
  t.after(() => engine.close());
  const control = await openTestControlStore(t, { dataDir, clock, database });
  const now = clock.now();
  await control.createAccount({ id: 'a'.repeat(32), email: 'owner@example.test', name: 'owner', keyHash: 'x', created: now });
  await control.createZone({ id: ZONE, accountId: 'a'.repeat(32), name: 'example.test', origin: null, paused: false, created: now, modified: now });
  const createJob = (destinationConf: string, extra: Partial<LogJobRecord> = {}) =>
    control.createJob(ZONE, () => ({ ...jobFields(ZONE, destinationConf, OUTPUT, now), ...extra }));
  const pipeline = (options: Partial<LogPipelineOptions> = {}) => {
    const made = new LogPipeline({
      dataDir,
      jobs: control,
      engine,
      clock,
      logger: silentLogger,
      fileRoots: new FileRoots({ roots: [out], dataDir }),
      maxIntervalMs: 100,
      shutdownDeadlineMs: 1_000,
      ...options,
    });
    t.after(() => made.close());
    return made;
  };
  const spoolDir = (jobId: number) => join(dataDir, 'logs', 'jobs', String(jobId));
  return { clock, dataDir, out, control, createJob, pipeline, spoolDir };
}

function record(i: number): HttpRequestRecord {
  return {
    RayID: `ray${String(i).padStart(13, '0')}`,
    ZoneName: 'example.test',
    EdgeStartTimestamp: Date.parse('2026-11-23T02:00:00Z') + i,
    EdgeEndTimestamp: 0,
    ClientIP: '127.0.0.1',
    ClientRequestHost: 'example.test',
    ClientRequestMethod: 'GET',
    ClientRequestURI: `/path/${'x'.repeat(60)}`,
    ClientRequestPath: '/',
    ClientRequestProtocol: 'HTTP/1.1',
    ClientRequestScheme: 'http',
    ClientRequestUserAgent: '',
    ClientRequestReferer: '',
    ClientRequestBytes: 0,
    EdgeResponseStatus: 200,
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

/** Bytes of a spool's segment files, and how many whole records they hold. */
function spoolOnDisk(dir: string): { bytes: number; records: number } {
  let bytes = 0;
  let records = 0;
  if (!existsSync(dir)) return { bytes, records };
  for (const name of readdirSync(dir)
    .filter((n) => n.endsWith('.spool'))
    .sort()) {
    const data = readFileSync(join(dir, name));
    bytes += statSync(join(dir, name)).size;
    for (let at = 0; at + 12 <= data.length; at += 12 + data.readUInt32LE(at)) records += 1;
  }
  return { bytes, records };
}

function deliveredLines(dir: string): number {
  let lines = 0;
  const walk = (at: string): void => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(at, entry.name));
      else if (entry.name.endsWith('.log.gz'))
        lines += gunzipSync(readFileSync(join(at, entry.name)))
          .toString()
          .trim()
          .split('\n').length;
    }
  };
  walk(dir);
  return lines;
}

async function until(check: () => boolean | Promise<boolean>, what: string, ms = 5_000, step?: () => void): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    step?.();
    await sleep(25);
  }
}

/** A TCP listener that takes connections and never answers; `release` drops them (a request in flight then fails). */
async function silentListener(t: TestContext) {
  const sockets = new Set<Socket>();
  const server = createNetServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const release = () => {
    for (const socket of sockets) socket.destroy();
  };
  t.after(
    () =>
      new Promise<void>((resolve) => {
        release();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/ingest`, release, connections: () => sockets.size };
}

/** An HTTP receiver answering `status` (changeable), counting requests. */
async function receiver(t: TestContext) {
  const state = { status: 503, requests: 0, lines: 0 };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      state.requests += 1;
      if (state.status === 200) state.lines += gunzipSync(Buffer.concat(chunks)).toString().trim().split('\n').length;
      res.writeHead(state.status).end();
    });
  });
  const port = await listen(server, t);
  return { url: `http://127.0.0.1:${port}/ingest`, state };
}

test(
  'a destination that never answers: its spool stops at the cap, lines beyond are dropped and counted on the job, the edge never waits; an honest job beside it delivers everything',
  { timeout: 30_000 },
  async (t) => {
    const f = await fixture(t);
    const silent = await silentListener(t);
    const stuck = await f.createJob(silent.url, { name: 'stuck' });
    const honest = await f.createJob(`file://${f.out}`, { name: 'honest' });
    const cap = 256 * 1024;
    const pipeline = f.pipeline({ maxJobSpoolBytes: cap, maxTotalSpoolBytes: 4 * 1024 * 1024 });
    pipeline.start();
    const jobs = await pipeline.jobsFor(ZONE);
    const total = 4_000;
    let written = 0;
    // Rounds of 500 requests: the honest destination keeps up between them, the stuck one never does.
    for (let i = 0; i < total; i++) {
      pipeline.emit(jobs, record(i), () => {
        written += 1;
      });
      // A turn's records are written together at its end: give the event loop a turn now and then.
      if (i % 100 === 99) await new Promise((resolve) => setImmediate(resolve));
      if (i % 500 === 499)
        await until(
          () => deliveredLines(f.out) === i + 1,
          `the honest job's lines up to ${i + 1}`,
          10_000,
          () => f.clock.advance(200),
        );
    }
    assert.equal(written, total, 'every response was let go: a full spool never holds up the edge');

    const onDisk = spoolOnDisk(f.spoolDir(stuck.id));
    assert.ok(onDisk.bytes <= cap, `the stuck job's spool stopped at its cap: ${onDisk.bytes} <= ${cap}`);
    assert.ok(onDisk.bytes > cap - 1024, `and filled it: ${onDisk.bytes}`);
    assert.ok(pipeline.spooledBytes <= 4 * 1024 * 1024);
    const dropped = total - onDisk.records;
    assert.ok(dropped > 1_000, `${dropped} lines dropped`);
    await until(
      () => silent.connections() > 0,
      'the stuck job trying its destination',
      5_000,
      () => f.clock.advance(200),
    );
    // The count reaches the job (the API's error_message and last_error) while the destination still hangs.
    let shown: LogJobRecord | null = null;
    await until(
      async () => {
        shown = await f.control.getJob(ZONE, stuck.id);
        return shown?.errorMessage?.startsWith(`${dropped} log lines dropped since`) === true;
      },
      'the drop count on the job',
      5_000,
      () => f.clock.advance(500),
    );
    const json = toJobJson(shown!);
    assert.match(
      json.error_message!,
      new RegExp(
        `^${dropped} log lines dropped since 2026-11-23T02:00:\\d\\d\\.\\d{3}Z: its spool was full \\(at most ${cap} bytes of undelivered lines per job, 4194304 for all jobs\\)$`,
      ),
    );
    assert.match(json.last_error!, /^2026-11-23T02:0\d:\d\dZ$/);
    assert.equal(spoolOnDisk(f.spoolDir(stuck.id)).bytes, onDisk.bytes, 'and the spool did not grow meanwhile');

    // The honest job, beside it, lost nothing.
    assert.equal(deliveredLines(f.out), total);
    const honestJob = await f.control.getJob(ZONE, honest.id);
    assert.deepEqual([honestJob!.errorMessage, honestJob!.lastError], [null, null]);
    silent.release();
  },
);

test('spools of all jobs together stay within max_total_spool_bytes', { timeout: 30_000 }, async (t) => {
  const f = await fixture(t);
  const silent = await silentListener(t);
  const first = await f.createJob(silent.url);
  const second = await f.createJob(`${silent.url}?n=2`);
  const budget = 384 * 1024;
  const pipeline = f.pipeline({ maxJobSpoolBytes: 256 * 1024, maxTotalSpoolBytes: budget });
  const jobs = await pipeline.jobsFor(ZONE);
  for (let i = 0; i < 5_000; i++) {
    pipeline.emit(jobs, record(i));
    if (i % 100 === 99) await new Promise((resolve) => setImmediate(resolve));
  }
  await new Promise((resolve) => setImmediate(resolve));
  const [a, b] = [spoolOnDisk(f.spoolDir(first.id)), spoolOnDisk(f.spoolDir(second.id))];
  assert.ok(a.bytes + b.bytes <= budget, `${a.bytes} + ${b.bytes} <= ${budget}`);
  assert.ok(a.bytes + b.bytes > budget - 2048, 'the budget was used');
  assert.equal(pipeline.spooledBytes, a.bytes + b.bytes, 'the budget counts what is on disk');
  silent.release();
});

test(
  'a destination that keeps failing pauses its job (last_error, error_message); updating it retries at once; the first success resumes it',
  { timeout: 30_000 },
  async (t) => {
    const f = await fixture(t);
    const sink = await receiver(t);
    const job = await f.createJob(sink.url);
    const pipeline = f.pipeline({ pauseAfterFailingMs: 60_000 });
    pipeline.start();
    let jobs = await pipeline.jobsFor(ZONE);
    for (let i = 0; i < 10; i++) pipeline.emit(jobs, record(i));
    const read = async () => (await f.control.getJob(ZONE, job.id))!;
    await until(
      async () => (await read()).errorMessage !== null,
      'the first failure',
      5_000,
      () => f.clock.advance(150),
    );
    const failing = await read();
    assert.match(failing.errorMessage!, /^POST http:\/\/127\.0\.0\.1:\d+\/ingest answered HTTP 503$/, 'failing, not yet paused');
    // Retries with backoff; a minute of failures pauses the job.
    await until(
      async () => (await read()).errorMessage!.startsWith('paused:'),
      'the pause',
      10_000,
      () => f.clock.advance(10_000),
    );
    const paused = toJobJson(await read());
    assert.match(
      paused.error_message!,
      /^paused: deliveries have failed since 2026-11-23T02:00:\d\d\.\d{3}Z; it takes no new lines until a delivery succeeds \(retried at least every 60 s, at once when the job is updated\)\. Last failure: POST http:\/\/127\.0\.0\.1:\d+\/ingest answered HTTP 503$/,
    );
    assert.ok(paused.last_error !== null && Date.parse(paused.last_error) >= Date.parse('2026-11-23T02:01:00Z'), paused.last_error!);
    assert.equal(paused.last_complete, null);

    // Paused: new lines are dropped and counted, the spool does not grow.
    const before = spoolOnDisk(f.spoolDir(job.id));
    assert.equal(before.records, 10);
    for (let i = 10; i < 60; i++) pipeline.emit(jobs, record(i));
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(spoolOnDisk(f.spoolDir(job.id)), before);
    await until(
      async () => /; 50 log lines dropped since .*: the job was paused$/.test((await read()).errorMessage!),
      'the drops on the job',
      5_000,
      () => f.clock.advance(300),
    );

    // The owner updates the job: retried at once, with no wait for the backoff (the clock stands still).
    const requests = sink.state.requests;
    await f.control.updateJob(ZONE, job.id, (current) => ({ ...current, name: 'renamed', modified: current.modified + 1 }));
    await until(() => sink.state.requests > requests, 'a retry right after the update');

    // The destination works again: the next retry delivers the spool and resumes the job.
    sink.state.status = 200;
    await until(
      () => sink.state.lines === 10,
      'the spooled lines delivered',
      10_000,
      () => f.clock.advance(5_000),
    );
    await until(async () => (await read()).lastComplete !== null, 'the success on the job');
    const resumed = await read();
    assert.match(
      resumed.errorMessage!,
      /^50 log lines dropped since .*: the job was paused$/,
      'the drops stay on the job until a success with none after them',
    );
    jobs = await pipeline.jobsFor(ZONE);
    for (let i = 60; i < 65; i++) pipeline.emit(jobs, record(i));
    await until(
      () => sink.state.lines === 15,
      'new lines taken and delivered again',
      10_000,
      () => f.clock.advance(200),
    );
    await until(async () => (await read()).errorMessage === null, 'a clean status');
    assert.equal((await read()).lastError, null);
  },
);

test("a deleted job's spool is gone at once (files and budget), and a disabled one's too", { timeout: 20_000 }, async (t) => {
  const f = await fixture(t);
  const deleted = await f.createJob(`file://${f.out}`, { maxUploadIntervalSeconds: 300 });
  const disabled = await f.createJob(`file://${f.out}`, { maxUploadIntervalSeconds: 300 });
  const pipeline = f.pipeline({ maxIntervalMs: 300_000 });
  pipeline.start();
  const jobs = await pipeline.jobsFor(ZONE);
  for (let i = 0; i < 100; i++) pipeline.emit(jobs, record(i));
  await new Promise((resolve) => setImmediate(resolve));
  assert.ok(spoolOnDisk(f.spoolDir(deleted.id)).records === 100 && spoolOnDisk(f.spoolDir(disabled.id)).records === 100);
  const held = pipeline.spooledBytes;
  assert.ok(held > 0);
  const started = Date.now();
  assert.equal(await f.control.deleteJob(ZONE, deleted.id), true);
  await until(() => !existsSync(f.spoolDir(deleted.id)), "the deleted job's spool removed", 1_000);
  assert.ok(Date.now() - started < 1_000, 'right after the DELETE, not at the next idle check');
  assert.equal(pipeline.spooledBytes, held / 2, 'its bytes are given back to the budget');
  await f.control.updateJob(ZONE, disabled.id, (current) => ({ ...current, enabled: false, modified: current.modified + 1 }));
  await until(() => !existsSync(f.spoolDir(disabled.id)), "the disabled job's spool removed", 1_000);
  assert.equal(pipeline.spooledBytes, 0);
  assert.equal(deliveredLines(f.out), 0, 'neither shipped anything');
});
