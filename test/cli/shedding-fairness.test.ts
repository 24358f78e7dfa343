/**
 * Whom load shedding falls on: while the event loop runs behind the limit, a listener serves a few
 * requests after each sample of the loop's delay (16 in all, at most 4 from one client address)
 * and sheds the rest; so a flood from one address gets its 4 and 503s, and an honest client with
 * one request at a time from another address is served every time. The loop's delay and its
 * samples are set by the test (the listener's `loopDelay`), so the outcome is exact and no wall
 * clock decides it; what an honest client waits during a real flood is measured by
 * `npm run bench shedding` (bench/shedding.ts).
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { test } from 'node:test';
import type { LoopDelay } from '../../src/cli/event-loop-delay.ts';
import { listen } from '../../src/cli/listener.ts';
import { onTestEnd } from '../helpers/cleanup.ts';

const FLOOD_ADDRESS = '127.0.0.1';
const HONEST_ADDRESS = '127.0.0.30';

/** One GET on a connection of its own from `localAddress`; its status. */
function get(port: number, localAddress: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/', agent: false, localAddress }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', reject);
    req.end();
  });
}

test(
  'shedding falls on the flood: per sample, a flooding address gets 4 places and 503s, an honest one is served every time',
  { timeout: 60_000 },
  async (t) => {
    // 200 ms behind, over the 50 ms limit, for the whole test; a new sample when the test says so.
    let samples = 0;
    const loopDelay: LoopDelay = {
      behindMs: () => 200,
      get samples() {
        return samples;
      },
      close() {},
    };
    const listener = await listen(
      (req, res) => {
        req.resume();
        req.on('end', () => res.end('ok'));
      },
      '127.0.0.1',
      0,
      'test listener',
      { limits: { maxEventLoopDelayMs: 50 }, loopDelay },
    );
    onTestEnd(t, () => listener.close());

    const rounds: Array<{ flood: Record<number, number>; honest: number }> = [];
    for (let round = 0; round < 5; round++) {
      samples += 1;
      const flood = await Promise.all(Array.from({ length: 12 }, () => get(listener.port, FLOOD_ADDRESS)));
      const honest = await get(listener.port, HONEST_ADDRESS);
      rounds.push({ flood: flood.reduce<Record<number, number>>((counts, status) => ({ ...counts, [status]: (counts[status] ?? 0) + 1 }), {}), honest });
    }
    console.log(`per sample: ${rounds.map((r) => `flood ${JSON.stringify(r.flood)}, honest ${r.honest}`).join('; ')}`);
    for (const round of rounds) assert.deepEqual(round, { flood: { 200: 4, 503: 8 }, honest: 200 });

    // Sixteen places in all per sample: five addresses of four requests each leave the last address's four shed.
    samples += 1;
    const addresses = ['127.0.0.41', '127.0.0.42', '127.0.0.43', '127.0.0.44', '127.0.0.45'];
    const statuses: number[] = [];
    for (const address of addresses) statuses.push(...(await Promise.all(Array.from({ length: 4 }, () => get(listener.port, address)))));
    assert.deepEqual(statuses, [...Array<number>(16).fill(200), ...Array<number>(4).fill(503)]);
  },
);
