/**
 * GraphQL alias fan-out against the real `edgeport start`, attacker and honest client side by side.
 *
 * The attacker's account has 100 buckets. It sends four ~64 KiB queries at once, each 493 aliases
 * of `r2StorageAdaptiveGroups(limit: 10000)`, round after round for 3 s (from a process of its
 * own), and four of the largest queries the cost model allows (20 nodes of 5,000 rows); meanwhile
 * another account's zone is asked for a page through the edge every 25 ms. Before, one such query
 * held the event loop 2.5 s and four held the honest request 13 s. Now each fan-out query is
 * refused before it runs (400, GRAPHQL_COST_EXCEEDED; once the account's budget of 300 queries is
 * spent, 429; 503 when the listener sheds load), the allowed ones are answered (at most two at a
 * time, others 429), and the honest requests are answered within 200 ms (see HONEST_BOUND_MS).
 * Every figure is printed.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import { setPriority } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { spawnNode, stopChild } from '../helpers/child-processes.ts';
import { startEdgeport } from '../helpers/edgeport-server.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { sdkFor, viaEdge } from '../helpers/workers-upload.ts';
import { listen } from '../helpers/listen.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FLOOD = fileURLToPath(new URL('../helpers/graphql-fanout-flood.ts', import.meta.url));
const ADMIN = { EDGEPORT_ADMIN_EMAIL: 'operator@example.test', EDGEPORT_ADMIN_KEY: 'fanout-operator-key-0123' };
/**
 * The issue's figure for the honest client's request: 9 in 10 within it (or within twice the
 * slowest request before the attack), the slowest within SLOWEST_BOUND_MS. On this shared 2-core
 * machine at load 12, with the server using ~3 ms of CPU per refused 64 KiB query, single requests
 * took up to 220 ms now and then while most took 10-60 ms; before the fix, 13 s.
 */
const HONEST_BOUND_MS = 200;
const SLOWEST_BOUND_MS = 1_000;
const ATTACK_MS = 3_000;

async function honestOrigin(t: TestContext): Promise<number> {
  const server = createServer((req, res) => {
    req.resume();
    res.end('honest');
  });
  const port = await listen(server, t);
  return port;
}

interface FloodResult {
  length: number;
  rounds: number;
  first: Sent[];
  outcomes: Record<string, { count: number; slowestMs: number }>;
}

/**
 * Runs graphql-fanout-flood.ts with `args` in a process of its own at nice 5 (as flood-process.ts
 * runs its flood: the attacker's CPU is not the server's, but here both share one small machine
 * with the measuring client); resolves with its result once it exits, killed when the test ends.
 */
function fanOutFlood(t: TestContext, args: readonly string[]): Promise<FloodResult> {
  const child = spawnNode(['--import', 'tsx', FLOOD, ...args]);
  setPriority(child.pid!, 5);
  t.after(() => stopChild(child));
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => {
      if (code === 0) resolve(JSON.parse(stdout) as FloodResult);
      else reject(new Error(`the flood exited with ${code}: ${stderr}`));
    });
  });
}

/** The largest query the limits allow: 20 nodes of 5,000 rows. */
function allowedQuery(account: string): string {
  const nodes = Array.from(
    { length: 20 },
    (_, i) => `n${i}: r2StorageAdaptiveGroups(limit: 5000) { max { objectCount payloadSize metadataSize uploadCount } dimensions { bucketName storageClass } }`,
  );
  return `{ viewer { accounts(filter: {accountTag: "${account}"}) { ${nodes.join(' ')} } } }`;
}

interface Sent {
  status: number;
  code: string | undefined;
  ms: number;
}

async function send(graphqlUrl: string, as: { email: string; key: string }, query: string): Promise<Sent> {
  const started = performance.now();
  const response = await fetch(graphqlUrl, { method: 'POST', headers: { 'x-auth-email': as.email, 'x-auth-key': as.key }, body: JSON.stringify({ query }) });
  // GraphQL's refusals carry extensions.code; the listener's load shedding is the API's envelope (code 10100).
  const body = (await response.json()) as { errors?: Array<{ code?: number; extensions?: { code?: string } }> | null };
  const first = body.errors?.[0];
  return {
    status: response.status,
    code: first?.extensions?.code ?? (first?.code === undefined ? undefined : String(first.code)),
    ms: performance.now() - started,
  };
}

/** The listener's answer when its event loop runs behind (LISTENER_OVERLOADED): load shedding, which answers everyone alike. */
const SHED = /"code":10100/;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One page of `host` through the edge: how long the client waited for it. A request the listener
 * shed (its event loop was behind, whoever caused it: on this shared machine, other work too) is
 * sent again 25 ms later, and counted in `sheds`; the wait covers every attempt.
 */
async function honestPage(edgeUrl: string, host: string, sheds: { count: number }): Promise<number> {
  const started = performance.now();
  for (;;) {
    const answer = await viaEdge(edgeUrl, host);
    if (answer.status === 503 && SHED.test(answer.body)) {
      sheds.count++;
      await sleep(25);
      continue;
    }
    assert.deepEqual(answer, { status: 200, body: 'honest' });
    return performance.now() - started;
  }
}

/** Asks `host` through the edge every 25 ms until `until` settles: each page's wait. */
async function honestWhile(edgeUrl: string, host: string, until: Promise<unknown>, sheds: { count: number }): Promise<number[]> {
  let done = false;
  void until.finally(() => {
    done = true;
  });
  const latencies: number[] = [];
  while (!done) {
    latencies.push(await honestPage(edgeUrl, host, sheds));
    await sleep(25);
  }
  return latencies;
}

/** `work`, again after the Retry-After delay while the listener sheds it (setting up on a busy machine). */
async function unshed<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt === 20 || !SHED.test(String(error))) throw error;
      await sleep(200);
    }
  }
}

/** Told to come back: the account's queries in progress or its budget (429), or the listener shed it (503 / 10100). */
const refusedAsItShould = (s: Sent) => (s.status === 429 && s.code === 'GRAPHQL_RATE_LIMITED') || (s.status === 503 && s.code === '10100');

const summary = (sent: Sent[]) => {
  const byOutcome = new Map<string, number[]>();
  for (const s of sent) byOutcome.set(`${s.status} ${s.code ?? 'data'}`, [...(byOutcome.get(`${s.status} ${s.code ?? 'data'}`) ?? []), s.ms]);
  return [...byOutcome].map(([outcome, ms]) => `${ms.length} × ${outcome} (slowest ${Math.max(...ms).toFixed(0)} ms)`).join(', ');
};

test('alias fan-out from one account: refused before it runs while another zone is served through the edge', { timeout: 240_000 }, async (t) => {
  const dataDir = join(tempDir(t), 'data');
  const originPort = await honestOrigin(t);
  const server = await startEdgeport({ owner: t, dataDir, env: ADMIN });
  const { stdout } = await promisify(execFile)(process.execPath, [
    join(ROOT, 'bin/edgeport.js'),
    'accounts',
    'create',
    'mallory@example.test',
    '--data-dir',
    dataDir,
  ]);
  const malloryKey = /X-Auth-Key: +(\S+)/.exec(stdout)?.[1];
  assert.ok(malloryKey, stdout);
  const mallory = { email: 'mallory@example.test', key: malloryKey };
  const apiUrl = server.urls['management API']!;
  const edgeUrl = server.urls.edge!;
  const graphqlUrl = `${apiUrl}/graphql`;

  // The honest client: the operator's zone, served by its own origin through the edge.
  const operator = sdkFor(apiUrl, ADMIN.EDGEPORT_ADMIN_EMAIL, ADMIN.EDGEPORT_ADMIN_KEY);
  const [operatorAccount] = (await operator.accounts.list()).result;
  await unshed(() =>
    operator.zones.create({ account: { id: operatorAccount!.id }, name: 'honest.test', origin: `http://127.0.0.1:${originPort}` } as Parameters<
      typeof operator.zones.create
    >[0]),
  );
  // The attacker: 100 buckets.
  const attacker = sdkFor(apiUrl, mallory.email, mallory.key);
  const [malloryAccount] = (await attacker.accounts.list()).result;
  const account = malloryAccount!.id;
  for (let i = 0; i < 100; i++) await unshed(() => attacker.r2.buckets.create({ account_id: account, name: `mallory-${String(i).padStart(3, '0')}` }));

  const sheds = { count: 0 };
  const quiet: number[] = [];
  for (let i = 0; i < 10; i++) quiet.push(await honestPage(edgeUrl, 'honest.test', sheds));
  const bound = Math.max(HONEST_BOUND_MS, 2 * Math.max(...quiet));

  // A body the schema refuses is a 400 in GraphQL's shape, not a 200.
  const notAQuery = await fetch(graphqlUrl, { method: 'POST', headers: { 'x-auth-email': mallory.email, 'x-auth-key': mallory.key }, body: '{"query": 5}' });
  assert.equal(notAQuery.status, 400);
  assert.deepEqual(Object.keys((await notAQuery.json()) as object), ['data', 'errors']);

  // Four of the largest allowed queries at once: two run, two are told to wait.
  const allowedRun = Promise.all(Array.from({ length: 4 }, () => send(graphqlUrl, mallory, allowedQuery(account))));
  const duringAllowed = await honestWhile(edgeUrl, 'honest.test', allowedRun, sheds);
  const allowed = await allowedRun;
  console.log(`largest allowed queries, 4 at once: ${summary(allowed)}`);
  assert.ok(
    allowed.every((s) => (s.status === 200 && s.code === undefined) || refusedAsItShould(s)),
    JSON.stringify(allowed),
  );
  assert.ok(allowed.some((s) => s.status === 200));

  // The fan-out: four ~64 KiB queries of 493 aliases at once, round after round, from a process of its own.
  const attack = fanOutFlood(t, [graphqlUrl, mallory.email, mallory.key, account, '493', '4', String(ATTACK_MS)]);
  const duringAttack = await honestWhile(edgeUrl, 'honest.test', attack, sheds);
  const flood = await attack;
  console.log(
    `fan-out query: ${flood.length} characters, 493 aliases; first round of 4 at once: ${flood.first.map((s) => `${s.status} ${s.code} in ${s.ms.toFixed(0)} ms`).join(', ')}`,
  );
  console.log(
    `fan-out, ${flood.rounds} rounds of 4 in ${ATTACK_MS} ms: ${Object.entries(flood.outcomes)
      .map(([outcome, { count, slowestMs }]) => `${count} × ${outcome} (slowest ${slowestMs} ms)`)
      .join(', ')}`,
  );
  for (const outcome of Object.keys(flood.outcomes))
    assert.ok(['400 GRAPHQL_COST_EXCEEDED', '429 GRAPHQL_RATE_LIMITED', '503 10100'].includes(outcome), outcome);
  assert.ok(
    flood.first.every((s) => s.status === 400 && s.code === 'GRAPHQL_COST_EXCEEDED'),
    JSON.stringify(flood.first),
  );
  assert.ok(flood.rounds >= 5, 'the attacker kept sending');

  const slowest = (ms: number[]) => Math.max(...ms).toFixed(0);
  const median = (ms: number[]) => [...ms].sort((a, b) => a - b)[Math.floor(ms.length / 2)]!.toFixed(0);
  console.log(
    `honest request through the edge: quiet slowest ${slowest(quiet)} ms; during the allowed queries ${duringAllowed.length} requests, slowest ${slowest(duringAllowed)} ms; ` +
      `during the fan-out ${duringAttack.length} requests, median ${median(duringAttack)} ms, slowest ${slowest(duringAttack)} ms (bound ${bound.toFixed(0)} ms); shed and sent again: ${sheds.count}`,
  );
  assert.ok(duringAttack.length >= 10, 'the honest client kept asking through the attack');
  const during = [...duringAllowed, ...duringAttack].sort((a, b) => a - b);
  const p90 = during[Math.ceil(0.9 * during.length) - 1]!;
  assert.ok(p90 < bound, `9 in 10 honest requests within ${p90.toFixed(0)} ms (bound ${bound.toFixed(0)} ms)`);
  assert.ok(during.at(-1)! < SLOWEST_BOUND_MS, `the slowest honest request took ${during.at(-1)!.toFixed(0)} ms`);
});
