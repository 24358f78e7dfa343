/**
 * The floor of a script's topology on this machine, beside edgeport's own: bare workerd running a
 * one-line script that makes one service-binding call to a bare `node:http` server answering 1 KiB
 * of fixed bytes, behind a bare `node:http` proxy (client -> proxy -> workerd -> backend), then
 * edgeport's store driver `get 1 KiB` through `edgeport dev` (client -> edgeport -> workerd ->
 * edgeport's store service). Prints req/s and CPU per request of each process, from
 * /proc/<pid>/stat, so what edgeport adds over workerd's own cost is visible.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WORKERD } from '../src/runtime/workerd/workerd-package.ts';
import { startDevServer } from '../test/helpers/dev-server.ts';
import { workerdProcesses } from '../test/helpers/workerd-processes.ts';
import { runLoad } from './load.ts';
import { acRequest, seed } from './store-http.ts';

const SHARED = fileURLToPath(new URL('../../shared/bench/', import.meta.url));
/** Linux's USER_HZ: /proc/<pid>/stat counts CPU time in these ticks. */
const TICKS_PER_SECOND = 100;

const BACKEND = `const body = Buffer.alloc(1024, 97);
const server = require('node:http').createServer((req, res) => { req.resume(); res.writeHead(200, { 'content-length': body.length }); res.end(body); });
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => console.log(server.address().port));`;

const PROXY = `const http = require('node:http');
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
const target = Number(process.argv[1]);
const server = http.createServer((req, res) => {
  const out = http.request({ host: '127.0.0.1', port: target, path: req.url, method: req.method, headers: req.headers, agent }, (answer) => {
    res.writeHead(answer.statusCode, answer.headers);
    answer.pipe(res);
  });
  out.on('error', () => res.destroy());
  req.pipe(out);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => console.log(server.address().port));`;

const SCRIPT = 'export default { fetch: (request, env) => env.BACKEND.fetch("http://backend/") };\n';

function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** Starts `command` and resolves with the first line it prints (a port). */
function startPrinting(command: string, args: string[], cwd?: string): Promise<{ child: ChildProcess; line: string }> {
  const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.stdout!.once('data', (chunk: Buffer) => resolve({ child, line: chunk.toString().trim() }));
    child.once('exit', (code) => reject(new Error(`${command} exited (${code}) before it was ready`)));
  });
}

async function measure(name: string, url: string, op: string, seconds: number, pids: Record<string, number>): Promise<string> {
  const before = Object.fromEntries(Object.entries(pids).map(([role, pid]) => [role, cpuTicks(pid)]));
  const load = await runLoad({ url, connections: 32, seconds, lua: `${SHARED}store-driver.lua`, env: { OP: op }, autocannonRequest: acRequest(op) });
  const requests = load.requestsPerSec * seconds;
  const cpu = Object.entries(pids).map(([role, pid]) => {
    const us = ((cpuTicks(pid) - before[role]!) / TICKS_PER_SECOND) * 1e6;
    return `${role} ${Math.round(us / requests)} us`;
  });
  return `${name}: ${Math.round(load.requestsPerSec)} req/s (${load.tool}, 32 conn, p50 ${load.p50.toFixed(1)} ms)${load.errors ? `, errors ${load.errors}` : ''}; CPU per request: ${cpu.join(', ')}`;
}

export async function benchWorkerdFloor(seconds: number): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'edgeport-floor-'));
  const children: ChildProcess[] = [];
  const lines: string[] = [];
  try {
    const backend = await startPrinting(process.execPath, ['-e', BACKEND]);
    children.push(backend.child);
    const workerdPort = await freePort();
    writeFileSync(join(dir, 'script.js'), SCRIPT);
    writeFileSync(join(dir, 'config.capnp'), `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = (modules = [(name = "script.js", esModule = embed "script.js")], compatibilityDate = "${WORKERD.compatibilityDate}", bindings = [(name = "BACKEND", service = "backend")])),
    (name = "backend", external = (address = "127.0.0.1:${backend.line}", http = ())),
  ],
  sockets = [(name = "http", address = "127.0.0.1:${workerdPort}", http = (), service = "main")],
);
`);
    const workerd = spawn(WORKERD.binary, ['serve', join(dir, 'config.capnp')], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
    children.push(workerd);
    const proxy = await startPrinting(process.execPath, ['-e', PROXY, String(workerdPort)]);
    children.push(proxy.child);
    await waitFor(`http://127.0.0.1:${proxy.line}/`);
    const floor = await measure('floor: node:http proxy -> bare workerd -> one service binding call -> node:http 1 KiB', `http://127.0.0.1:${proxy.line}`, 'get', seconds,
      { proxy: proxy.child.pid!, workerd: workerd.pid!, backend: backend.child.pid! });
    lines.push(floor);
    console.log(floor);
  } finally {
    for (const child of children) child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
  const server = await startDevServer(`${SHARED}store-driver.mjs`, [{ binding: 'BUCKET', bucket_name: 'bench' }]);
  try {
    await seed(server.url);
    const [workerd] = workerdProcesses(server.child.pid);
    const edgeport = await measure('edgeport dev: store driver get 1 KiB (edgeport -> workerd -> store service)', server.url, 'get', seconds,
      { edgeport: server.child.pid!, workerd: workerd! });
    lines.push(edgeport);
    console.log(edgeport);
  } finally {
    await server.stop();
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
    } catch { /* not listening yet */ }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${url} did not answer`);
}
