/**
 * The floor of a script's topology on this machine (bench/floor-topology.ts) beside edgeport's own:
 * the floor's get of 1 KiB (client -> node:http proxy -> bare workerd -> a one-line isolate's
 * service-binding call -> node:http backend), then edgeport's store driver `get 1 KiB` through
 * `edgeport dev` (client -> edgeport -> workerd -> edgeport's store service). Both topologies run
 * side by side and are measured in alternating rounds (a shared machine's load drifts), each line
 * giving req/s and the CPU per request of every process of its topology from /proc/<pid>/stat;
 * after each round, edgeport / floor of that round; the summary is the medians.
 *
 * The floor is the topology edgeport runs, an isolate loaded by a host worker with the Worker
 * Loader; `EDGEPORT_FLOOR=config` measures the old one (the script a worker of workerd's config, a
 * process per script), and `EDGEPORT_FLOOR_TRANSPORT=tcp` adds the floor with TCP on every hop.
 */
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { startDevServer } from '../test/helpers/dev-server.ts';
import { workerdProcesses } from '../test/helpers/workerd-processes.ts';
import { floorShapesFromEnv, startFloor, type FloorTopology } from './floor-topology.ts';
import { runLoad } from './load.ts';
import { cpuSeconds } from './process-cpu.ts';
import { median } from './stats.ts';
import { acRequest, seed } from './store-http.ts';

const DRIVERS = fileURLToPath(new URL('drivers/', import.meta.url));
const CONNECTIONS = 32;

type Topology = FloorTopology;

interface Round {
  requestsPerSec: number;
  p50: number;
  errors: number;
  /** CPU per request (us) by role, and their sum. */
  cpu: Record<string, number>;
  cpuTotal: number;
}

async function startEdgeport(): Promise<Topology> {
  const server = await startDevServer(`${DRIVERS}store-driver.mjs`, [{ binding: 'BUCKET', bucket_name: 'bench' }]);
  try {
    await seed(server.url);
    const [workerd] = workerdProcesses(server.child.pid);
    if (workerd === undefined) throw new Error('edgeport dev runs no workerd process');
    return { name: 'edgeport', url: server.url, pids: { edgeport: server.child.pid!, workerd }, stop: () => server.stop() };
  } catch (error) {
    await server.stop();
    throw error;
  }
}

async function measure(topology: Topology, seconds: number): Promise<Round> {
  const before = Object.fromEntries(Object.entries(topology.pids).map(([role, pid]) => [role, cpuSeconds(pid)]));
  const load = await runLoad({
    url: topology.url,
    connections: CONNECTIONS,
    seconds,
    lua: `${DRIVERS}store-driver.lua`,
    env: { OP: 'get' },
    autocannonRequest: acRequest('get'),
  });
  // Only answered gets count: a refusal (a 503 shed by a loaded listener) costs far less than a get and would flatter the figure.
  const requests = Math.max(1, load.requestsPerSec * seconds - load.errors);
  const cpu = Object.fromEntries(Object.entries(topology.pids).map(([role, pid]) => [role, ((cpuSeconds(pid) - before[role]!) * 1e6) / requests]));
  return { requestsPerSec: requests / seconds, p50: load.p50, errors: load.errors, cpu, cpuTotal: Object.values(cpu).reduce((a, b) => a + b, 0) };
}

function describe(round: Round): string {
  const parts = Object.entries(round.cpu)
    .map(([role, us]) => `${role} ${Math.round(us)}`)
    .join(' + ');
  return `${Math.round(round.requestsPerSec).toString().padStart(6)} req/s  p50 ${round.p50.toFixed(1).padStart(5)} ms  CPU ${Math.round(round.cpuTotal).toString().padStart(4)} us/req (${parts})${round.errors ? `  errors ${round.errors}` : ''}`;
}

const load1 = () => loadavg()[0]!.toFixed(1);
const loads = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

export async function benchWorkerdFloor(seconds: number, rounds = 3): Promise<string[]> {
  const lines: string[] = [];
  const say = (line: string) => {
    lines.push(line);
    console.log(line);
  };
  const shapes = floorShapesFromEnv();
  const topologies: Topology[] = [];
  try {
    for (const shape of shapes) {
      topologies.push(await startFloor(shape, 'unix'));
      if (process.env.EDGEPORT_FLOOR_TRANSPORT === 'tcp') topologies.push(await startFloor(shape, 'tcp'));
    }
    topologies.push(await startEdgeport());
    const scripts = shapes.map((shape) =>
      shape === 'loader' ? 'an isolate a host worker loads with the Worker Loader (floor loader)' : 'a worker of the config (floor config)',
    );
    say(
      `floor: wrk -> node:http proxy -> bare workerd -> node:http 1 KiB, the one-line script ${scripts.join(', or ')}; edgeport: store driver get 1 KiB through edgeport dev`,
    );
    say(`${rounds} alternating rounds of ${seconds} s, ${CONNECTIONS} connections; load average ${loads()}`);
    // Each topology is warmed up (JIT, connection pools) before any round counts.
    for (const topology of topologies) await measure(topology, 1);
    const results = new Map<string, Round[]>(topologies.map((t) => [t.name, []]));
    for (let round = 0; round < rounds; round++) {
      const order = topologies.map((_, i) => topologies[(i + round) % topologies.length]!);
      for (const topology of order) {
        const result = await measure(topology, seconds);
        results.get(topology.name)!.push(result);
        say(`round ${round + 1}  ${topology.name.padEnd(14)} ${describe(result)}  load ${load1()}`);
      }
      const edgeport = results.get('edgeport')![round]!;
      const ratios = [...results]
        .filter(([name]) => name !== 'edgeport')
        .map(([name, runs]) => `edgeport / ${name} CPU per request ${(edgeport.cpuTotal / runs[round]!.cpuTotal).toFixed(2)}x`);
      say(`round ${round + 1}  ${ratios.join(', ')}`);
    }
    const edgeport = results.get('edgeport')!;
    say(`medians of ${rounds} rounds (load average now ${loads()}):`);
    for (const [name, runs] of results) {
      const rps = median(runs.map((r) => r.requestsPerSec));
      const cpu = median(runs.map((r) => r.cpuTotal));
      let ratio = '';
      if (name !== 'edgeport') {
        // Per round (the two measured back to back), then the median of those ratios.
        const perRound = runs.map((r, i) => edgeport[i]!.cpuTotal / r.cpuTotal);
        ratio = `  edgeport/this CPU per request ${median(perRound).toFixed(2)}x (rounds ${perRound.map((r) => r.toFixed(2)).join(', ')})`;
      }
      say(`  ${name.padEnd(14)} ${Math.round(rps).toString().padStart(6)} req/s  CPU ${Math.round(cpu).toString().padStart(4)} us/req${ratio}`);
    }
  } finally {
    for (const topology of topologies) await topology.stop();
  }
  return lines;
}
