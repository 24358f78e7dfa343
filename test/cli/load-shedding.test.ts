/**
 * Load shedding over real sockets: while the server's event loop runs far behind (real busy loops
 * in this process, the way CPU-bound work would block it), new requests get a 503 + Retry-After
 * at once, in the listener's error shape, except unshed paths; a server whose loop keeps within
 * the limit never sheds, however many requests it serves (its loop delay set by the test, so the
 * machine's own load cannot decide it). The clients of the overloaded tests run in a worker
 * thread, so they can send while this thread is blocked. The monitor's arithmetic is checked on a
 * time source the test moves.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import autocannon from 'autocannon';
import { EventLoopDelayMonitor, type LoopDelay } from '../../src/cli/event-loop-delay.ts';
import { listen } from '../../src/cli/listener.ts';
import type { ListenerLimits } from '../../src/config/limits.ts';
import { bodyOf, headerOf, statusOf } from '../helpers/raw-connections.ts';

/**
 * Sends each raw request on its own connection when told, and reports the raw answers (and how
 * long each took); sets `done[0]` once every answer is in, which the blocked main thread polls.
 */
const CLIENT = `
const { parentPort } = require('node:worker_threads');
const net = require('node:net');
parentPort.on('message', async ({ port, requests, done }) => {
  const answers = await Promise.all(requests.map((raw) => new Promise((resolve) => {
    const sent = performance.now();
    const socket = net.connect(port, '127.0.0.1', () => socket.write(raw));
    let text = '';
    socket.on('data', (chunk) => { text += chunk.toString('latin1'); });
    socket.on('error', () => {});
    socket.on('close', () => resolve({ text, ms: performance.now() - sent }));
  })));
  Atomics.store(new Int32Array(done), 0, 1);
  parentPort.postMessage(answers);
});
parentPort.postMessage('ready');
`;

function busyFor(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    /* the event loop is blocked */
  }
}

/**
 * Overloads this thread's event loop (blocks of `blockMs`, with one loop turn between them) while
 * a worker sends `requests` to `port`, until every answer is in; returns the answers.
 */
async function sendWhileOverloaded(t: TestContext, port: number, requests: string[], blockMs: number): Promise<Array<{ text: string; ms: number }>> {
  const worker = new Worker(CLIENT, { eval: true });
  t.after(() => worker.terminate());
  await new Promise((resolve) => worker.once('message', resolve));
  const done = new SharedArrayBuffer(4);
  const flag = new Int32Array(done);
  const answered = new Promise<Array<{ text: string; ms: number }>>((resolve) => worker.once('message', resolve));
  worker.postMessage({ port, requests, done });
  const giveUpAt = performance.now() + 20_000;
  while (Atomics.load(flag, 0) === 0) {
    assert.ok(performance.now() < giveUpAt, 'the worker got no answers within 20 s');
    busyFor(blockMs);
    await new Promise((resolve) => setImmediate(resolve));
  }
  return answered;
}

async function okListener(t: TestContext, limits: Partial<ListenerLimits>, workMs = 0, loopDelay?: LoopDelay) {
  const listener = await listen(
    (req, res) => {
      req.resume();
      req.on('end', () => {
        if (workMs > 0) busyFor(workMs);
        res.end('ok');
      });
    },
    '127.0.0.1',
    0,
    'test listener',
    { limits, unshedPaths: ['/metrics'], ...(loopDelay ? { loopDelay } : {}) },
  );
  t.after(() => listener.close());
  return listener;
}

test(
  'while the event loop runs far behind, new requests beyond the first few get 503 + Retry-After at once; /metrics is kept; then all is served',
  { timeout: 60_000 },
  async (t) => {
    const listener = await okListener(t, { maxEventLoopDelayMs: 300 });
    // One connection, pipelined, so every request arrives in the same loop turn (a blocked loop accepts one new connection per turn):
    // the 4 one client gets served after each sample of the loop's delay however far behind it runs (of 16 for all clients),
    // then the ones that show how shedding answers. The POST comes last: its connection closes when it is shed.
    const host = 'Host: example.test\r\n';
    const pipelined = [
      ...Array.from({ length: 4 }, () => `GET /first HTTP/1.1\r\n${host}\r\n`),
      `GET /a HTTP/1.1\r\n${host}\r\n`,
      `HEAD /a HTTP/1.1\r\n${host}\r\n`,
      `GET /metrics HTTP/1.1\r\n${host}\r\n`,
      `POST /upload HTTP/1.1\r\n${host}Content-Length: 5\r\n\r\nhello`,
    ].join('');
    const [answer] = await sendWhileOverloaded(t, listener.port, [pipelined], 800);
    const answers = answer!.text.split(/(?=HTTP\/1\.1 \d{3} )/);
    console.log(`loop blocked 800 ms at a time: answered after ${Math.round(answer!.ms)} ms with ${answers.map(statusOf).join(', ')}`);
    assert.equal(answers.length, 8, answer!.text);
    assert.deepEqual(answers.slice(0, 4).map(statusOf), Array<number>(4).fill(200), "a client's first 4 after a sample are served");
    const [get, head, metrics, post] = answers.slice(4);
    for (const shed of [get!, head!, post!]) {
      assert.equal(statusOf(shed), 503, shed);
      assert.equal(headerOf(shed, 'retry-after'), '1');
    }
    assert.equal(
      bodyOf(get!),
      'error 503: edgeport is overloaded: new requests would wait more than 300 ms, so this one was not started. Retry after the Retry-After delay.\n',
    );
    assert.equal(bodyOf(head!), '', 'a HEAD answer has no body');
    assert.equal(headerOf(post!, 'connection'), 'close', 'a request body is not read: the connection closes');
    assert.equal(statusOf(metrics!), 200, 'unshed paths are served');
    await sleep(300);
    assert.equal(await (await fetch(`${listener.url}/a`)).text(), 'ok', 'once the loop has caught up, requests are served');
  },
);

test('max_event_loop_delay_ms 0 never sheds, however far behind the loop runs', { timeout: 60_000 }, async (t) => {
  const listener = await okListener(t, { maxEventLoopDelayMs: 0 });
  // 24 pipelined requests arrive in one loop turn: more than are ever served unshed after a sample.
  const pipelined = 'GET / HTTP/1.1\r\nHost: example.test\r\n\r\n'.repeat(23) + 'GET / HTTP/1.1\r\nHost: example.test\r\nConnection: close\r\n\r\n';
  const [answer] = await sendWhileOverloaded(t, listener.port, [pipelined], 800);
  assert.deepEqual(answer!.text.split(/(?=HTTP\/1\.1 \d{3} )/).map(statusOf), Array<number>(24).fill(200));
});

/** A loop delay the test sets: always `behind` ms, and never a new sample (so the few places served after each sample are soon used up). */
function steadyDelay(behind: number): LoopDelay & { closed: boolean } {
  return {
    closed: false,
    behindMs: () => behind,
    samples: 0,
    close() {
      this.closed = true;
    },
  };
}

test('a busy server whose loop keeps within the limit never sheds: 2,000 requests on 16 connections, 2 ms of work each', { timeout: 60_000 }, async (t) => {
  // At the limit, never over it: whatever the machine's load, this listener's loop counts as keeping up.
  const delay = steadyDelay(50);
  const listener = await okListener(t, { maxEventLoopDelayMs: 50 }, 2, delay);
  const result = await autocannon({ url: `${listener.url}/`, connections: 16, amount: 2_000 });
  console.log(`busy but keeping up: ${result.requests.total} requests, non-2xx ${result.non2xx}`);
  assert.equal(result.requests.total, 2_000, 'the load ran');
  assert.equal(result.non2xx, 0);
  assert.equal(result.errors, 0);
  await listener.close();
  assert.equal(delay.closed, true, 'the listener closes the loop delay it was given');
});

/** A time source and timer the test moves: `advance(ms)` moves the time, `fire()` runs the sample as a late timer would. */
function movedTiming() {
  let now = 0;
  let sample: (() => void) | undefined;
  return {
    timing: {
      now: () => now,
      every: (_ms: number, run: () => void) => {
        sample = run;
        return {
          stop: () => {
            sample = undefined;
          },
        };
      },
    },
    advance(ms: number) {
      now += ms;
    },
    fire() {
      sample!();
    },
    get stopped() {
      return sample === undefined;
    },
  };
}

test('EventLoopDelayMonitor: 0 when its samples come on time, the whole block right after one, and clear again one sample later', { timeout: 5_000 }, () => {
  const clock = movedTiming();
  const monitor = new EventLoopDelayMonitor(20, clock.timing);
  clock.advance(20);
  clock.fire();
  assert.equal(monitor.behindMs(), 0, 'a sample on time');
  assert.equal(monitor.samples, 1);
  // The loop is blocked for 400 ms from the moment the next sample was due.
  clock.advance(20 + 400);
  assert.equal(monitor.behindMs(), 400, 'right after the block, before the late timer runs: how overdue it is');
  clock.fire();
  assert.equal(monitor.behindMs(), 400, 'the late sample notes the block; until the next sample, it still counts');
  assert.equal(monitor.samples, 2);
  clock.advance(20);
  clock.fire();
  assert.equal(monitor.behindMs(), 0, 'caught up one sample later');
  clock.advance(5);
  assert.equal(monitor.behindMs(), 0, 'between samples, on time');
  monitor.close();
  assert.equal(clock.stopped, true, 'close stops its timer');
  assert.equal(EventLoopDelayMonitor.sampleMsFor(1_000), 100);
  assert.equal(EventLoopDelayMonitor.sampleMsFor(20), 10);
});
