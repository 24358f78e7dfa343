/**
 * What an honest client waits while a flood of requests saturates a listener, with the default
 * limits: a worker thread floods with 100 kept-alive connections, each sending its next request as
 * soon as the last is answered, at a handler costing 1 ms of CPU per request (what a management
 * API request costs here), while another worker makes one request at a time on a new connection
 * and times it. Load shedding must start before the honest client's median wait passes 200 ms:
 * shed requests are answered at once, so the loop's turns stay short; and it must fall on the
 * flood, not the honest client (the places served while shedding are shared by address). p50, p99
 * and the share shed are printed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { listen } from '../../src/cli/listener.ts';
import { onTestEnd } from '../helpers/cleanup.ts';

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
  while (performance.now() < until) { /* CPU-bound work */ }
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

test('a request flood saturating a listener: shedding keeps an honest client\'s median wait under 200 ms', { timeout: 60_000 }, async (t) => {
  const listener = await listen((req, res) => {
    req.resume();
    req.on('end', () => {
      busyFor(1);
      res.end('ok');
    });
  }, '127.0.0.1', 0, 'test listener');
  onTestEnd(t, () => listener.close());
  const flood = new Worker(FLOOD, { eval: true, workerData: { port: listener.port, connections: 100 } });
  onTestEnd(t, () => flood.terminate());
  // The flood saturates the loop for a second before the honest client starts.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const honest = new Worker(HONEST, { eval: true, workerData: { port: listener.port, durationMs: 8_000 } });
  onTestEnd(t, () => honest.terminate());
  const answers = await new Promise<Array<{ status: number; ms: number }>>((resolve, reject) => {
    honest.once('message', resolve);
    honest.once('error', reject);
  });
  const floodCounts = await new Promise<Record<string, number>>((resolve) => {
    flood.once('message', resolve);
    flood.postMessage('stop');
  });
  const latencies = answers.map((a) => a.ms);
  const statuses = answers.reduce<Record<number, number>>((counts, a) => ({ ...counts, [a.status]: (counts[a.status] ?? 0) + 1 }), {});
  const served = answers.filter((a) => a.status === 200).map((a) => a.ms);
  console.log(`flood (100 connections, 1 ms of CPU per request): ${JSON.stringify(floodCounts)}; honest client (a new connection per request): `
    + `${answers.length} requests ${JSON.stringify(statuses)}, p50 ${percentile(latencies, 0.5).toFixed(1)} ms, p99 ${percentile(latencies, 0.99).toFixed(1)} ms; `
    + `served ones p50 ${served.length > 0 ? percentile(served, 0.5).toFixed(1) : '-'} ms`);
  assert.ok((floodCounts['200'] ?? 0) > 100, 'the flood was served as well as shed');
  assert.ok(answers.length >= 10, `the honest client got ${answers.length} answers`);
  assert.ok(answers.every((a) => a.status === 200 || a.status === 503), JSON.stringify(statuses));
  assert.ok(percentile(latencies, 0.5) < 200, `honest p50 ${percentile(latencies, 0.5).toFixed(1)} ms`);
  // The places served while shedding are shared by client address: the flood's one address cannot take them all.
  assert.ok((statuses[200] ?? 0) >= answers.length * 0.8, `the honest client was served ${statuses[200] ?? 0} of ${answers.length} times`);
});
