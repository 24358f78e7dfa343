/**
 * Hostile tail clients against the real `edgeport start`, beside an honest one (undici's
 * WebSocket, as the dashboard's browser and wrangler's ws speak it): a 60 KB ping is a protocol
 * error (1002) at once; a client that pings as fast as its socket takes it and never reads is
 * paused (the bytes the server took are counted) and closed with 1008; a client that never reads
 * its events is closed with 1008 once they pile up; the server's RSS (printed before, at its peak
 * and after) grows by less than ATTACK_RSS_BOUND, /metrics counts the closes, the process lives, and the
 * honest client gets an event for every request; stopped, the server closes the honest tail
 * (1000) and exits. Then: an Upgrade request with a malformed body gets 400 at once on every
 * listener (it was held until the 120 s idle timeout).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Socket } from 'node:net';
import { Pool, WebSocket } from 'undici';
import { startEdgeport } from '../helpers/edgeport-server.ts';
import { residentBytes } from '../helpers/process-memory.ts';
import { openRaw, statusOf } from '../helpers/raw-connections.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { clientFrame, closeCodeOf, openWebSocket, readToEnd, serverFrames } from '../helpers/websocket-client.ts';
import { moduleFile, sdkFor, servedWithin } from '../helpers/workers-upload.ts';

const ADMIN = { EDGEPORT_ADMIN_EMAIL: 'tails@example.test', EDGEPORT_ADMIN_KEY: 'hostile-tails-admin-key-0123' };
const HOST = 'hostile.test';
const MiB = 1024 * 1024;
const PING_TARGET_BYTES = 500 * MiB;
/** Enough for the silent reader to be closed (after about 5,000 unread events) many times over. */
const ATTACK_REQUESTS = 20_000;
/**
 * Serving alone grows the server's RSS in steps (V8 growing its heap) by 60-90 MB over its first
 * 50-70k tailed requests, then levels off. RSS is measured once it has: after at least
 * WARM_UP_MIN requests, when three batches of WARM_UP_BATCH in a row grew it by under 2 MiB each.
 * What the honest load itself still grows it by during the attack is allowed for, extrapolated
 * from those last batches (at most HONEST_GROWTH_CAP): the bound is on what the attack adds.
 */
const WARM_UP_MIN = 50_000;
const WARM_UP_MAX = 80_000;
const WARM_UP_BATCH = 10_000;
const WARM_UP_FLAT_BATCHES = 3;
const HONEST_GROWTH_CAP = 24 * MiB;
/**
 * What the attack may add to the server's RSS. Most of what it adds is garbage: the pinger's input,
 * read in 64 KiB chunks and dropped once its connection is closed (12-46 MiB taken here), and the
 * events written to three tails. V8 collects such external memory only once about 64 MB of it has
 * piled up, so peaks of 35-41 MiB were read here and 64.5 MiB once in CI, all of it unheld. Holding
 * the pings, or their pongs, would take hundreds of MB; what the tail sockets hold is bounded
 * separately (the gauge, below 4 MiB).
 */
const ATTACK_RSS_BOUND = 96 * MiB;

/** Each request logs three lines: its event is about 900 bytes of JSON. */
const SCRIPT = `export default {
  async fetch(request) {
    const path = new URL(request.url).pathname;
    console.log('serving', path, ${JSON.stringify('a'.repeat(200))});
    console.info('second line', { path, n: 2 });
    console.warn('third line', ${JSON.stringify('w'.repeat(200))});
    return new Response('ok');
  },
};`;

function apiOf(apiUrl: string) {
  const headers = { 'x-auth-email': ADMIN.EDGEPORT_ADMIN_EMAIL, 'x-auth-key': ADMIN.EDGEPORT_ADMIN_KEY, 'content-type': 'application/json' };
  return async <T>(method: string, path: string): Promise<T> => {
    const response = await fetch(`${apiUrl}${path}`, { method, headers, ...(method === 'POST' ? { body: '{"filters":[]}' } : {}) });
    const body = (await response.json()) as { success: boolean; result: T };
    assert.ok(body.success, `${method} ${path}: ${JSON.stringify(body)}`);
    return body.result;
  };
}

/** GETs /e/<i> for i in [from, to) through the edge, `concurrency` at a time; every answer must be 200. */
async function drive(pool: Pool, from: number, to: number, concurrency = 16): Promise<void> {
  let next = from;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < to) {
        const i = next++;
        const { statusCode, body } = await pool.request({ method: 'GET', path: `/e/${i}`, headers: { host: HOST } });
        await body.dump();
        assert.equal(statusCode, 200, `/e/${i}`);
      }
    }),
  );
}

/** Writes 125-byte pings (the most a control frame may carry) in 64 KiB runs until `target` bytes were taken, the socket stops taking them for 2 s, or `stop()`. */
async function pingFlood(socket: Socket, target: number, stop: () => boolean): Promise<{ accepted: number; outcome: 'target' | 'paused' | 'stopped' }> {
  const run = Buffer.concat(Array.from({ length: 512 }, () => clientFrame({ opcode: 0x9, payload: Buffer.alloc(125, 0x70) })));
  let accepted = 0;
  while (accepted < target) {
    if (stop()) return { accepted, outcome: 'stopped' };
    const taken = await new Promise<boolean>((resolve) => {
      if (
        socket.write(run, (error) => {
          if (!error) accepted += run.length;
        })
      ) {
        setImmediate(() => resolve(true));
        return;
      }
      const timer = setTimeout(() => resolve(false), 2_000);
      socket.once('drain', () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
    if (!taken) return { accepted, outcome: 'paused' };
  }
  return { accepted, outcome: 'target' };
}

test(
  '500 MiB of unread pings and 20k unread events: both clients closed with 1008, server RSS grows < 96 MiB, an honest tail gets every event',
  // 70-100k tailed requests: about 100 s alone on a slow day of a 2-core machine.
  { timeout: 300_000 },
  async (t) => {
    // No load shedding: every request must be served (and tailed) for the honest tail's count to be exact.
    const server = await startEdgeport({ owner: t, dataDir: join(tempDir(t), 'data'), env: ADMIN, shedding: false });
    const apiUrl = server.urls['management API']!;
    const edgeUrl = server.urls.edge!;
    const metricsUrl = `${new URL(apiUrl).origin}/metrics`;
    const client = sdkFor(apiUrl, ADMIN.EDGEPORT_ADMIN_EMAIL, ADMIN.EDGEPORT_ADMIN_KEY);
    const account_id = (await client.accounts.list()).result[0]!.id;
    const zone = await client.zones.create({ account: { id: account_id }, name: HOST });
    await client.workers.scripts.update('chatty', {
      account_id,
      metadata: { main_module: 'index.js', compatibility_date: '2025-01-01' },
      files: [await moduleFile(SCRIPT)],
    });
    await client.workers.routes.create({ zone_id: zone.id, pattern: `${HOST}/*`, script: 'chatty' });
    await servedWithin(edgeUrl, HOST, 'ok', 10_000);
    const call = apiOf(apiUrl);
    const tailsPath = `/accounts/${account_id}/workers/scripts/chatty/tails`;
    const openTail = () => call<{ id: string; url: string }>('POST', tailsPath);
    const pool = new Pool(edgeUrl, { connections: 16 });
    t.after(() => pool.close());

    // The honest client: reads every event, counted by request path.
    const honestTail = await openTail();
    const honest = new WebSocket(honestTail.url, 'trace-v1');
    t.after(() => honest.close());
    await new Promise<void>((resolve, reject) => {
      honest.addEventListener('open', () => resolve());
      honest.addEventListener('error', () => reject(new Error('the honest tail did not open')));
    });
    let honestClosed: number | undefined;
    honest.addEventListener('close', (event) => {
      honestClosed = event.code;
    });
    honest.send(JSON.stringify({ debug: false }));
    const seen = new Set<string>();
    honest.addEventListener('message', (message) => {
      seen.add(new URL((JSON.parse(String(message.data)) as { event: { request: { url: string } } }).event.request.url).pathname);
    });
    const seenAll = async (from: number, to: number, withinMs: number): Promise<number> => {
      const deadline = Date.now() + withinMs;
      const missing = () => {
        let count = 0;
        for (let i = from; i < to; i++) if (!seen.has(`/e/${i}`)) count++;
        return count;
      };
      while (missing() > 0 && Date.now() < deadline) await sleep(200);
      return missing();
    };
    // The version restarts with tails when the first opens: until then requests go untailed.
    const deadline = Date.now() + 30_000;
    while (!seen.has('/e/-1')) {
      assert.ok(Date.now() < deadline, 'no request was tailed within 30 s');
      await drive(pool, -1, 0, 1);
      await sleep(200);
    }

    // Warm-up (JIT, pools, heaps) until RSS levels off, so the growth measured is the attack's.
    const pid = server.child.pid!;
    const started = residentBytes(pid);
    let warmed = 0;
    const lastBatches: number[] = [];
    for (let last = started, flat = 0; warmed < WARM_UP_MAX && (warmed < WARM_UP_MIN || flat < WARM_UP_FLAT_BATCHES); warmed += WARM_UP_BATCH) {
      await drive(pool, warmed, warmed + WARM_UP_BATCH);
      const now = residentBytes(pid);
      flat = now - last < 2 * MiB ? flat + 1 : 0;
      lastBatches.push(Math.max(now - last, 0));
      last = now;
    }
    const recent = lastBatches.slice(-WARM_UP_FLAT_BATCHES);
    const honestGrowth = Math.min(HONEST_GROWTH_CAP, (recent.reduce((sum, bytes) => sum + bytes, 0) / recent.length) * (ATTACK_REQUESTS / WARM_UP_BATCH));
    assert.equal(await seenAll(0, warmed, 30_000), 0, 'the honest tail got every warm-up event');
    const before = residentBytes(pid);
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, residentBytes(pid));
    }, 20);
    t.after(() => clearInterval(sampler));

    // Which tails are open, polled: a tail the server closed leaves the list.
    let openIds = new Set<string>();
    const everOpen = new Set<string>();
    let polling = true;
    // And the bytes the tail sockets hold, from /metrics: at most each socket's bound.
    let peakBuffered = 0;
    const poller = (async () => {
      while (polling) {
        openIds = new Set((await call<Array<{ id: string }>>('GET', tailsPath)).map(({ id }) => id));
        for (const id of openIds) everOpen.add(id);
        const gauge = /^edgeport_workers_tail_buffered_bytes (\d+)$/m.exec(await (await fetch(metricsUrl)).text())?.[1];
        peakBuffered = Math.max(peakBuffered, Number(gauge));
        await sleep(100);
      }
    })();
    t.after(() => {
      polling = false;
    });
    const closedByServerNow = (id: string) => everOpen.has(id) && !openIds.has(id);
    const closedByServer = async (id: string, withinMs: number) => {
      const until = Date.now() + withinMs;
      while (!closedByServerNow(id)) {
        assert.ok(Date.now() < until, `tail ${id} still open after ${withinMs} ms`);
        await sleep(50);
      }
    };

    // The 60 KB ping: a control frame carries at most 125 bytes, so it is a protocol error, answered with 1002 at once.
    const bigPing = await openWebSocket((await openTail()).url);
    bigPing.socket.write(clientFrame({ opcode: 0x9, payload: Buffer.alloc(60_000, 0x70) }));
    const bigPingEnd = await readToEnd(bigPing.socket, bigPing.head, 10_000);
    assert.equal(closeCodeOf(serverFrames(bigPingEnd.data).frames), 1002);
    assert.equal(bigPingEnd.ended, 'end');

    // The attackers: one pings and never reads, one sends wrangler's settings and never reads its events.
    const pingerTail = await openTail();
    const pinger = await openWebSocket(pingerTail.url);
    const silentTail = await openTail();
    const silent = await openWebSocket(silentTail.url);
    silent.socket.write(clientFrame({ opcode: 0x1, payload: Buffer.from('{"debug":false}'), mask: null }));
    await sleep(200);
    const attackStarted = performance.now();
    // Each attacker is read once the server closed it (paused and stalled, or over the bound of unread events): the close frame is last.
    const readOnceClosed = async (id: string, socket: Socket, head: Buffer) => {
      await closedByServer(id, 600_000);
      return readToEnd(socket, head);
    };
    const [flood, pingerEnd, silentEnd] = await Promise.all([
      pingFlood(pinger.socket, PING_TARGET_BYTES, () => closedByServerNow(pingerTail.id)),
      readOnceClosed(pingerTail.id, pinger.socket, pinger.head),
      readOnceClosed(silentTail.id, silent.socket, silent.head),
      drive(pool, warmed, warmed + ATTACK_REQUESTS),
    ]);
    const attackSeconds = (performance.now() - attackStarted) / 1000;
    const pingerFrames = serverFrames(pingerEnd.data).frames;
    const silentFrames = serverFrames(silentEnd.data).frames;
    const missing = await seenAll(warmed, warmed + ATTACK_REQUESTS, 60_000);
    polling = false;
    await poller;
    clearInterval(sampler);
    await sleep(1_000);
    const after = residentBytes(pid);
    const metrics = await (await fetch(metricsUrl)).text();
    const sample = (series: string) =>
      Number(
        metrics
          .split('\n')
          .find((line) => line.startsWith(`${series} `))
          ?.split(' ')[1],
      );

    console.log(
      [
        `server RSS at start ${(started / MiB).toFixed(1)} MiB, after ${warmed} honest requests ${(before / MiB).toFixed(1)} MiB; under attack: peak ${(peak / MiB).toFixed(1)} MiB (+${((peak - before) / MiB).toFixed(1)}; the honest load's own growth extrapolated: ${(honestGrowth / MiB).toFixed(1)}), after ${(after / MiB).toFixed(1)} MiB`,
        `tail sockets held at most ${(peakBuffered / 1024).toFixed(0)} KiB (/metrics, every 100 ms)`,
        `60 KB ping: close ${closeCodeOf(serverFrames(bigPingEnd.data).frames)}`,
        `pinger: ${(flood.accepted / MiB).toFixed(1)} MiB of pings taken of ${PING_TARGET_BYTES / MiB} MiB (${flood.outcome}), ${pingerFrames.filter((f) => f.opcode === 0xa).length} pongs and ${pingerFrames.filter((f) => f.opcode === 0x1).length} events read afterwards, close ${closeCodeOf(pingerFrames)} (${pingerEnd.ended})`,
        `silent reader: ${silentFrames.filter((f) => f.opcode === 0x1).length} events read afterwards of ${ATTACK_REQUESTS}, close ${closeCodeOf(silentFrames)} (${silentEnd.ended})`,
        `honest tail: ${ATTACK_REQUESTS - missing} of ${ATTACK_REQUESTS} events (${(ATTACK_REQUESTS / attackSeconds).toFixed(0)} requests/s for ${attackSeconds.toFixed(1)} s)`,
        `metrics: tail buffered bytes ${sample('edgeport_workers_tail_buffered_bytes')}, closed slow_reader ${sample('edgeport_workers_tail_sockets_closed_total{reason="slow_reader"}')}, protocol_error ${sample('edgeport_workers_tail_sockets_closed_total{reason="protocol_error"}')}`,
      ].join('\n'),
    );

    assert.notEqual(flood.outcome, 'target', 'the server stopped taking pings it could not answer');
    assert.equal(closeCodeOf(pingerFrames), 1008);
    assert.equal(closeCodeOf(silentFrames), 1008);
    assert.ok(
      peak - before - honestGrowth < ATTACK_RSS_BOUND,
      `RSS grew by ${((peak - before) / MiB).toFixed(1)} MiB, ${(honestGrowth / MiB).toFixed(1)} MiB of it allowed for the honest load`,
    );
    assert.equal(missing, 0, 'the honest tail got an event for every request');
    assert.equal(honestClosed, undefined, 'the honest tail is still open');
    assert.equal(sample('edgeport_workers_tail_sockets_closed_total{reason="slow_reader"}'), 2);
    assert.equal(sample('edgeport_workers_tail_sockets_closed_total{reason="protocol_error"}'), 1);
    assert.ok(peakBuffered < 4 * MiB, `the tail sockets held ${peakBuffered} bytes`);
    assert.ok(sample('edgeport_workers_tail_buffered_bytes') < 2 * MiB, 'only the honest tail holds anything');
    assert.equal(server.child.exitCode, null, 'the server lives');
    assert.equal((await fetch(`${new URL(apiUrl).origin}/healthz`)).status, 200);

    // Stopping with a tail connected: the tail gets 1000 and the server exits (the drain once waited for the socket until SIGKILL).
    const honestClose = new Promise<number>((resolve) => honest.addEventListener('close', (event) => resolve(event.code)));
    const stopping = performance.now();
    assert.equal(await server.stop(), 0);
    const stopMs = performance.now() - stopping;
    console.log(`stopped in ${Math.round(stopMs)} ms with a tail connected`);
    assert.ok(stopMs < 15_000, `stopped after ${Math.round(stopMs)} ms`);
    assert.equal(await honestClose, 1000);
  },
);

test('an Upgrade request with a malformed chunked body gets 400 at once on every listener, as one without Upgrade does', { timeout: 120_000 }, async (t) => {
  const server = await startEdgeport({ owner: t, dataDir: join(tempDir(t), 'data'), env: ADMIN });
  const upgrade = 'Connection: Upgrade\r\nUpgrade: websocket\r\n';
  for (const [label, url] of Object.entries(server.urls)) {
    const { port, pathname } = new URL(url.replace('<network>', 'sepolia'));
    for (const withUpgrade of [true, false]) {
      const raw = `POST ${pathname} HTTP/1.1\r\nHost: 127.0.0.1\r\n${withUpgrade ? upgrade : ''}Transfer-Encoding: chunked\r\n\r\nzz\r\nnot a chunk\r\n`;
      const connection = await openRaw(Number(port), { send: raw });
      const timer = setTimeout(() => connection.socket.destroy(), 10_000);
      const { afterMs, text } = await connection.closed;
      clearTimeout(timer);
      console.log(`${label}${withUpgrade ? ' (Upgrade)' : ''}: ${statusOf(text)} after ${Math.round(afterMs)} ms`);
      assert.equal(statusOf(text), 400, `${label}, ${withUpgrade ? 'with' : 'without'} Upgrade: ${text}`);
      assert.ok(afterMs < 5_000, `${label}: closed after ${Math.round(afterMs)} ms`);
    }
  }
});
