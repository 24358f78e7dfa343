/**
 * A connection flood from many client addresses, run in a worker thread so its thousands of
 * sockets never delay the test's own measurements: each address keeps `perAddress` connections
 * open that send a partial request head and nothing more, and reopens each one `reopenMs` after it
 * closes (refused, evicted or timed out), so the flood holds the most it may the whole time.
 */
import { Worker } from 'node:worker_threads';

export interface FloodOptions {
  port: number;
  /** Local addresses to connect from (127.0.0.2 and up: Linux routes 127.0.0.0/8 to loopback). */
  addresses: readonly string[];
  perAddress: number;
  /** What each connection sends once connected (a request head that never ends). */
  head: string;
  /** How long a closed connection waits before it is opened again (Retry-After is 1 s). */
  reopenMs?: number;
}

export interface FloodStats {
  /** Connections open now that the server has answered nothing on (held slots). */
  held: number;
  /** Connections closed with an answer (the listener's 503 refusals, 408 timeouts). */
  answered: number;
  /** Connections closed without an answer (evicted to make room, or reset). */
  closedSilently: number;
}

export interface ConnectionFlood {
  stats(): Promise<FloodStats>;
  /** Closes every connection and ends the worker; again is fine. */
  stop(): Promise<void>;
}

const FLOOD = `
const { parentPort, workerData } = require('node:worker_threads');
const net = require('node:net');
const { port, addresses, perAddress, head, reopenMs } = workerData;
const sockets = new Set();
let stopped = false;
const stats = { held: 0, answered: 0, closedSilently: 0 };
function hold(localAddress) {
  if (stopped) return;
  const socket = net.connect({ port, host: '127.0.0.1', localAddress });
  sockets.add(socket);
  let connected = false;
  let answered = false;
  socket.on('connect', () => { connected = true; stats.held += 1; socket.write(head); });
  socket.on('data', () => { if (!answered && connected) stats.held -= 1; answered = true; });
  socket.on('error', () => {});
  socket.on('close', () => {
    sockets.delete(socket);
    if (answered) stats.answered += 1;
    else { stats.closedSilently += 1; if (connected) stats.held -= 1; }
    if (!stopped) setTimeout(() => hold(localAddress), reopenMs);
  });
}
// Opened a batch at a time, so the listen backlog never overflows (a dropped SYN waits 1 s).
let next = 0;
const all = addresses.flatMap((address) => Array.from({ length: perAddress }, () => address));
(function openBatch() {
  if (stopped) return;
  for (const end = Math.min(all.length, next + 100); next < end; next++) hold(all[next]);
  if (next < all.length) setTimeout(openBatch, 5);
})();
parentPort.on('message', (message) => {
  if (message === 'stats') parentPort.postMessage({ ...stats });
  if (message === 'stop') {
    stopped = true;
    for (const socket of sockets) socket.destroy();
    parentPort.postMessage('stopped');
  }
});
`;

/** Starts the flood; call stop() (tests: through onTestEnd) whatever happens. */
export function startConnectionFlood(options: FloodOptions): ConnectionFlood {
  const worker = new Worker(FLOOD, { eval: true, workerData: { reopenMs: 1_000, ...options } });
  let ended = false;
  worker.once('exit', () => {
    ended = true;
  });
  let failed: Error | undefined;
  worker.once('error', (error) => {
    failed = error;
  });
  const ask = <T>(message: string): Promise<T> =>
    new Promise((resolve, reject) => {
      if (failed !== undefined || ended) {
        reject(failed ?? new Error('the flood worker has ended'));
        return;
      }
      worker.once('message', resolve);
      worker.postMessage(message);
    });
  return {
    stats: () => ask<FloodStats>('stats'),
    async stop() {
      if (ended) return;
      await Promise.race([ask('stop'), new Promise((resolve) => setTimeout(resolve, 5_000))]);
      await worker.terminate();
    },
  };
}
