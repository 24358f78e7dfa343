/**
 * What an honest client waits while a flood of requests saturates a listener, with the default
 * limits (`npm run bench shedding`): a worker thread floods with 100 kept-alive connections, each
 * sending its next request as soon as the last is answered, at a handler costing 1 ms of CPU per
 * request (what a management API request costs here), while another worker makes one request at a
 * time on a new connection, from another address, and times it. Shedding should start before the
 * honest client's median wait passes 200 ms and fall on the flood: it prints the flood's answers,
 * the honest client's p50 and p99 and how often it was served. Wall-clock figures that depend on
 * the machine, which is why they are measured here and not asserted by a test
 * (test/cli/shedding-fairness.test.ts checks whom shedding falls on, exactly).
 */
import { Worker } from 'node:worker_threads';
import { listen } from '../src/cli/listener.ts';

const FLOOD = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const agent = new http.Agent({ keepAlive: true, maxSockets: workerData.connections });
let stopped = false;
const counts = {};
function next() {
  if (stopped) return;
  const req = http.get({ host: '127.0.0.1', port: workerData.port, path: '/flood', agent }, (res) => {
    counts[res.statusCode] = (counts[res.statusCode] ?? 0) + 1;
    res.resume();
    res.on('end', next);
  });
  req.on('error', () => setTimeout(next, 100));
}
for (let i = 0; i < workerData.connections; i++) next();
parentPort.on('message', () => { stopped = true; agent.destroy(); parentPort.postMessage(counts); });
`;

const HONEST = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
(async () => {
  const answers = [];
  const until = performance.now() + workerData.durationMs;
  while (performance.now() < until) {
    const started = performance.now();
    const status = await new Promise((resolve) => {
      const req = http.get({ host: '127.0.0.1', port: workerData.port, path: '/honest', agent: false, localAddress: '127.0.0.30', timeout: 10000 }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
      });
      req.on('timeout', () => req.destroy());
      req.on('error', () => resolve(0));
    });
    answers.push({ status, ms: performance.now() - started });
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  parentPort.postMessage(answers);
})();
`;

function busyFor(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    /* CPU-bound work */
  }
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN;
}

export async function benchShedding(seconds: number): Promise<string[]> {
  const listener = await listen(
    (req, res) => {
      req.resume();
      req.on('end', () => {
        busyFor(1);
        res.end('ok');
      });
    },
    '127.0.0.1',
    0,
    'bench listener',
  );
  const flood = new Worker(FLOOD, { eval: true, workerData: { port: listener.port, connections: 100 } });
  let honest: Worker | undefined;
  try {
    // The flood saturates the loop for a second before the honest client starts.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    honest = new Worker(HONEST, { eval: true, workerData: { port: listener.port, durationMs: Math.max(2, seconds) * 1_000 } });
    const answers = await new Promise<Array<{ status: number; ms: number }>>((resolve, reject) => {
      honest!.once('message', resolve);
      honest!.once('error', reject);
    });
    const floodCounts = await new Promise<Record<string, number>>((resolve) => {
      flood.once('message', resolve);
      flood.postMessage('stop');
    });
    const latencies = answers.map((a) => a.ms);
    const served = answers.filter((a) => a.status === 200).length;
    const lines = [
      `flood (100 kept-alive connections, 1 ms of CPU per request): ${JSON.stringify(floodCounts)}`,
      `honest client (a new connection per request, another address): ${answers.length} requests, served ${served} (${((100 * served) / Math.max(1, answers.length)).toFixed(0)}%), ` +
        `p50 ${percentile(latencies, 0.5).toFixed(1)} ms, p99 ${percentile(latencies, 0.99).toFixed(1)} ms`,
    ];
    for (const line of lines) console.log(line);
    return lines;
  } finally {
    await honest?.terminate();
    await flood.terminate();
    await listener.close();
  }
}
