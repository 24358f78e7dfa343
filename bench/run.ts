/**
 * `npm run bench [service...] [-- --seconds N --rounds N]`: runs each service's benchmark and
 * prints throughput and latency percentiles. Services: store (binding in process, then HTTP through
 * `edgeport dev` with the shared driver script), s3 (signed requests over a real listener, beside bare
 * node:http, in `--rounds` rounds), gateway
 * (JSON-RPC through the gateway beside Anvil and a bare node:http server, alternating `--rounds`),
 * logs (records/s through a job, then the edge beside its origin); shedding (what an honest client
 * waits while a flood saturates a listener; not in the default set).
 */
import { parseArgs } from 'node:util';
import { benchStoreBinding } from './store-binding.ts';
import { benchStoreHttp } from './store-http.ts';
import { benchS3 } from './s3.ts';
import { benchApi } from './api.ts';
import { benchGateway } from './gateway.ts';
import { benchLogs } from './logs.ts';
import { benchEdge } from './edge.ts';
import { benchBlobs } from './blobs.ts';
import { benchWorkerdFloor } from './workerd-floor.ts';
import { benchStoreVsMiniflare } from './store-vs-miniflare.ts';
import { benchIsolates } from './isolates.ts';
import { benchWorkerdIdleRace } from './workerd-idle-race.ts';
import { benchShedding } from './shedding.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { seconds: { type: 'string', default: '5' }, rounds: { type: 'string', default: '3' } },
});

const BENCHES: Record<string, (seconds: number) => Promise<string[]>> = {
  store: async (seconds) => [...(await benchStoreBinding(seconds)), ...(await benchStoreHttp(seconds))],
  'store-binding': benchStoreBinding,
  'store-http': benchStoreHttp,
  // The floor of a script's topology (bare workerd + node:http) beside edgeport's store-driver get.
  'workerd-floor': (seconds) => benchWorkerdFloor(seconds, Number(values.rounds)),
  // The store driver through edgeport beside Miniflare (installed apart: EDGEPORT_BENCH_MINIFLARE).
  'store-vs-miniflare': (seconds) => benchStoreVsMiniflare(seconds, Number(values.rounds)),
  // A thousand scripts across twenty accounts on one instance (EDGEPORT_BENCH_ACCOUNTS, _SCRIPTS, _REQUESTED).
  isolates: () => benchIsolates(),
  // The edge's connections to workerd closing idle ones exactly when workerd does: none may fail.
  'workerd-idle-race': () => benchWorkerdIdleRace(),
  s3: (seconds) => benchS3(seconds, Number(values.rounds)),
  blobs: benchBlobs,
  api: benchApi,
  gateway: (seconds) => benchGateway(seconds, Number(values.rounds)),
  logs: async (seconds) => [...(await benchLogs(seconds)), ...(await benchEdge(seconds))],
  shedding: benchShedding,
};

const names = positionals.length > 0 ? positionals : ['store', 's3', 'api', 'gateway', 'logs'];
for (const name of names) {
  const bench = BENCHES[name];
  if (!bench) {
    console.error(`Unknown benchmark ${JSON.stringify(name)}; known: ${Object.keys(BENCHES).join(', ')}`);
    process.exit(2);
  }
  console.log(`== ${name} (${process.version}, ${values.seconds}s per measurement)`);
  await bench(Number(values.seconds));
}
