/**
 * The bucket binding inside workerd. Every case of test/store/binding/*.case.ts runs in a script
 * on workerd against an `env` binding of its own, on compatibility dates 2022-01-01, 2024-01-01 and
 * the newest (today, or the newest the installed workerd supports), each with and without
 * nodejs_compat: one workerd per combination, one request per case file; the matrix of what passed
 * is printed. Then what takes real requests: bodies streaming through the binding both ways, a
 * chunked request body refused, and list's `include` under the store_list_honor_include flag.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { test, type TestContext } from 'node:test';
import { listHonorsInclude } from '../../../src/store/binding/index.ts';
import { startTestHost } from '../../helpers/script-host.ts';
import { CASE_FILES } from '../../store/binding/all-cases.ts';
import { NEWEST_DATE } from '../../store/binding/in-process.ts';

const CASES_DIR = new URL('../../store/binding/', import.meta.url);

/** Every case in a fixed order: case i binds `B<i>`, a bucket of its own. */
const CASES = Object.entries(CASE_FILES).flatMap(([file, cases]) => Object.keys(cases).map((name) => ({ file, name })));

interface Combination {
  date: string;
  nodejsCompat: boolean;
  flags: string[];
}

/**
 * nodejs_compat off and on, on each date. From 2026-08-04 workerd turns it on by default; turning
 * it off then takes no_nodejs_compat and no_nodejs_compat_v2 (the second removes Node's globals).
 */
function combinations(): Combination[] {
  return ['2022-01-01', '2024-01-01', NEWEST_DATE].flatMap((date) => {
    const byDefault = date >= '2026-08-04';
    return [
      { date, nodejsCompat: false, flags: byDefault ? ['no_nodejs_compat', 'no_nodejs_compat_v2'] : [] },
      { date, nodejsCompat: true, flags: byDefault ? [] : ['nodejs_compat'] },
    ];
  });
}

/** The script: runs the cases a request names, each on its binding, and answers what each threw. */
const RUNNER = `
import { CASE_FILES } from ${JSON.stringify(new URL('all-cases.ts', CASES_DIR).pathname)};
const ALGORITHMS = { md5: 'MD5', sha1: 'SHA-1', sha256: 'SHA-256', sha384: 'SHA-384', sha512: 'SHA-512' };
async function digest(algorithm, data) {
  const bytes = typeof data === 'string' ? new TextEncoder().encode(data) : data;
  const hash = new Uint8Array(await crypto.subtle.digest(ALGORITHMS[algorithm], bytes));
  return [...hash].map((byte) => byte.toString(16).padStart(2, '0')).join('');
}
export default {
  async fetch(request, env) {
    if (request.method === 'GET') {
      return Response.json({ Buffer: typeof Buffer, process: typeof process, setImmediate: typeof setImmediate });
    }
    const { file, cases, listHonorsInclude } = await request.json();
    const results = [];
    for (const { name, binding } of cases) {
      try {
        await CASE_FILES[file][name]({ bucket: env[binding], runtime: 'workerd', listHonorsInclude, digest });
        results.push({ name, error: null });
      } catch (error) {
        results.push({ name, error: error instanceof Error ? String(error.stack ?? error) : String(error) });
      }
    }
    return Response.json(results);
  },
};
`;

interface CombinationResult {
  combination: Combination;
  /** What `typeof` says of Node's globals in the script. */
  globals: Record<string, string>;
  /** By `file: name`: the case's error, or null when it passed. */
  outcomes: Map<string, string | null>;
}

const caseKey = (file: string, name: string) => `${file}: ${name}`;
const label = ({ date, flags }: Combination) => `${date} [${flags.join(', ')}]`;

async function runCombination(t: TestContext, combination: Combination): Promise<CombinationResult> {
  const host = await startTestHost(t, RUNNER, {
    config: {
      compatibility_date: combination.date,
      compatibility_flags: combination.flags,
      store_buckets: CASES.map((_, i) => ({ binding: `B${i}`, bucket_name: `case-${i}` })),
    },
  });
  try {
    const globals = (await (await fetch(host.url)).json()) as Record<string, string>;
    const outcomes = new Map<string, string | null>();
    const honors = listHonorsInclude(combination.date, combination.flags);
    for (const file of Object.keys(CASE_FILES)) {
      const cases = CASES.flatMap((c, i) => (c.file === file ? [{ name: c.name, binding: `B${i}` }] : []));
      const logged = host.logs.length;
      const res = await fetch(`${host.url}/run`, { method: 'POST', body: JSON.stringify({ file, cases, listHonorsInclude: honors }) });
      const text = await res.text();
      if (res.status !== 200) {
        // The script itself failed (a case's error escaped, or workerd gave up): what the server logged says why.
        const logs = host.logs
          .slice(logged)
          .filter((record) => record.level >= 40)
          .map((record) => JSON.stringify(record))
          .join('\n');
        for (const { name } of cases) outcomes.set(caseKey(file, name), `the script answered ${res.status}: ${text}\n${logs}`);
        continue;
      }
      for (const { name, error } of JSON.parse(text) as Array<{ name: string; error: string | null }>) outcomes.set(caseKey(file, name), error);
    }
    return { combination, globals, outcomes };
  } finally {
    await host.stop();
  }
}

/** Runs `work` on each item, at most `limit` at a time (two workerd processes on a shared 2-core machine). */
async function eachLimited<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await work(items[index]!);
      }
    }),
  );
  return results;
}

function matrix(results: CombinationResult[]): string {
  const rows = results.map(({ combination, globals, outcomes }) => {
    const passed = [...outcomes.values()].filter((error) => error === null).length;
    return [
      combination.date,
      combination.nodejsCompat ? 'with' : 'without',
      combination.flags.join(', ') || '(none)',
      globals.Buffer === 'undefined' ? 'none' : 'Buffer, process',
      `${passed}/${CASES.length}`,
    ];
  });
  const table = [['date', 'nodejs_compat', 'flags', 'Node globals', 'cases passed'], ...rows];
  const widths = table[0]!.map((_, column) => Math.max(...table.map((row) => row[column]!.length)));
  return table.map((row) => row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ')).join('\n');
}

test('every case file is run, here and in process', { timeout: 10_000 }, () => {
  const files = readdirSync(CASES_DIR)
    .filter((file) => file.endsWith('.case.ts'))
    .map((file) => file.slice(0, -'.case.ts'.length));
  assert.deepEqual(Object.keys(CASE_FILES).sort(), files.sort(), 'all-cases.ts lists every case file by its name');
  for (const file of files) {
    const inProcess = new URL(`${file}.test.ts`, CASES_DIR);
    assert.ok(existsSync(inProcess) && readFileSync(inProcess, 'utf8').includes('runCasesInProcess(CASES)'), `${file}.test.ts runs ${file}.case.ts in process`);
  }
});

test('every binding case passes inside workerd, on each date, with and without nodejs_compat', { timeout: 240_000 }, async (t) => {
  const results = await eachLimited(combinations(), 2, (combination) => runCombination(t, combination));
  t.diagnostic(`binding cases inside workerd (${CASES.length} cases, ${Object.keys(CASE_FILES).length} files):\n${matrix(results)}`);
  for (const { combination, globals } of results) {
    // Without nodejs_compat the binding must do without Node's globals: check they really are absent.
    if (!combination.nodejsCompat) assert.deepEqual(globals, { Buffer: 'undefined', process: 'undefined', setImmediate: 'undefined' }, label(combination));
  }
  for (const { file, name } of CASES) {
    await t.test(caseKey(file, name), { timeout: 10_000 }, () => {
      const failures = results.filter(({ outcomes }) => outcomes.get(caseKey(file, name)) !== null);
      if (failures.length > 0) {
        throw new Error(failures.map(({ combination, outcomes }) => `${label(combination)}: ${outcomes.get(caseKey(file, name))}`).join('\n\n'));
      }
    });
  }
});

test("list's include follows the store_list_honor_include flag before 2022-08-04", { timeout: 60_000 }, async (t) => {
  const host = await startTestHost(
    t,
    `
export default {
  async fetch(request, env) {
    await env.BUCKET.put('k', 'x', { httpMetadata: { contentType: 't/x' }, customMetadata: { i: '0' } });
    const item = (await env.BUCKET.list({ include: [] })).objects[0];
    return Response.json([item.httpMetadata, item.customMetadata]);
  },
};
`,
    {
      config: {
        compatibility_date: '2022-08-03',
        compatibility_flags: ['store_list_honor_include'],
        store_buckets: [{ binding: 'BUCKET', bucket_name: 'include' }],
      },
    },
  );
  assert.deepEqual(await (await fetch(host.url)).json(), [{}, {}]);
});

/** A PUT of `body` in chunked transfer encoding (no Content-Length), as a client streaming an upload sends it. */
function putChunked(url: string, body: Buffer): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'PUT', headers: { 'transfer-encoding': 'chunked' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, text: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.write(body.subarray(0, 10));
    req.end(body.subarray(10));
  });
}

test('request bodies stream into the bucket, objects stream out; a chunked request body has no known length', { timeout: 60_000 }, async (t) => {
  const host = await startTestHost(
    t,
    `
export default {
  async fetch(request, env) {
    const key = new URL(request.url).pathname.slice(1);
    if (request.method === 'PUT') {
      try {
        const put = await env.BUCKET.put(key, request.body, { httpMetadata: request.headers });
        return Response.json({ size: put.size, etag: put.etag });
      } catch (error) {
        return new Response(error.constructor.name + ': ' + error.message, { status: 400 });
      }
    }
    const object = await env.BUCKET.get(key, { range: request.headers });
    if (object === null) return new Response('missing', { status: 404 });
    const headers = new Headers({ etag: object.httpEtag });
    object.writeHttpMetadata(headers);
    return new Response(object.body, { status: request.headers.has('range') ? 206 : 200, headers });
  },
};
`,
    { config: { compatibility_date: '2025-01-01', store_buckets: [{ binding: 'BUCKET', bucket_name: 'bodies' }] } },
  );
  const body = randomBytes(12 * 1024 * 1024);
  const put = await fetch(`${host.url}/big.bin`, { method: 'PUT', body, headers: { 'content-type': 'application/x-test' } });
  assert.deepEqual(await put.json(), { size: body.byteLength, etag: createHash('md5').update(body).digest('hex') });
  const got = await fetch(`${host.url}/big.bin`);
  assert.equal(got.headers.get('content-type'), 'application/x-test');
  assert.ok(Buffer.from(await got.arrayBuffer()).equals(body), 'the object comes back intact');
  const ranged = await fetch(`${host.url}/big.bin`, { headers: { range: 'bytes=100-199' } });
  assert.equal(ranged.status, 206);
  assert.ok(Buffer.from(await ranged.arrayBuffer()).equals(body.subarray(100, 200)));
  assert.equal((await fetch(`${host.url}/missing`)).status, 404);
  // Without a Content-Length the runtime does not know the body's length: the platform's TypeError.
  assert.deepEqual(await putChunked(`${host.url}/chunked.bin`, body.subarray(0, 100_000)), {
    status: 400,
    text: 'TypeError: Provided readable stream must have a known length (request/response body or readable half of FixedLengthStream)',
  });
  assert.equal((await fetch(`${host.url}/chunked.bin`)).status, 404, 'nothing is stored');
  const after = await fetch(`${host.url}/small.txt`, { method: 'PUT', body: 'still works' });
  assert.equal(((await after.json()) as { size: number }).size, 11, 'the binding goes on serving after a refused stream');
});

/** This process's connections accepted by a store service (the socket inodes of its `store.sock`): Linux only. */
function storeConnections(): Set<string> {
  const mine = new Set<string>();
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const link = readlinkSync(`/proc/self/fd/${fd}`);
      if (link.startsWith('socket:[')) mine.add(link.slice('socket:['.length, -1));
    } catch {
      // Closed meanwhile.
    }
  }
  const accepted = new Set<string>();
  for (const line of readFileSync('/proc/net/unix', 'utf8').split('\n')) {
    const fields = line.trim().split(/\s+/);
    // Num RefCount Protocol Flags Type St(03: connected) Inode Path
    if (fields[7]?.endsWith('/store.sock') && fields[5] === '03' && mine.has(fields[6]!)) accepted.add(fields[6]!);
  }
  return accepted;
}

test(
  'request bodies of every size arrive whole, read at once up to 64 KiB; calls one after another keep their connection to the store service',
  { timeout: 60_000, skip: process.platform !== 'linux' && 'reads /proc' },
  async (t) => {
    const host = await startTestHost(
      t,
      `
export default {
  async fetch(request, env) {
    const key = new URL(request.url).pathname.slice(1);
    if (request.method === 'PUT') {
      const put = await env.BUCKET.put(key, request.body);
      return Response.json({ size: put.size, etag: put.etag });
    }
    if (request.method === 'HEAD') return new Response(null, { status: (await env.BUCKET.head(key)) ? 200 : 404 });
    return new Response((await env.BUCKET.get(key)).body);
  },
};
`,
      { config: { compatibility_date: '2025-01-01', store_buckets: [{ binding: 'BUCKET', bucket_name: 'sizes' }] } },
    );
    // Both sides of the store service's limit (64 KiB, read whole), and of the engine's for inline bodies (64 KiB).
    for (const size of [0, 1, 1024, 64 * 1024 - 1, 64 * 1024, 64 * 1024 + 1, 300_000]) {
      const body = randomBytes(size);
      const put = await fetch(`${host.url}/o${size}`, { method: 'PUT', body });
      assert.deepEqual(await put.json(), { size, etag: createHash('md5').update(body).digest('hex') }, `${size} bytes`);
      const got = Buffer.from(await (await fetch(`${host.url}/o${size}`)).arrayBuffer());
      assert.ok(got.equals(body), `${size} bytes come back intact`);
    }
    // An answer with no body is not even read by the binding: the connection is free for the next call all the same.
    const before = storeConnections();
    assert.ok(before.size > 0, 'the store service holds a connection from workerd');
    for (let i = 0; i < 30; i++) {
      const put = await fetch(`${host.url}/seq${i}`, { method: 'PUT', body: `body ${i}` });
      assert.equal(put.status, 200);
      await put.arrayBuffer();
      assert.equal((await fetch(`${host.url}/seq${i}`, { method: 'HEAD' })).status, 200);
    }
    const after = storeConnections();
    assert.deepEqual(
      [...after].filter((inode) => !before.has(inode)),
      [],
      `60 calls one after another went over the connections already open (${before.size} before, ${after.size} after)`,
    );
  },
);
