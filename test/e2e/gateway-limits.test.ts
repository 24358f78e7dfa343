/**
 * Unauthenticated work at the gateway is bounded before it is done, through `edgeport start`: a
 * JSON-RPC batch of 2.6M tiny members (just under the 5 MiB body limit) is one -32600 answer in
 * well under a second, the management API keeps answering meanwhile, and the server's resident
 * set barely moves; params nested 100,000 levels deep or holding millions of values are -32600
 * too, never an internal error nor a second of the event loop.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { startEdgeport } from '../helpers/edgeport-server.ts';
import { peakRssGrowth } from '../helpers/process-memory.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const ADMIN = { EDGEPORT_ADMIN_EMAIL: 'limits@example.com', EDGEPORT_ADMIN_KEY: 'limits-admin-key-0123456789' };
const MiB = 1024 * 1024;
/** 2.6M members of `1`: 5.2 MB, under the gateway's default 5 MiB body limit. */
const HUGE_BATCH = `[${Array(2_600_000).fill('1').join(',')}]`;
const BATCHES = 8;

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

test('a 2.6M-member batch is one error in well under a second while the management API keeps answering, in bounded memory', { timeout: 120_000 }, async (t) => {
  assert.ok(Buffer.byteLength(HUGE_BATCH) < 5 * MiB);
  const server = await startEdgeport({ owner: t, dataDir: join(tempDir(t), 'data'), env: ADMIN });
  const gateway = `${new URL(server.urls.gateway!).origin}/v1/sepolia`;
  const api = server.urls['management API']!;
  const probe = async (): Promise<number> => {
    const started = performance.now();
    const response = await fetch(`${api}/zones`, { headers: { 'x-auth-email': ADMIN.EDGEPORT_ADMIN_EMAIL, 'x-auth-key': ADMIN.EDGEPORT_ADMIN_KEY } });
    assert.equal(response.status, 200);
    assert.equal(((await response.json()) as { success: boolean }).success, true);
    return performance.now() - started;
  };
  const sendBatch = async (): Promise<number> => {
    const started = performance.now();
    const response = await fetch(gateway, { method: 'POST', headers: { 'content-type': 'application/json' }, body: HUGE_BATCH });
    const answer = (await response.json()) as { id: unknown; error: { code: number; message: string } };
    const ms = performance.now() - started;
    assert.equal(response.status, 200);
    assert.deepEqual(answer, {
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32600,
        message: 'Invalid request: the batch has more than 1000 members; this gateway accepts at most 1000 per batch. Split it into batches of at most 1000.',
      },
    });
    return ms;
  };
  // Warm both paths, then a baseline of the API alone.
  await sendBatch();
  const baseline: number[] = [];
  for (let i = 0; i < 10; i++) baseline.push(await probe());

  // The API is asked back to back while the batches go in, two at a time.
  let sending = true;
  const during: number[] = [];
  const probing = (async () => {
    while (sending) during.push(await probe());
  })();
  const batchMs: number[] = [];
  const growth = await peakRssGrowth(server.child.pid!, async () => {
    try {
      for (let i = 0; i < BATCHES; i += 2) batchMs.push(...(await Promise.all([sendBatch(), sendBatch()])));
    } finally {
      sending = false;
      await probing;
    }
  });
  t.diagnostic(
    `2.6M-member batch (${(HUGE_BATCH.length / MiB).toFixed(2)} MiB), ${BATCHES} sent two at a time: answered in ` +
      `median ${percentile(batchMs, 50).toFixed(0)} ms, max ${Math.max(...batchMs).toFixed(0)} ms`,
  );
  t.diagnostic(
    `management API GET /zones: alone median ${percentile(baseline, 50).toFixed(1)} ms; during the batches ` +
      `${during.length} requests, median ${percentile(during, 50).toFixed(1)} ms, max ${Math.max(...during).toFixed(1)} ms`,
  );
  t.diagnostic(`server RSS growth during the batches: ${(growth / MiB).toFixed(1)} MiB`);
  // Before the scan, one such batch took minutes and froze every listener: these bounds are generous.
  assert.ok(Math.max(...batchMs) < 1_000, `slowest batch answer ${Math.max(...batchMs)} ms`);
  assert.ok(during.length > 0, 'the API answered while the batches were in flight');
  assert.ok(Math.max(...during) < 1_000, `slowest API answer during the batches ${Math.max(...during)} ms`);
  assert.ok(growth < 100 * MiB, `the server grew by ${growth} bytes`);

  const counted = await (await fetch(`${new URL(gateway).origin}/metrics`)).text();
  assert.doesNotMatch(counted, /edgeport_gateway_calls_total\{/, 'no member of a refused batch ran');
  assert.doesNotMatch(counted, /edgeport_unmapped_errors_total\{[^}]*\} [1-9]/);
});

test(
  'params nested 100,000 levels deep or holding 2.6M values are one -32600 answer, and the gateway answers the next call',
  { timeout: 60_000 },
  async (t) => {
    const server = await startEdgeport({ owner: t, dataDir: join(tempDir(t), 'data'), env: ADMIN });
    const gateway = `${new URL(server.urls.gateway!).origin}/v1/sepolia`;
    const post = async (body: string) =>
      (await fetch(gateway, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).json() as Promise<Record<string, any>>; // eslint-disable-line @typescript-eslint/no-explicit-any -- JSON-RPC answers
    const levels = 100_000;
    const deep = await post(`{"jsonrpc":"2.0","id":1,"method":"eth_call","params":[${'['.repeat(levels)}${']'.repeat(levels)}]}`);
    assert.equal(deep.id, null);
    assert.equal(deep.error.code, -32600);
    assert.match(deep.error.message, /nests arrays and objects more than 64 levels deep/);
    // 2.6M numbers in one call's params (5 MB): the embedded chain took over a second of the event loop for it.
    // On a busy machine sending 5 MB alone can take most of a second: a slow answer is timed once more.
    const body = `{"jsonrpc":"2.0","id":1,"method":"eth_call","params":[${Array(2_590_000).fill('1').join(',')}]}`;
    let manyMs = Infinity;
    for (let attempt = 1; attempt <= 2 && manyMs >= 1_000; attempt++) {
      const started = performance.now();
      const many = await post(body);
      manyMs = performance.now() - started;
      t.diagnostic(`eth_call with 2.59M params values (4.9 MiB): refused in ${manyMs.toFixed(0)} ms (attempt ${attempt})`);
      assert.equal(many.error.code, -32600);
      assert.match(many.error.message, /holds more than 100000 JSON values/);
    }
    assert.ok(manyMs < 1_000, `refusing took ${manyMs} ms`);
    assert.equal((await post('{"jsonrpc":"2.0","id":2,"method":"eth_chainId","params":[]}')).result, '0xaa36a7');
  },
);
