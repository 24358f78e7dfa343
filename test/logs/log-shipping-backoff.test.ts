/**
 * Log shipping backs off on every kind of failure, as docs/edge-and-logs.md promises (0.5 s,
 * doubling, at most 60 s apart), and logs one line when failures begin or change kind and one when
 * they end, not one per try: a destination that answers 500, and the database away (every read of
 * the job fails with a BackendFault). Nothing spooled is lost: it all arrives once things recover.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { test, type TestContext } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { pino } from 'pino';
import { systemClock } from '../../src/core/clock.ts';
import { backendUnavailable } from '../../src/core/errors/backend-fault.ts';
import type { Logger } from '../../src/core/log.ts';
import type { LogJobRecord } from '../../src/db/control-store.ts';
import type { HttpRequestRecord } from '../../src/logs/http-request-record.ts';
import { LogPipeline, type LogJobSource } from '../../src/logs/log-pipeline.ts';
import { openStoreEngine } from '../../src/store/engine/open-store-engine.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { jobFields, ndjsonOutput } from '../helpers/log-fixtures.ts';
import { listen } from '../helpers/listen.ts';

const OUTPUT = ndjsonOutput(['RayID']);
const ZONE = 'z'.repeat(32);

function record(i: number): HttpRequestRecord {
  return {
    RayID: `ray${String(i).padStart(13, '0')}`,
    ZoneName: 'example.test',
    EdgeStartTimestamp: Date.now(),
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

/** A receiver that fails while `failing` is set; it keeps every RayID it accepted and the time of every request. */
async function receiver(t: TestContext) {
  const state = { failing: true, tries: [] as number[], rays: [] as string[] };
  const server = createServer((req, res) => {
    state.tries.push(performance.now());
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (state.failing) return void res.writeHead(500).end('down');
      for (const line of gunzipSync(Buffer.concat(chunks)).toString().trim().split('\n')) state.rays.push((JSON.parse(line) as { RayID: string }).RayID);
      res.writeHead(200).end();
    });
  });
  const port = await listen(server, t);
  return { state, url: `http://127.0.0.1:${port}/logs` };
}

/** A control plane in memory whose reads can be made to fail as a database that is away. */
function jobSource(destinationConf: string) {
  const job: LogJobRecord = { id: 1, ...jobFields(ZONE, destinationConf, OUTPUT, 0) };
  const state = { down: false, reads: [] as number[] };
  const read = <T>(value: T): Promise<T> => {
    state.reads.push(performance.now());
    return state.down ? Promise.reject(backendUnavailable('database', 'refused the connection')) : Promise.resolve(value);
  };
  const source: LogJobSource = {
    listEnabledJobs: () => read([job]),
    getJob: () => read(job),
    zoneAccount: () => read('a'.repeat(32)),
    setJobStatus: async (_id, status) => {
      await read(undefined);
      Object.assign(job, status);
    },
  };
  return { source, state, job };
}

function capture(): { logger: Logger; lines: Array<{ level: number; msg: string }> } {
  const lines: Array<{ level: number; msg: string }> = [];
  return { logger: pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as { level: number; msg: string }) }), lines };
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !condition(); waited += 50) {
    assert.ok(waited < 10_000, `never: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Gaps between consecutive times, in ms, rounded. */
const gaps = (times: number[]): number[] => times.slice(1).map((at, i) => Math.round(at - times[i]!));

test('a failing destination is retried 0.5 s, 1 s, 2 s... apart, with one log line, and gets every line once it answers', { timeout: 60_000 }, async (t) => {
  const { state, url } = await receiver(t);
  const { source } = jobSource(url);
  const { logger, lines } = capture();
  const engine = await openStoreEngine({ dataDir: tempDir(t) });
  t.after(() => engine.close());
  const pipeline = new LogPipeline({ dataDir: tempDir(t), jobs: source, engine, clock: systemClock, logger, maxIntervalMs: 10 });
  pipeline.start();
  t.after(() => pipeline.close());
  const jobs = await pipeline.jobsFor(ZONE);
  for (let i = 0; i < 5; i++) pipeline.emit(jobs, record(i));
  await new Promise((resolve) => setTimeout(resolve, 4_500));
  const seen = gaps(state.tries);
  t.diagnostic(`tries ${state.tries.length}, gaps ${seen.join(', ')} ms`);
  // 0.5, 1, 2 s: 4 tries in 4.5 s (every 200 ms would be over 20); the tick (200 ms) rounds each gap up.
  assert.ok(state.tries.length >= 2 && state.tries.length <= 5, `${state.tries.length} tries`);
  // Never sooner than the backoff (a busy machine can only make the gaps longer).
  for (const [i, gap] of seen.entries()) assert.ok(gap >= 500 * 2 ** i - 50, `gap ${i}: ${gap} ms`);
  assert.equal(lines.filter((l) => l.msg.startsWith('Log shipping failed')).length, 1, 'one line, not one per try');
  state.failing = false;
  for (let waited = 0; state.rays.length < 5 && waited < 10_000; waited += 100) await new Promise((resolve) => setTimeout(resolve, 100));
  assert.deepEqual(
    [...state.rays].sort(),
    [0, 1, 2, 3, 4].map((i) => record(i).RayID),
  );
  // Logged once the receiver's answer is in (it took the lines a moment before).
  await until(() => lines.some((l) => l.msg.startsWith('Log shipping recovered')), 'the recovery line');
  assert.equal(lines.filter((l) => l.msg.startsWith('Log shipping recovered')).length, 1);
});

test(
  'the database away: the shipper backs off the same way with one log line, and delivers what was spooled once it is back',
  { timeout: 60_000 },
  async (t) => {
    const { state: receiverState, url } = await receiver(t);
    receiverState.failing = false;
    const { source, state } = jobSource(url);
    const { logger, lines } = capture();
    const engine = await openStoreEngine({ dataDir: tempDir(t) });
    t.after(() => engine.close());
    const pipeline = new LogPipeline({ dataDir: tempDir(t), jobs: source, engine, clock: systemClock, logger, maxIntervalMs: 10 });
    const jobs = await pipeline.jobsFor(ZONE);
    state.down = true;
    // Lines of requests answered while the database is away still go to the spool (the edge knows the job).
    for (let i = 0; i < 3; i++) pipeline.emit(jobs, record(i));
    pipeline.start();
    t.after(() => pipeline.close());
    const from = state.reads.length;
    await new Promise((resolve) => setTimeout(resolve, 4_500));
    const reads = state.reads.length - from;
    t.diagnostic(`reads of the job while the database was away: ${reads} in 4.5 s`);
    assert.ok(reads <= 6, `${reads} reads: backing off, not every 200 ms`);
    assert.equal(lines.filter((l) => l.msg.startsWith('Log shipping failed')).length, 1);
    assert.equal(lines.filter((l) => l.level >= 50).length, 0, "a database outage is no error of the pipeline's");
    state.down = false;
    for (let waited = 0; receiverState.rays.length < 3 && waited < 10_000; waited += 100) await new Promise((resolve) => setTimeout(resolve, 100));
    assert.deepEqual(
      [...receiverState.rays].sort(),
      [0, 1, 2].map((i) => record(i).RayID),
      'every line, once',
    );
    await until(() => lines.some((l) => l.msg.startsWith('Log shipping recovered')), 'the recovery line');
    assert.equal(lines.filter((l) => l.msg.startsWith('Log shipping recovered')).length, 1);
  },
);
