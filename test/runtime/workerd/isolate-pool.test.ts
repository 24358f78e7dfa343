/**
 * Scripts as isolates in one workerd process per account (isolate-pool.ts, isolate-process.ts):
 * an account's scripts share its process and another account has its own; a new version replaces
 * one script's isolate and leaves the others running; what a script prints, its vars, secrets,
 * buckets and caches stay its own; and each account gets its share: scripts loaded, requests in
 * flight, resident memory, and a place among the instance's processes.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { pino } from 'pino';
import { parseScriptConfig } from '../../../src/runtime/script-config.ts';
import { IsolatePool, POOL_LIMIT_DEFAULTS, type PoolLimits, type PooledScript } from '../../../src/runtime/workerd/isolate-pool.ts';
import { accountStore } from '../../../src/store/engine/account-store.ts';
import { openStoreEngine } from '../../../src/store/engine/open-store-engine.ts';
import { engineBlobs } from '../../../src/store/segment-writer.ts';
import { onTestEnd } from '../../helpers/cleanup.ts';
import type { LogRecord } from '../../helpers/script-host.ts';
import { workerdProcesses } from '../../helpers/workerd-processes.ts';

const A = 'a'.repeat(32);
const B = 'b'.repeat(32);

interface Pool {
  pool: IsolatePool;
  logs: LogRecord[];
  /** Registers `source` as `name` in `account`'s process; its requests are served at `${url}/<name>/...`. */
  open(account: string, name: string, source: string, config?: Record<string, unknown>): Promise<PooledScript>;
  url: string;
}

/** A pool and a server that routes `/<script>/...` to the script of that name; both stopped when the test ends. */
async function startPool(t: TestContext, limits: PoolLimits = POOL_LIMIT_DEFAULTS, store?: { dataDir: string }): Promise<Pool> {
  const dir = mkdtempSync(join(tmpdir(), 'edgeport-pool-'));
  const logs: LogRecord[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => logs.push(JSON.parse(line) as LogRecord) });
  const pool = new IsolatePool({ logger, limits });
  const engine = store ? await openStoreEngine({ dataDir: store.dataDir, recover: true }) : undefined;
  const scripts = new Map<string, PooledScript>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const name = (req.url ?? '/').split('/')[1]!;
    const script = scripts.get(name);
    if (!script) return void res.writeHead(404).end('no such script');
    script.handle(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestEnd(t, async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await pool.close();
    await engine?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    pool,
    logs,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async open(account, name, source, config = {}) {
      writeFileSync(join(dir, `${name}.mjs`), source);
      const { vars = [], ...scriptKeys } = config as { vars?: Array<{ name: string; value: string }> };
      const script = parseScriptConfig({ name, main: `${name}.mjs`, compatibility_date: '2025-01-01', ...scriptKeys }, { baseDir: dir });
      const view = engine && accountStore(engine, account);
      if (view) for (const { bucketName } of script.storeBuckets) await view.ensureBucket(bucketName);
      const opened = await pool.open(
        account,
        { name: `account ${account}`, accountId: account },
        {
          script,
          accountId: account,
          source: {
            mainModule: `${name}.mjs`,
            modules: [{ name: `${name}.mjs`, kind: 'esModule', content: new TextEncoder().encode(source) }],
            vars: vars.map((v) => ({ ...v, kind: 'text' as const })),
          },
          ...(view && script.storeBuckets.length > 0 ? { store: { engine: view, blobs: engineBlobs(view) } } : {}),
        },
      );
      scripts.set(name, opened);
      return opened;
    },
  };
}

const COUNTER = `let count = 0;
export default {
  async fetch(request) {
    const { pathname } = new URL(request.url);
    if (pathname.endsWith('/hold')) await new Promise((resolve) => setTimeout(resolve, 1500));
    if (pathname.endsWith('/spin')) { while (true) {} }
    return new Response(String(++count));
  },
};`;

async function text(url: string): Promise<string> {
  return (await fetch(url)).text();
}

test(
  "an account's scripts share one workerd process, another account has its own; a process stops with its account's last script",
  { timeout: 60_000 },
  async (t) => {
    const { open, url, pool } = await startPool(t);
    const before = workerdProcesses().length;
    const one = await open(A, 'one', COUNTER);
    const two = await open(A, 'two', COUNTER);
    await open(B, 'three', COUNTER);
    assert.equal(await text(`${url}/one/`), '1');
    assert.equal(await text(`${url}/two/`), '1');
    assert.equal(await text(`${url}/three/`), '1');
    assert.equal(workerdProcesses().length - before, 2, 'one process per account');
    assert.deepEqual({ ...pool.stats(), refused: undefined }, { processes: 2, scripts: 3, isolates: 3, inflight: 0, refused: undefined });
    await one.close();
    assert.equal(workerdProcesses().length - before, 2, 'the account still has a script');
    await two.close();
    assert.equal(workerdProcesses().length - before, 1, "the account's last script took its process with it");
  },
);

test("a new version of one script replaces its isolate only: the account's process and its other scripts keep running", { timeout: 60_000 }, async (t) => {
  const { open, url } = await startPool(t);
  const before = new Set(workerdProcesses());
  await open(A, 'steady', COUNTER);
  const old = await open(A, 'changing', COUNTER);
  assert.equal(await text(`${url}/steady/`), '1');
  assert.equal(await text(`${url}/changing/`), '1');
  const [pid] = workerdProcesses().filter((p) => !before.has(p));
  await open(A, 'changing', COUNTER.replace('String(++count)', "'v2 ' + String(++count)"));
  await old.close();
  assert.equal(await text(`${url}/changing/`), 'v2 1', 'the new version, in a fresh isolate');
  assert.equal(await text(`${url}/steady/`), '2', 'the other script kept its isolate (and its state)');
  assert.deepEqual(
    workerdProcesses().filter((p) => !before.has(p)),
    [pid],
    'the same process',
  );
});

test('what a script prints, its vars, buckets and caches are its own; another script of the account reaches none of them', { timeout: 60_000 }, async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'edgeport-pool-data-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const { open, url, logs } = await startPool(t, POOL_LIMIT_DEFAULTS, { dataDir });
  const PROBE = `import { env as moduleEnv } from 'cloudflare:workers';
export default {
  async fetch(request, env) {
    const { pathname, searchParams } = new URL(request.url);
    const n = Number(searchParams.get('n') ?? 1);
    if (pathname.endsWith('/flood')) for (let i = 0; i < n; i++) console.log('flood', i, 'x'.repeat(1000));
    if (pathname.endsWith('/say')) console.log('said', searchParams.get('what'));
    if (pathname.endsWith('/put')) { await env.OWN.put('k', 'mine'); await caches.default.put('https://cache.test/k', new Response('cached', { headers: { 'cache-control': 'max-age=60' } })); }
    if (pathname.endsWith('/look')) {
      const cached = await caches.default.match('https://cache.test/k');
      return Response.json({ env: Object.keys(env).sort(), moduleEnv: Object.keys(moduleEnv).sort(), secret: env.SECRET ?? null, own: await (await env.OWN.get('k'))?.text() ?? null, cached: cached ? await cached.text() : null });
    }
    return new Response('ok');
  },
};`;
  await open(A, 'first', PROBE, { vars: [{ name: 'SECRET', value: 'first-only' }], store_buckets: [{ binding: 'OWN', bucket_name: 'first-bucket' }] });
  await open(A, 'second', PROBE, { store_buckets: [{ binding: 'OWN', bucket_name: 'second-bucket' }] });
  assert.equal(await text(`${url}/first/put`), 'ok');
  assert.deepEqual(await (await fetch(`${url}/first/look`)).json(), {
    env: ['OWN', 'SECRET'],
    moduleEnv: ['OWN', 'SECRET'],
    secret: 'first-only',
    own: 'mine',
    cached: 'cached',
  });
  assert.deepEqual(
    await (await fetch(`${url}/second/look`)).json(),
    { env: ['OWN'], moduleEnv: ['OWN'], secret: null, own: null, cached: null },
    "the second script sees no secret, bucket or cache of the first, not even through cloudflare:workers' env",
  );

  // One script floods its log budget; the other's lines are all logged beside it.
  assert.equal(await text(`${url}/first/flood?n=5000`), 'ok');
  for (let i = 0; i < 20; i++) assert.equal(await text(`${url}/second/say?what=${i}`), 'ok');
  const said = () => logs.filter((record) => record.script === 'second' && /^said \d+$/.test(String(record.output))).length;
  for (const deadline = Date.now() + 10_000; said() < 20;) {
    assert.ok(Date.now() < deadline, `the second script's lines were logged: ${said()} of 20`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const flooded = logs.filter((record) => record.script === 'first' && String(record.output).startsWith('flood ')).length;
  t.diagnostic(`the flooding script: ${flooded} of 5000 lines logged (its own budget); the other: ${said()} of 20`);
  assert.ok(flooded < 5000, 'the flood went over its own budget');
  assert.ok(
    logs.every((record) => record.script !== 'second' || !String(record.output).startsWith('flood')),
    "no line of the flood is counted as the other script's",
  );
});

test(
  "an account's share: scripts loaded at once (the idle one unloaded, all busy: 429) and requests in flight (a few wait, the rest 429)",
  { timeout: 60_000 },
  async (t) => {
    const limits: PoolLimits = { maxProcesses: 8, account: { maxIsolates: 2, maxRequests: 3, queueMs: 5_000, memoryBytes: 1024 ** 3 } };
    const { open, url, pool } = await startPool(t, limits);
    await open(A, 'one', COUNTER);
    await open(A, 'two', COUNTER);
    assert.equal(await text(`${url}/one/`), '1');
    await open(A, 'three', COUNTER);
    assert.equal(pool.stats().isolates, 2, 'three scripts, two loaded');
    assert.equal(await text(`${url}/two/`), '1', 'the idle one used longest ago was unloaded: a fresh isolate');
    // Two held (both loaded scripts busy): a third script cannot load, and answers 429.
    const held = [fetch(`${url}/one/hold`), fetch(`${url}/two/hold`)];
    await new Promise((resolve) => setTimeout(resolve, 300));
    const refused = await fetch(`${url}/three/`);
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get('retry-after'), '1');
    assert.equal(await refused.text(), "The script's account has as many scripts running as it may, all of them busy; retry shortly.\n");
    for (const answer of await Promise.all(held)) assert.equal(answer.status, 200);

    // Requests in flight: three run, three wait for a place, the seventh is refused at once.
    const started = performance.now();
    const seven = await Promise.all(Array.from({ length: 7 }, () => fetch(`${url}/one/hold`)));
    const statuses = seven.map((answer) => answer.status).sort();
    t.diagnostic(`7 requests with 3 places and 3 waiting: ${statuses.join(', ')} in ${Math.round(performance.now() - started)} ms`);
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 200, 429]);
    const tooMany = seven.find((answer) => answer.status === 429)!;
    assert.deepEqual(
      [tooMany.headers.get('retry-after'), await tooMany.text()],
      ['1', "The script's account has as many requests in flight as it may; retry shortly.\n"],
    );
    assert.ok(pool.stats().refused['account-requests'] >= 1);
  },
);

test(
  "a script's endless loop cuts off its own account's process only; the instance's cap on processes stops the idle one first",
  { timeout: 90_000 },
  async (t) => {
    const limits: PoolLimits = { maxProcesses: 2, account: { ...POOL_LIMIT_DEFAULTS.account } };
    const { open, url, pool } = await startPool(t, limits);
    await open(A, 'spinner', COUNTER, { limits: { cpu_ms: 1_000 } });
    await open(B, 'neighbour', COUNTER);
    const spinning = fetch(`${url}/spinner/spin`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const latencies: number[] = [];
    while (latencies.length < 10) {
      const started = performance.now();
      assert.equal((await fetch(`${url}/neighbour/`)).status, 200);
      latencies.push(performance.now() - started);
    }
    const cut = await spinning;
    assert.equal(`${cut.status} ${await cut.text()}`, '503 The script exceeded its CPU time limit.\n');
    t.diagnostic(`another account's script while one spun: slowest of 10 answers ${Math.round(Math.max(...latencies))} ms`);
    assert.ok(Math.max(...latencies) < 900, `${Math.round(Math.max(...latencies))} ms`);
    assert.equal((await fetch(`${url}/spinner/`)).status, 200, 'the account is served again by a new process');

    // Two processes run (the cap): a third account's script takes the place of the one idle longest (the neighbour's).
    const C = 'c'.repeat(32);
    await open(C, 'newcomer', COUNTER);
    assert.equal(pool.stats().processes, 2);
    assert.equal(await text(`${url}/newcomer/`), '1');
    assert.equal(await text(`${url}/spinner/`), '2', "the spinner's process kept running");
    // Both running processes busy: the stopped account's next request has no place, and is told to come back.
    const busy = [fetch(`${url}/newcomer/hold`), fetch(`${url}/spinner/hold`)];
    await new Promise((resolve) => setTimeout(resolve, 300));
    const stopped = await fetch(`${url}/neighbour/`);
    assert.deepEqual([stopped.status, stopped.headers.get('retry-after'), await stopped.text()], [503, '1', 'The script is not running.\n']);
    for (const answer of await Promise.all(busy)) assert.equal(answer.status, 200);
    assert.equal(await text(`${url}/neighbour/`), '1', 'with a place free again, its process starts (a fresh isolate)');
  },
);

test("an account's process past its resident memory limit is replaced, another account's is not", { timeout: 60_000 }, async (t) => {
  const limits: PoolLimits = { maxProcesses: 8, account: { ...POOL_LIMIT_DEFAULTS.account, memoryBytes: 96 * 1024 * 1024 } };
  const { open, url, logs } = await startPool(t, limits);
  const HOARDER = `globalThis.kept = [];
export default {
  async fetch(request) {
    if (new URL(request.url).pathname.endsWith('/hoard')) {
      for (let i = 0; i < 60; i++) globalThis.kept.push(new Uint8Array(1024 * 1024).fill(i));
      await new Promise((resolve) => setTimeout(resolve, 5_000));
    }
    return new Response('kept ' + globalThis.kept.length);
  },
};`;
  await open(A, 'hoarder', HOARDER);
  await open(B, 'modest', COUNTER);
  const hoarding = await fetch(`${url}/hoarder/hoard`);
  assert.equal(`${hoarding.status} ${await hoarding.text()}`, '503 The script exceeded its memory limit.\n');
  assert.ok(
    logs.some((record) => record.failure === 'memory' && /resident memory/.test(String(record.detail))),
    'the cut-off is logged with why',
  );
  assert.equal(await text(`${url}/hoarder/`), 'kept 0', 'a new process serves the account');
  assert.equal(await text(`${url}/modest/`), '1', "the other account's process was never touched");
});

test(
  "the account's process runs workerd --experimental (for the Worker Loader), and a script's experimental flags stay refused",
  { timeout: 60_000 },
  async (t) => {
    const { open, url } = await startPool(t);
    await open(A, 'plain', COUNTER);
    for (const flag of ['experimental', 'unsafe_module']) {
      await assert.rejects(open(A, `flagged-${flag}`, COUNTER, { compatibility_flags: [flag] }), (error: unknown) => {
        assert.equal((error as { code?: string }).code, 'RUNTIME_SCRIPT_START_FAILED');
        assert.match((error as Error).message, new RegExp(`The compatibility flag ${flag} is experimental`));
        return true;
      });
    }
    assert.equal(await text(`${url}/plain/`), '1', "the account's other script goes on");
  },
);
