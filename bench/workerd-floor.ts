/**
 * The floor of a script's topology on this machine, beside edgeport's own: bare workerd running a
 * one-line script that makes one service-binding call to a bare `node:http` server answering 1 KiB
 * of fixed bytes, behind a bare `node:http` proxy (client -> proxy -> workerd -> backend), then
 * edgeport's store driver `get 1 KiB` through `edgeport dev` (client -> edgeport -> workerd ->
 * edgeport's store service). Both topologies run side by side and are measured in alternating
 * rounds (a shared machine's load drifts), each line giving req/s and the CPU per request of
 * every process of its topology from /proc/<pid>/stat; the summary is the medians.
 *
 * The floor uses the transports edgeport uses, keep-alive on every hop: wrk to the proxy over TCP
 * loopback, the proxy to workerd and workerd to the backend over Unix sockets. Its first cut
 * spoke TCP on all three hops: on this machine (a VM) a loopback TCP exchange between two
 * processes costs several times a Unix socket's, which made that "floor" dearer than edgeport.
 * `EDGEPORT_FLOOR_TRANSPORT=tcp` measures that variant too.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WORKERD } from '../src/runtime/workerd/workerd-package.ts';
import { startDevServer } from '../test/helpers/dev-server.ts';
import { workerdProcesses } from '../test/helpers/workerd-processes.ts';
import { runLoad } from './load.ts';
import { median } from './stats.ts';
import { acRequest, seed } from './store-http.ts';

const DRIVERS = fileURLToPath(new URL('drivers/', import.meta.url));
/** Linux's USER_HZ: /proc/<pid>/stat counts CPU time in these ticks. */
const TICKS_PER_SECOND = 100;
const CONNECTIONS = 32;

/** argv[1]: where to listen (a port number, or a Unix socket path). Prints "ready" when listening. */
const BACKEND = `const body = Buffer.alloc(1024, 97);
const server = require('node:http').createServer((req, res) => { req.resume(); res.writeHead(200, { 'content-length': body.length }); res.end(body); });
server.keepAliveTimeout = 60_000;
const at = process.argv[1];
server.listen(/^\\d+$/.test(at) ? { port: Number(at), host: '127.0.0.1' } : { path: at }, () => console.log('ready'));`;

/** argv[1]: workerd's address (port or socket path). Prints its own port when listening. */
const PROXY = `const http = require('node:http');
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
const at = process.argv[1];
const target = /^\\d+$/.test(at) ? { host: '127.0.0.1', port: Number(at) } : { socketPath: at };
const server = http.createServer((req, res) => {
  const out = http.request({ ...target, path: req.url, method: req.method, headers: req.headers, agent }, (answer) => {
    res.writeHead(answer.statusCode, answer.headers);
    answer.pipe(res);
  });
  out.on('error', () => res.destroy());
  req.pipe(out);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => console.log(server.address().port));`;

const SCRIPT = 'export default { fetch: (request, env) => env.BACKEND.fetch("http://backend/") };\n';

type Transport = 'unix' | 'tcp';

interface Topology {
  name: string;
  url: string;
  /** The processes whose CPU a request costs, by role. */
  pids: Record<string, number>;
  stop(): Promise<void>;
}

interface Round {
  requestsPerSec: number;
  p50: number;
  errors: number;
  /** CPU per request (us) by role, and their sum. */
  cpu: Record<string, number>;
  cpuTotal: number;
}

function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** Starts `command` and resolves with the first line it prints (a port, or "ready"). */
function startPrinting(command: string, args: string[], children: ChildProcess[]): Promise<string> {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.stdout!.once('data', (chunk: Buffer) => resolve(chunk.toString().trim()));
    child.once('exit', (code) => reject(new Error(`${command} exited (${code}) before it was ready`)));
  });
}

async function startFloor(transport: Transport): Promise<Topology> {
  const dir = mkdtempSync(join(tmpdir(), 'edgeport-floor-'));
  const children: ChildProcess[] = [];
  const stop = async () => {
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGTERM');
          }),
      ),
    );
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const backendAt = transport === 'unix' ? join(dir, 'backend.sock') : String(await freePort());
    const workerdAt = transport === 'unix' ? join(dir, 'workerd.sock') : String(await freePort());
    const capnpAddress = (at: string) => (transport === 'unix' ? `unix:${at}` : `127.0.0.1:${at}`);
    await startPrinting(process.execPath, ['-e', BACKEND, backendAt], children);
    writeFileSync(join(dir, 'script.js'), SCRIPT);
    writeFileSync(
      join(dir, 'config.capnp'),
      `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = (modules = [(name = "script.js", esModule = embed "script.js")], compatibilityDate = "${WORKERD.compatibilityDate}", bindings = [(name = "BACKEND", service = "backend")])),
    (name = "backend", external = (address = "${capnpAddress(backendAt)}", http = ())),
  ],
  sockets = [(name = "http", address = "${capnpAddress(workerdAt)}", http = (), service = "main")],
);
`,
    );
    const workerd = spawn(WORKERD.binary, ['serve', join(dir, 'config.capnp')], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
    children.push(workerd);
    const proxyPort = await startPrinting(process.execPath, ['-e', PROXY, workerdAt], children);
    const url = `http://127.0.0.1:${proxyPort}`;
    await waitFor(`${url}/`);
    const [backend, , proxy] = children;
    return {
      name: `floor (${transport})`,
      url,
      stop,
      pids: { proxy: proxy!.pid!, workerd: workerd.pid!, backend: backend!.pid! },
    };
  } catch (error) {
    await stop();
    throw error;
  }
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
  const before = Object.fromEntries(Object.entries(topology.pids).map(([role, pid]) => [role, cpuTicks(pid)]));
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
  const cpu = Object.fromEntries(
    Object.entries(topology.pids).map(([role, pid]) => [role, (((cpuTicks(pid) - before[role]!) / TICKS_PER_SECOND) * 1e6) / requests]),
  );
  return { requestsPerSec: requests / seconds, p50: load.p50, errors: load.errors, cpu, cpuTotal: Object.values(cpu).reduce((a, b) => a + b, 0) };
}

function describe(round: Round): string {
  const parts = Object.entries(round.cpu)
    .map(([role, us]) => `${role} ${Math.round(us)}`)
    .join(' + ');
  return `${Math.round(round.requestsPerSec).toString().padStart(6)} req/s  p50 ${round.p50.toFixed(1).padStart(5)} ms  CPU ${Math.round(round.cpuTotal).toString().padStart(4)} us/req (${parts})${round.errors ? `  errors ${round.errors}` : ''}`;
}

const load1 = () => loadavg()[0]!.toFixed(1);

export async function benchWorkerdFloor(seconds: number, rounds = 3): Promise<string[]> {
  const lines: string[] = [];
  const say = (line: string) => {
    lines.push(line);
    console.log(line);
  };
  const transports: Transport[] = process.env.EDGEPORT_FLOOR_TRANSPORT === 'tcp' ? ['unix', 'tcp'] : ['unix'];
  const topologies: Topology[] = [];
  try {
    for (const transport of transports) topologies.push(await startFloor(transport));
    topologies.push(await startEdgeport());
    say(`floor: wrk -> node:http proxy -> bare workerd (one service binding call) -> node:http 1 KiB; edgeport: store driver get 1 KiB through edgeport dev`);
    say(
      `${rounds} alternating rounds of ${seconds} s, ${CONNECTIONS} connections; load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
    // Each topology is warmed up (JIT, connection pools) before any round counts.
    for (const topology of topologies) await measure(topology, 1);
    const results = new Map<string, Round[]>(topologies.map((t) => [t.name, []]));
    for (let round = 0; round < rounds; round++) {
      const order = topologies.map((_, i) => topologies[(i + round) % topologies.length]!);
      for (const topology of order) {
        const result = await measure(topology, seconds);
        results.get(topology.name)!.push(result);
        say(`round ${round + 1}  ${topology.name.padEnd(12)} ${describe(result)}  load ${load1()}`);
      }
    }
    const edgeport = results.get('edgeport')!;
    say(
      `medians of ${rounds} rounds (load average now ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}):`,
    );
    for (const [name, runs] of results) {
      const rps = median(runs.map((r) => r.requestsPerSec));
      const cpu = median(runs.map((r) => r.cpuTotal));
      let ratio = '';
      if (name !== 'edgeport') {
        // Per round (the two measured back to back), then the median of those ratios.
        const perRound = runs.map((r, i) => edgeport[i]!.cpuTotal / r.cpuTotal);
        ratio = `  edgeport/this CPU per request ${median(perRound).toFixed(2)}x (rounds ${perRound.map((r) => r.toFixed(2)).join(', ')})`;
      }
      say(`  ${name.padEnd(12)} ${Math.round(rps).toString().padStart(6)} req/s  CPU ${Math.round(cpu).toString().padStart(4)} us/req${ratio}`);
    }
  } finally {
    for (const topology of topologies) await topology.stop();
  }
  return lines;
}

async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function waitFor(url: string): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      if (res.ok) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${url} did not answer`);
}
