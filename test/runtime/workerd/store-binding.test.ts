/**
 * The bucket binding inside workerd: every conformance case of test/store/binding/bucket.case.ts
 * runs in a script on workerd against its `env` binding (one fresh bucket per case), the
 * compatibility rule for list's `include` follows the script's date and flag, and bodies stream
 * through the binding both ways.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { test, type TestContext } from 'node:test';
import { startTestHost } from '../../helpers/script-host.ts';
import { BUCKET_CASES } from '../../store/binding/bucket.case.ts';

const CASES = new URL('../../store/binding/bucket.case.ts', import.meta.url).pathname;
const NAMES = Object.keys(BUCKET_CASES);

const RUNNER = `
import { BUCKET_CASES, listIncludeCase } from ${JSON.stringify(CASES)};
const NAMES = Object.keys(BUCKET_CASES);
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    try {
      if (url.pathname === '/include') await listIncludeCase(env.BUCKET0, url.searchParams.get('honors') === 'true');
      else {
        const index = Number(url.pathname.slice('/case/'.length));
        await BUCKET_CASES[NAMES[index]](env['BUCKET' + index]);
      }
      return new Response('passed');
    } catch (error) {
      return new Response(String(error?.stack ?? error), { status: 500 });
    }
  },
};
`;

function runnerConfig(extra: Record<string, unknown> = {}) {
  return {
    runtime: 'workerd', compatibility_date: '2025-01-01', compatibility_flags: ['nodejs_compat'],
    store_buckets: NAMES.map((_, index) => ({ binding: `BUCKET${index}`, bucket_name: `case-${index}` })),
    ...extra,
  };
}

async function run(url: string): Promise<void> {
  const res = await fetch(url);
  const text = await res.text();
  assert.equal(res.status, 200, text);
  assert.equal(text, 'passed');
}

test('every bucket conformance case passes inside workerd', { timeout: 60_000 }, async (t) => {
  const host = await startTestHost(t, RUNNER, { config: runnerConfig() });
  for (const [index, name] of NAMES.entries()) {
    await t.test(name, { timeout: 30_000 }, () => run(`${host.url}/case/${index}`));
  }
});

async function includeRule(t: TestContext, config: Record<string, unknown>, honors: boolean): Promise<void> {
  const host = await startTestHost(t, RUNNER, { config: runnerConfig(config) });
  await run(`${host.url}/include?honors=${honors}`);
}

test("list's include follows the script's compatibility date and the store_list_honor_include flag", { timeout: 60_000 }, async (t) => {
  await includeRule(t, { compatibility_date: '2022-08-04' }, true);
  await includeRule(t, { compatibility_date: '2022-08-03' }, false);
  await includeRule(t, { compatibility_date: '2022-08-03', compatibility_flags: ['nodejs_compat', 'store_list_honor_include'] }, true);
});

test('a request body streams into the bucket and an object streams out as the response', { timeout: 60_000 }, async (t) => {
  const host = await startTestHost(t, `
export default {
  async fetch(request, env) {
    const key = new URL(request.url).pathname.slice(1);
    if (request.method === 'PUT') {
      const put = await env.BUCKET.put(key, request.body, { httpMetadata: request.headers });
      return Response.json({ size: put.size, etag: put.etag });
    }
    const object = await env.BUCKET.get(key, { range: request.headers });
    if (object === null) return new Response('missing', { status: 404 });
    const headers = new Headers({ etag: object.httpEtag });
    object.writeHttpMetadata(headers);
    return new Response(object.body, { status: request.headers.has('range') ? 206 : 200, headers });
  },
};
`, { config: { runtime: 'workerd', compatibility_date: '2025-01-01', store_buckets: [{ binding: 'BUCKET', bucket_name: 'bodies' }] } });
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
});
