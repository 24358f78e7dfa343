/**
 * A flood of large JSON-RPC bodies, run in a worker thread so that making and sending megabytes
 * never delays the test's own honest client: `parallel` requests in flight at all times, each
 * sent again as soon as it is answered (or its connection closed), until stopped.
 */
import { Worker } from 'node:worker_threads';

export type BodyKind = 'batch-5mb' | 'call-data-5mb';

export interface BodyFloodStats {
  sent: number;
  /** Status code -> count. */
  statuses: Record<string, number>;
  /** Connections closed before an answer was read (a refusal closes under a client still sending). */
  closed: number;
}

export interface BodyFlood {
  /** Stops sending, waits for requests in flight to end, and ends the worker; resolves with the totals. */
  stop(): Promise<BodyFloodStats>;
}

const FLOOD = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const { url, parallel, kind } = workerData;
// 100 eth_calls of 25 KB of data each: 5 MB; one eth_call of 5 MB of data, new each time (the counter).
const batch = Buffer.from(JSON.stringify(Array.from({ length: 100 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'eth_call', params: [{ data: '0x' + 'ab'.repeat(25000) + i.toString(16).padStart(4, '0') }, 'latest'] }))));
const bigData = 'cd'.repeat(2500000);
const body = (n) => kind === 'batch-5mb' ? batch : Buffer.from('{"jsonrpc":"2.0","id":' + n + ',"method":"eth_call","params":[{"data":"0x' + bigData + n.toString(16).padStart(8, '0') + '"},"latest"]}');
const stats = { sent: 0, statuses: {}, closed: 0 };
let stopped = false;
let inFlight = 0;
const agent = new http.Agent({ keepAlive: true, maxSockets: parallel });
function send() {
  if (stopped) return;
  const bytes = body(stats.sent);
  stats.sent += 1;
  inFlight += 1;
  let ended = false;
  const end = () => { if (ended) return; ended = true; inFlight -= 1; setImmediate(send); };
  const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': bytes.length } }, (res) => {
    stats.statuses[res.statusCode] = (stats.statuses[res.statusCode] || 0) + 1;
    res.resume();
    res.on('end', end);
    res.on('error', end);
  });
  req.on('error', () => { stats.closed += 1; end(); });
  req.end(bytes);
}
for (let i = 0; i < parallel; i++) send();
parentPort.on('message', (message) => {
  if (message !== 'stop') return;
  stopped = true;
  const wait = () => inFlight === 0 ? parentPort.postMessage(stats) : setTimeout(wait, 10);
  wait();
});
`;

/** Starts the flood against `url`; call stop() (tests: in t.after) whatever happens. */
export function startBodyFlood(options: { url: string; parallel: number; kind: BodyKind }): BodyFlood {
  const worker = new Worker(FLOOD, { eval: true, workerData: options });
  let failed: Error | undefined;
  worker.once('error', (error) => {
    failed = error;
  });
  let stopping: Promise<BodyFloodStats> | undefined;
  return {
    stop() {
      stopping ??= (async () => {
        try {
          if (failed !== undefined) throw failed;
          return await Promise.race([
            new Promise<BodyFloodStats>((resolve) => {
              worker.once('message', resolve);
              worker.postMessage('stop');
            }),
            new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the flood did not stop within 20 s')), 20_000)),
          ]);
        } finally {
          await worker.terminate();
        }
      })();
      return stopping;
    },
  };
}
