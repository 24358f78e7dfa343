/**
 * The edge's held log records on disk (held-records-file.ts, pending-records.ts): records of
 * requests answered 503 while the database was away are in `<data dir>/logs/held-records` before
 * the response completes; the next edge on the data dir reads them back and hands them to the
 * zone's jobs once the database answers, once; then the file is emptied. A torn or damaged file
 * never stops the edge starting (what can be read is kept); the bounds hold; a failed write keeps
 * the record in memory. The edge, log pipeline and control store are the real ones; the database
 * is made to fail as in database-away.test.ts.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, statSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { randomBytes } from 'node:crypto';
import { pino, type Logger } from 'pino';
import { systemClock } from '../../src/core/clock.ts';
import { Metrics } from '../../src/core/metrics.ts';
import { backendUnavailable } from '../../src/core/errors/backend-fault.ts';
import type { ControlStore } from '../../src/db/control-store.ts';
import { createEdgeService } from '../../src/edge/index.ts';
import { encodeHeld, HELD_RECORDS_FILE, HeldRecordsFile, scanHeld } from '../../src/edge/held-records-file.ts';
import { PendingRecords, type PendingRecord } from '../../src/edge/pending-records.ts';
import { ZoneConfigCache } from '../../src/edge/zone-config-cache.ts';
import { FileRoots } from '../../src/logs/index.ts';
import type { HttpRequestRecord } from '../../src/logs/http-request-record.ts';
import { LogPipeline } from '../../src/logs/log-pipeline.ts';
import { openStoreEngine } from '../../src/store/engine/open-store-engine.ts';
import type { StoreEngine } from '../../src/store/engine/store-engine.ts';
import { onTestEnd } from '../helpers/cleanup.ts';
import { openTestControlStore } from '../helpers/control-store.ts';
import { fileLines, until } from '../helpers/delivered-logs.ts';
import { getVia } from '../helpers/edge-logs-setup.ts';
import { jobFields, ndjsonOutput } from '../helpers/log-fixtures.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const ZONE = 'e'.repeat(32);
const OUTPUT = ndjsonOutput(['RayID', 'ClientRequestHost', 'ClientRequestPath', 'EdgeResponseStatus', 'RequestHeaders', 'ResponseHeaders']);

interface Line {
  RayID: string;
  ClientRequestHost: string;
  ClientRequestPath: string;
  EdgeResponseStatus: number;
  RequestHeaders: Record<string, string>;
  ResponseHeaders: Record<string, string>;
}

/** The database as the edge sees it: `down` fails every call; `failing` fails findZoneByName for those names only. */
interface DatabaseState {
  down: boolean;
  failing: Set<string>;
}

function switchable(store: ControlStore, state: DatabaseState): ControlStore {
  return new Proxy(store, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) =>
        (state.down && property !== 'onZoneChange') || (property === 'findZoneByName' && state.failing.has(String(args[0])))
          ? Promise.reject(backendUnavailable('database', 'refused the connection'))
          : (value as (...a: unknown[]) => unknown).apply(target, args);
    },
  });
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** One edge process's worth: its pipeline, the edge on a port of its own, and what it logged. */
interface Edge {
  port: number;
  pipeline: LogPipeline;
  logged: Array<Record<string, unknown>>;
  get(host: string, path: string, headers?: Record<string, string>): Promise<Answer>;
  close(): Promise<void>;
}

interface Setup {
  dataDir: string;
  /** The held records' file. */
  path: string;
  out: string;
  state: DatabaseState;
  control: ControlStore;
  /** An edge (with its own log pipeline) on the data dir, as a start of edgeport makes; counted in `metrics` when given. */
  start(metrics?: Metrics): Promise<Edge>;
  /** A log pipeline on the data dir, closed when the test ends. */
  pipeline(): LogPipeline;
  delivered(): Line[];
}

function capturing(): { logger: Logger; logged: Array<Record<string, unknown>> } {
  const logged: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => logged.push(JSON.parse(line) as Record<string, unknown>) });
  return { logger, logged };
}

async function setup(t: TestContext): Promise<Setup> {
  const dataDir = tempDir(t);
  const out = tempDir(t);
  // Before the temporary directories go and the stores close: what the test started stops first.
  const stops: Array<() => Promise<void>> = [];
  onTestEnd(t, async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  });
  const engine: StoreEngine = await openStoreEngine({ dataDir });
  stops.push(() => engine.close());
  const store = await openTestControlStore(t, { dataDir, clock: systemClock, database: undefined });
  const now = Date.now();
  await store.createAccount({ id: 'a'.repeat(32), email: 'o@example.test', name: 'o', keyHash: 'x', created: now });
  await store.createZone({
    id: ZONE,
    accountId: 'a'.repeat(32),
    name: 'example.test',
    origin: 'http://127.0.0.1:9',
    paused: false,
    created: now,
    modified: now,
  });
  await store.putEntrypoint(ZONE, 'http_log_custom_fields', () => ({
    id: 'r'.repeat(32),
    zoneId: ZONE,
    name: 'fields',
    description: '',
    kind: 'zone',
    phase: 'http_log_custom_fields',
    version: 1,
    lastUpdated: now,
    rules: [
      {
        id: 'u'.repeat(32),
        version: 1,
        ref: 'u'.repeat(32),
        action: 'log_custom_field',
        expression: 'true',
        description: '',
        enabled: true,
        actionParameters: { requestFields: ['x-trace'], responseFields: ['retry-after'], cookieFields: [] },
        lastUpdated: now,
      },
    ],
  }));
  await store.createJob(ZONE, () => ({ ...jobFields(ZONE, `file://${out}`, OUTPUT, now), name: 'all' }));
  const state: DatabaseState = { down: false, failing: new Set() };
  const control = switchable(store, state);
  const pipeline = (logger: Logger = pino({ level: 'silent' })): LogPipeline => {
    const made = new LogPipeline({
      dataDir,
      jobs: control,
      engine,
      clock: systemClock,
      logger,
      maxIntervalMs: 50,
      fileRoots: new FileRoots({ roots: [out], dataDir }),
    });
    made.start();
    stops.push(() => made.close());
    return made;
  };
  const start = async (metrics?: Metrics): Promise<Edge> => {
    const { logger, logged } = capturing();
    const logs = pipeline(logger);
    const edge = createEdgeService({ zones: control, pipeline: logs, clock: systemClock, logger, ...(metrics ? { metrics } : {}) });
    const server: Server = createServer(edge.handler);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    let closed = false;
    const close = async (): Promise<void> => {
      if (closed) return;
      closed = true;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await edge.close();
      await logs.close();
    };
    stops.push(close);
    return { port, pipeline: logs, logged, get: (host, path, headers = {}) => getVia(`http://127.0.0.1:${port}`, host, path, headers), close };
  };
  return {
    dataDir,
    path: join(dataDir, 'logs', HELD_RECORDS_FILE),
    out,
    state,
    control,
    start,
    pipeline: () => pipeline(),
    delivered: () => fileLines<Line>(out),
  };
}

/** The records the file holds now, in order. */
function fileRecords(path: string): PendingRecord[] {
  return scanHeld(readFileSync(path)).entries.map((held) => held.entry);
}

const rays = (lines: Array<{ RayID: string }>): string[] => lines.map((line) => line.RayID).sort();
/** The paths of the lines delivered so far, sorted. */
const deliveredPaths = (env: Setup): string[] =>
  env
    .delivered()
    .map((line) => line.ClientRequestPath)
    .sort();
/** Resolves once the held records' file is empty (what it held was handed on), within 5 s. */
const emptied = (path: string): Promise<number> =>
  until(
    () => statSync(path).size,
    (size) => size === 0,
    'the file emptied',
    5_000,
  );
const messages = (logged: Array<Record<string, unknown>>, pattern: RegExp) => logged.filter((line) => pattern.test(String(line.msg)));

/** A held record as the edge makes one for a host it could not look up (pad: an extra header of that many bytes). */
function heldRecord(i: number, options: { host?: string; pad?: number } = {}): PendingRecord {
  const host = options.host ?? 'api.example.test';
  const record: HttpRequestRecord = {
    RayID: (0x1000 + i).toString(16).padStart(16, '0'),
    ZoneName: '',
    EdgeStartTimestamp: 1_767_000_000_000 + i,
    EdgeEndTimestamp: 1_767_000_000_001 + i,
    ClientIP: '127.0.0.1',
    ClientRequestHost: host,
    ClientRequestMethod: 'GET',
    ClientRequestURI: `/r${i}?q=1`,
    ClientRequestPath: `/r${i}`,
    ClientRequestProtocol: 'HTTP/1.1',
    ClientRequestScheme: 'http',
    ClientRequestUserAgent: 'held-test',
    ClientRequestReferer: '',
    ClientRequestBytes: 80,
    EdgeResponseStatus: 503,
    EdgeResponseBytes: 120,
    EdgeResponseContentType: 'text/plain',
    OriginResponseStatus: 0,
    OriginResponseTime: 0,
    WorkerSubrequest: false,
    RequestHeaders: {},
    ResponseHeaders: {},
    Cookies: {},
  };
  return {
    host,
    record,
    requestRawHeaders: ['Host', host, 'X-Trace', `t${i}`, ...(options.pad ? ['X-Pad', 'p'.repeat(options.pad)] : [])],
    responseRawHeaders: ['content-type', 'text/plain; charset=utf-8', 'retry-after', '1'],
  };
}

test('the file round-trips any record: every character, the raw header lists as they were; readable by its owner only', { timeout: 30_000 }, (t) => {
  const path = join(tempDir(t), 'logs', HELD_RECORDS_FILE);
  const odd = 'é ü 漢字 😀 \ud800 lone \udfff "quoted" \\ back\nnew\r\n\t\u0000nul \u2028 \xff';
  // A map with an own `__proto__` key (a custom field may be named anything).
  const ownProto = JSON.parse('{"__proto__":"own"}') as Record<string, string>;
  ownProto['x-trace'] = odd;
  const records: PendingRecord[] = [
    heldRecord(1),
    {
      ...heldRecord(2, { pad: 20_000 }),
      record: { ...heldRecord(2).record, ClientRequestURI: `/${odd}`, ClientRequestUserAgent: odd, ClientRequestReferer: odd, OriginResponseTime: 1234.5 },
      requestRawHeaders: ['Host', 'api.example.test', 'X-Odd', odd, 'x-odd', 'second value', 'Cookie', 'session=abc; other=1', '__proto__', 'x'],
      responseRawHeaders: [],
    },
    { ...heldRecord(3), record: { ...heldRecord(3).record, RequestHeaders: ownProto } },
  ];
  const { file, scan } = HeldRecordsFile.open(path, 1 << 20);
  assert.deepEqual(scan, { entries: [], skippedBytes: 0, trailingBytes: 0, unreadBytes: 0 });
  for (const record of records) file.append(encodeHeld(record));
  file.close();
  assert.equal(statSync(path).mode & 0o777, 0o600, 'request headers (Authorization, Cookie) are in it');

  const again = HeldRecordsFile.open(path, 1 << 20);
  again.file.close();
  assert.equal(again.scan.skippedBytes + again.scan.trailingBytes + again.scan.unreadBytes, 0);
  assert.deepEqual(
    again.scan.entries.map((held) => held.entry),
    records,
  );
  assert.equal(
    again.scan.entries.reduce((sum, held) => sum + held.frame.length, 0),
    statSync(path).size,
  );
});

test(
  'a held record is in the file before its 503 completes; the next edge on the data dir delivers it once, then the file is empty and gives nothing again',
  { timeout: 90_000 },
  async (t) => {
    const env = await setup(t);
    env.state.down = true;
    const metrics = new Metrics();
    const first = await env.start(metrics);
    const answered: string[] = [];
    for (let i = 0; i < 3; i++) {
      const answer = await first.get('api.example.test', `/held-${i}`, { 'x-trace': `trace-${i}` });
      assert.equal(answer.status, 503, answer.body);
      answered.push(String(answer.headers['edgeport-ray']));
      // The client has the whole answer: the record is in the file already.
      const held = fileRecords(env.path);
      assert.equal(held.length, i + 1);
      assert.equal(held.at(-1)!.record.RayID, answered.at(-1));
      assert.equal(held.at(-1)!.record.ClientRequestPath, `/held-${i}`);
    }
    assert.equal(messages(first.logged, /Log records are held until the database answers again/).length, 1, 'one line per outage');
    const exposition = await metrics.text();
    assert.match(exposition, /^edgeport_edge_held_log_records 3$/m);
    assert.match(exposition, /^edgeport_edge_held_log_records_dropped_total 0$/m);
    const before = readFileSync(env.path);
    await first.close();
    assert.deepEqual(readFileSync(env.path), before, 'closing leaves the file as it was: the next start reads what a kill would leave');

    env.state.down = false;
    const second = await env.start();
    const lines = await until(env.delivered, (found) => found.length >= 3, 'the held lines', 20_000);
    assert.deepEqual(rays(lines), [...answered].sort());
    assert.deepEqual(
      lines
        .map((line) => [
          line.ClientRequestHost,
          line.ClientRequestPath,
          line.EdgeResponseStatus,
          line.RequestHeaders['x-trace'],
          line.ResponseHeaders['retry-after'],
        ])
        .sort(),
      [0, 1, 2].map((i) => ['api.example.test', `/held-${i}`, 503, `trace-${i}`, '1']),
      "the zone's custom fields, taken from the held headers",
    );
    await until(
      () => statSync(env.path).size,
      (size) => size === 0,
      'the file emptied once the records were in the spool',
      5_000,
    );
    assert.equal(messages(second.logged, /Log records held by an earlier run/)[0]?.records, 3);
    assert.equal(messages(second.logged, /held log records went to their jobs/)[0]?.delivered, 3);
    await second.close();

    const third = await env.start();
    await sleep(2_500);
    assert.equal(env.delivered().length, 3, 'a restart gives nothing again');
    assert.deepEqual(messages(third.logged, /held/i), []);
    await third.close();
  },
);

test('a torn last entry is cut and a damaged one skipped: the edge starts, the rest is delivered', { timeout: 90_000 }, async (t) => {
  const env = await setup(t);
  env.state.down = true;
  const first = await env.start();
  for (let i = 0; i < 4; i++) assert.equal((await first.get('api.example.test', `/held-${i}`)).status, 503);
  await first.close();
  const { entries } = scanHeld(readFileSync(env.path));
  assert.equal(entries.length, 4);
  const starts = entries.map((_, i) => entries.slice(0, i).reduce((sum, held) => sum + held.frame.length, 0));
  // Entry 1: one byte of its JSON changed (its checksum no longer matches). Entry 3: cut in half, as a write cut short.
  const bytes = readFileSync(env.path);
  const at = starts[1]! + 40;
  bytes.writeUInt8(bytes.readUInt8(at) ^ 0x20, at);
  writeFileSync(env.path, bytes);
  truncateSync(env.path, starts[3]! + Math.floor(entries[3]!.frame.length / 2));

  env.state.down = false;
  const second = await env.start();
  const lines = await until(env.delivered, (found) => found.length >= 2, 'the readable records', 20_000);
  await sleep(1_500);
  assert.deepEqual(deliveredPaths(env), ['/held-0', '/held-2']);
  assert.deepEqual(rays(lines), [entries[0]!.entry.record.RayID, entries[2]!.entry.record.RayID].sort());
  const warned = messages(second.logged, /not whole records/);
  assert.equal(warned.length, 1);
  assert.equal(warned[0]!.skippedBytes, entries[1]!.frame.length);
  assert.equal(warned[0]!.trailingBytes, Math.floor(entries[3]!.frame.length / 2));
  await emptied(env.path);
});

test('a file of garbage never stops the edge starting: skipped, logged, and the file holds new records again', { timeout: 60_000 }, async (t) => {
  const env = await setup(t);
  mkdirSync(join(env.dataDir, 'logs'), { recursive: true });
  writeFileSync(env.path, randomBytes(200_000));
  env.state.down = true;
  const edge = await env.start();
  const warned = messages(edge.logged, /not whole records/);
  assert.equal(warned.length, 1);
  assert.equal(Number(warned[0]!.skippedBytes) + Number(warned[0]!.trailingBytes), 200_000);
  assert.equal(statSync(env.path).size, 0, 'what could not be read left the file');
  const answer = await edge.get('api.example.test', '/after-garbage');
  assert.equal(answer.status, 503);
  assert.deepEqual(
    fileRecords(env.path).map((held) => held.record.RayID),
    [answer.headers['edgeport-ray']],
  );
  env.state.down = false;
  const lines = await until(env.delivered, (found) => found.length >= 1, 'the new record', 20_000);
  assert.deepEqual(
    lines.map((line) => line.ClientRequestPath),
    ['/after-garbage'],
  );
});

test('a file that cannot be opened (a directory in its place) never stops the edge: records are held in memory', { timeout: 60_000 }, async (t) => {
  const env = await setup(t);
  mkdirSync(env.path, { recursive: true });
  env.state.down = true;
  const edge = await env.start();
  assert.equal(messages(edge.logged, /Could not open the file of held log records/).length, 1);
  for (let i = 0; i < 2; i++) assert.equal((await edge.get('api.example.test', `/in-memory-${i}`)).status, 503);
  env.state.down = false;
  const lines = await until(env.delivered, (found) => found.length >= 2, 'the records held in memory', 20_000);
  assert.deepEqual(lines.map((line) => line.ClientRequestPath).sort(), ['/in-memory-0', '/in-memory-1']);
  const back = messages(edge.logged, /held log records went to their jobs/);
  assert.equal(back[0]?.delivered, 2);
  assert.equal(back[0]?.heldInMemoryOnly, 2);
});

test(
  'a write that fails (ENOSPC, the file on /dev/full) keeps the record in memory: one log line, every request answered; a later write puts them back',
  { timeout: 60_000 },
  async (t) => {
    const env = await setup(t);
    mkdirSync(join(env.dataDir, 'logs'), { recursive: true });
    symlinkSync('/dev/full', env.path);
    env.state.down = true;
    const edge = await env.start();
    for (let i = 0; i < 3; i++) {
      const answer = await edge.get('api.example.test', `/full-${i}`);
      assert.equal(answer.status, 503, answer.body);
      assert.match(answer.body, /temporarily unavailable: the database refused the connection/);
    }
    const failed = messages(edge.logged, /Could not write held log records/);
    assert.equal(failed.length, 1, 'one line when writes start failing, not one per record');
    assert.equal((failed[0]!.err as { code?: string }).code, 'ENOSPC');
    // A second on, the file is tried again, rewritten whole: the replacement of the link to
    // /dev/full is a file with room, and the records that missed the file are in it now.
    await sleep(1_100);
    assert.equal((await edge.get('api.example.test', '/full-3')).status, 503);
    assert.equal(messages(edge.logged, /Held log records are written to their file again/).length, 1);
    assert.deepEqual(
      fileRecords(env.path).map((held) => held.record.ClientRequestPath),
      ['/full-0', '/full-1', '/full-2', '/full-3'],
    );
    env.state.down = false;
    const lines = await until(env.delivered, (found) => found.length >= 4, 'the records held', 20_000);
    assert.deepEqual(lines.map((line) => line.ClientRequestPath).sort(), ['/full-0', '/full-1', '/full-2', '/full-3']);
    assert.equal(messages(edge.logged, /held log records went to their jobs/)[0]?.heldInMemoryOnly, 3);
  },
);

/** PendingRecords itself on the test's data dir, on the real zone cache and log pipeline. */
function pendingOn(env: Setup, options: { max?: number; maxFileBytes?: number } = {}) {
  const pipeline = env.pipeline();
  const cache = new ZoneConfigCache(env.control, pipeline, systemClock);
  const make = () => {
    const { logger, logged } = capturing();
    const pending = new PendingRecords({
      resolve: (host) => cache.lookup(host),
      emit: (jobs, record, written) => pipeline.emit(jobs, record, written),
      logger,
      path: env.path,
      ...options,
    });
    return { pending, logged };
  };
  return { make };
}

test('bounds: at most `max` records held and kept in the file; the newest come back after a restart', { timeout: 60_000 }, async (t) => {
  const env = await setup(t);
  env.state.down = true;
  const { make } = pendingOn(env, { max: 5 });
  const first = make();
  t.after(() => first.pending.close());
  for (let i = 0; i < 40; i++) {
    first.pending.add(heldRecord(i));
    assert.equal(first.pending.size, Math.min(i + 1, 5));
  }
  assert.equal(first.pending.droppedTotal, 35, 'the oldest 35, counted for /metrics');
  await first.pending.close();

  const second = make();
  t.after(() => second.pending.close());
  assert.equal(second.pending.size, 5);
  assert.deepEqual(
    fileRecords(env.path).map((held) => held.record.ClientRequestPath),
    ['/r35', '/r36', '/r37', '/r38', '/r39'],
    'the file rewritten with the newest, those held',
  );
  assert.equal(messages(second.logged, /held by an earlier run/)[0]?.dropped, 35);
  env.state.down = false;
  const lines = await until(env.delivered, (found) => found.length >= 5, 'the newest five', 20_000);
  await sleep(1_500);
  assert.deepEqual(deliveredPaths(env), ['/r35', '/r36', '/r37', '/r38', '/r39']);
  assert.equal(lines.length, 5);
  assert.equal(messages(second.logged, /held log records went to their jobs/)[0]?.dropped, 35);
  await emptied(env.path);
});

test('bounds: the file never passes its bytes, the records held take at most half of it; past it the oldest go', { timeout: 60_000 }, async (t) => {
  const env = await setup(t);
  env.state.down = true;
  const maxFileBytes = 16 * 1024;
  const { make } = pendingOn(env, { maxFileBytes });
  const first = make();
  t.after(() => first.pending.close());
  const frame = encodeHeld(heldRecord(0, { pad: 1500 })).length;
  const fits = Math.floor(maxFileBytes / 2 / frame);
  t.diagnostic(`entries of ${frame} bytes; ${fits} fit in half of ${maxFileBytes}`);
  assert.ok(fits >= 2 && fits < 10);
  let largest = 0;
  for (let i = 0; i < 60; i++) {
    first.pending.add(heldRecord(i, { pad: 1500 }));
    assert.equal(first.pending.size, Math.min(i + 1, fits));
    largest = Math.max(largest, statSync(env.path).size);
    assert.ok(statSync(env.path).size <= maxFileBytes, `${statSync(env.path).size} bytes after ${i + 1} records`);
  }
  assert.ok(largest > maxFileBytes / 2, 'the file grew past what is held before it was rewritten');
  await first.pending.close();
  const second = make();
  t.after(() => second.pending.close());
  const newest = Array.from({ length: fits }, (_, k) => `/r${60 - fits + k}`);
  assert.deepEqual(
    fileRecords(env.path).map((held) => held.record.ClientRequestPath),
    newest,
  );
  env.state.down = false;
  await until(env.delivered, (found) => found.length >= fits, 'the newest records', 20_000);
  await sleep(1_500);
  assert.deepEqual(deliveredPaths(env), [...newest].sort());
});

test('a drain cut short by the database rewrites the file with what is still held; a restart delivers the rest, each once', { timeout: 60_000 }, async (t) => {
  const env = await setup(t);
  env.state.down = true;
  const { make } = pendingOn(env);
  const first = make();
  t.after(() => first.pending.close());
  const order = [
    heldRecord(1, { host: 'a.example.test' }),
    heldRecord(2, { host: 'a.example.test' }),
    heldRecord(3, { host: 'b.example.test' }),
    heldRecord(4, { host: 'a.example.test' }),
  ];
  for (const record of order) first.pending.add(record);
  // Back, but not for b.example.test: the drain delivers the first two and stops at the third.
  env.state.failing.add('b.example.test');
  env.state.down = false;
  await until(env.delivered, (found) => found.length >= 2, 'the records before the fault', 20_000);
  const left = await until(
    () => fileRecords(env.path).map((held) => held.record.ClientRequestPath),
    (paths) => paths.length === 2,
    'the file rewritten with the records still held',
    5_000,
  );
  assert.deepEqual(left, ['/r3', '/r4']);
  assert.deepEqual(deliveredPaths(env), ['/r1', '/r2']);
  await first.pending.close();

  const second = make();
  t.after(() => second.pending.close());
  assert.equal(second.pending.size, 2);
  env.state.failing.clear();
  await until(env.delivered, (found) => found.length >= 4, 'every record', 20_000);
  await sleep(1_500);
  assert.deepEqual(deliveredPaths(env), ['/r1', '/r2', '/r3', '/r4'], 'each once');
  assert.equal(statSync(env.path).size, 0);
});

test('records added while earlier ones are handed on are kept by the file', { timeout: 60_000 }, async (t) => {
  const env = await setup(t);
  env.state.down = true;
  const { make } = pendingOn(env);
  const first = make();
  t.after(() => first.pending.close());
  first.pending.add(heldRecord(1));
  env.state.down = false;
  // Held while the first drain runs: either in that drain or the next, never lost from the file before it is spooled.
  await sleep(1_000);
  for (let i = 2; i <= 30; i++) {
    first.pending.add(heldRecord(i));
    await sleep(2);
  }
  await until(env.delivered, (found) => found.length >= 30, 'every record', 20_000);
  await emptied(env.path);
  await sleep(500);
  assert.equal(env.delivered().length, 30, 'each once');
});
