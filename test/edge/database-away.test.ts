/**
 * The edge while its database is away (every read of the control store fails with a BackendFault):
 * a zone it has served keeps being served from its last known config, and logged; a host it has
 * never looked up is answered 503 with Retry-After at once, and its record is held until the
 * database answers, then shipped. Every request makes its log line.
 */
import assert from 'node:assert/strict';
import { createServer, request, type IncomingHttpHeaders } from 'node:http';
import { test } from 'node:test';
import { systemClock } from '../../src/core/clock.ts';
import { backendUnavailable } from '../../src/core/errors/backend-fault.ts';
import { silentLogger } from '../../src/core/log.ts';
import type { ControlStore } from '../../src/db/control-store.ts';
import { createEdgeService } from '../../src/edge/index.ts';
import { FileRoots } from '../../src/logs/index.ts';
import { LogPipeline } from '../../src/logs/log-pipeline.ts';
import { openStoreEngine } from '../../src/store/engine/open-store-engine.ts';
import { openTestControlStore } from '../helpers/control-store.ts';
import { fileLines } from '../helpers/delivered-logs.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { jobFields, ndjsonOutput } from '../helpers/log-fixtures.ts';
import { listen } from '../helpers/listen.ts';

const ZONE = 'e'.repeat(32);
const OUTPUT = ndjsonOutput(['RayID', 'ClientRequestHost', 'EdgeResponseStatus']);

/** `store` with every call failing as a database that is away while `state.down`. */
function switchable(store: ControlStore, state: { down: boolean }): ControlStore {
  return new Proxy(store, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) =>
        state.down && property !== 'onZoneChange'
          ? Promise.reject(backendUnavailable('database', 'refused the connection'))
          : (value as (...a: unknown[]) => unknown).apply(target, args);
    },
  });
}

test(
  'the database away: known zones served from their last config, unknown hosts 503 at once; every request logged once it is back',
  { timeout: 60_000 },
  async (t) => {
    const dataDir = tempDir(t);
    const out = tempDir(t);
    const stops: Array<() => Promise<void>> = [];
    t.after(async () => {
      for (const stop of stops) await stop();
    });
    const engine = await openStoreEngine({ dataDir });
    const store = await openTestControlStore(t, { dataDir, clock: systemClock, database: undefined });
    const now = Date.now();
    const origin = await listen(
      createServer((_req, res) => res.end('from origin')),
      t,
    );
    await store.createAccount({ id: 'a'.repeat(32), email: 'o@example.test', name: 'o', keyHash: 'x', created: now });
    await store.createZone({
      id: ZONE,
      accountId: 'a'.repeat(32),
      name: 'example.test',
      origin: `http://127.0.0.1:${origin}`,
      paused: false,
      created: now,
      modified: now,
    });
    await store.createJob(ZONE, () => ({ ...jobFields(ZONE, `file://${out}`, OUTPUT, now), name: 'all' }));
    const state = { down: false };
    const control = switchable(store, state);
    const pipeline = new LogPipeline({
      dataDir,
      jobs: control,
      engine,
      clock: systemClock,
      logger: silentLogger,
      maxIntervalMs: 50,
      fileRoots: new FileRoots({ roots: [out], dataDir }),
    });
    pipeline.start();
    const edge = createEdgeService({ zones: control, pipeline, clock: systemClock, logger: silentLogger });
    const port = await listen(createServer(edge.handler), t);
    stops.push(
      () => edge.close(),
      () => pipeline.close(),
      () => engine.close(),
    );
    const get = (host: string) =>
      new Promise<{ status: number; headers: IncomingHttpHeaders; body: string }>((resolve, reject) => {
        request({ host: '127.0.0.1', port, path: '/', headers: { host } }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            body += chunk;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        })
          .on('error', reject)
          .end();
      });

    const first = await get('www.example.test');
    assert.equal(first.status, 200, first.body);
    state.down = true;
    // Past the cache's second: every read now fails.
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    const known = await get('www.example.test');
    assert.equal(known.status, 200, 'a zone it served keeps being served');
    assert.equal(known.body, 'from origin');
    const started = performance.now();
    const unknown = await get('api.example.test');
    const ms = performance.now() - started;
    assert.equal(unknown.status, 503);
    assert.equal(unknown.headers['retry-after'], '1');
    assert.match(
      unknown.body,
      /^error 503: edgeport is temporarily unavailable: the database refused the connection\. Retry after 1 s\.\nRay ID: [0-9a-f]{16}\n$/,
    );
    t.diagnostic(`503 for a host never looked up, after ${Math.round(ms)} ms`);
    assert.ok(ms < 5_000, `${Math.round(ms)} ms`);

    state.down = false;
    const expected = [
      ['www.example.test', 200],
      ['www.example.test', 200],
      ['api.example.test', 503],
    ];
    let lines: Array<Record<string, unknown>> = [];
    for (let waited = 0; waited < 15_000; waited += 100) {
      lines = fileLines(out);
      if (lines.length >= expected.length) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.deepEqual(lines.map((l) => [l.ClientRequestHost, l.EdgeResponseStatus]).sort(), expected.sort(), 'every request made its line, once');
  },
);
