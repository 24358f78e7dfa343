/**
 * The floor of a script's topology on this machine: bare processes in edgeport's places, each doing
 * the least its place needs, so that what edgeport spends above them is its own.
 *
 *   client -> node:http proxy -> bare workerd -> (a script) -> one service-binding call -> node:http backend
 *
 * Two shapes of the workerd in the middle:
 * - `loader` (what edgeport runs now, the default): `workerd serve --experimental` whose only
 *   socket goes to a minimal host worker that loads a one-line isolate with the Worker Loader and
 *   hands it the request (`LOADER.get(name, code).getEntrypoint().fetch(request)`, as
 *   src/runtime/workerd/inside/isolate-host.ts does), the isolate making the one call;
 * - `config` (a process per script, as edgeport ran before): the one-line script is a worker of
 *   workerd's config, reached directly.
 *
 * The backend answers the store driver's requests (bench/drivers/store-driver.lua) the way the
 * store service's answers size them, without a store: HEAD an empty 200, PUT reads the body and
 * answers an etag, GET /list about a hundred keys of JSON, GET /o/big/ 1 MiB, any other GET 1 KiB.
 *
 * Transports are edgeport's, keep-alive on every hop: the client to the proxy over TCP loopback,
 * the proxy to workerd and workerd to the backend over Unix sockets (`tcp` puts every hop on TCP:
 * on this machine, a VM, a loopback TCP exchange costs several times a Unix socket's).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WORKERD } from '../src/runtime/workerd/workerd-package.ts';

export type FloorShape = 'loader' | 'config';
export type FloorTransport = 'unix' | 'tcp';

export interface FloorTopology {
  name: string;
  url: string;
  /** The processes whose CPU a request costs, by role. */
  pids: Record<string, number>;
  stop(): Promise<void>;
}

/**
 * The shapes `EDGEPORT_FLOOR` lists (comma-separated: `config` for the old one, `loader,config` for
 * both side by side), else the one edgeport runs.
 */
export function floorShapesFromEnv(): FloorShape[] {
  const shapes = (process.env.EDGEPORT_FLOOR ?? 'loader').split(',');
  for (const shape of shapes) {
    if (shape !== 'loader' && shape !== 'config') throw new Error(`EDGEPORT_FLOOR lists "loader" (the default) and "config", not ${JSON.stringify(shape)}.`);
  }
  return shapes as FloorShape[];
}

/** argv[1]: where to listen (a port number, or a Unix socket path). Prints "ready" when listening. */
const BACKEND = `const small = Buffer.alloc(1024, 97);
const big = Buffer.alloc(1024 * 1024, 98);
const keys = [];
for (let i = 0; i < 100; i++) keys.push('d/42/' + String(i).padStart(3, '0'));
const list = Buffer.from(JSON.stringify({ keys, truncated: false, cursor: null }));
const etag = '"' + 'e'.repeat(32) + '"';
const server = require('node:http').createServer((req, res) => {
  if (req.method === 'PUT') {
    req.resume();
    req.on('end', () => res.end(etag));
    return;
  }
  req.resume();
  if (req.method === 'HEAD') return res.writeHead(200, { etag, 'x-size': '1024', 'content-length': '0' }).end();
  const body = req.url.startsWith('/list') ? list : req.url.startsWith('/o/big/') ? big : small;
  res.writeHead(200, { etag, 'content-length': body.length });
  res.end(body);
});
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
  // A client gone mid-answer (wrk closes its connections as a run ends): the answer from workerd is
  // dropped with its connection, else the unread rest holds that connection out of the pool forever.
  res.on('close', () => { if (!res.writableFinished) out.destroy(); });
  req.pipe(out);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => console.log(server.address().port));`;

/** The one-line script: one service-binding call with the request, its answer the script's. */
const SCRIPT = 'export default { fetch: (request, env) => env.BACKEND.fetch(request) };\n';

/** The minimal host worker: the isolate's code once, by a fixed name, and the request handed to it as it came. */
const HOST = `const SCRIPT = ${JSON.stringify(SCRIPT)};
export default {
  fetch(request, env) {
    const worker = env.LOADER.get('floor', async () => ({
      compatibilityDate: ${JSON.stringify(WORKERD.compatibilityDate)},
      mainModule: 'script.js',
      modules: { 'script.js': { js: SCRIPT } },
      env: { BACKEND: env.BACKEND },
      globalOutbound: null,
    }));
    return worker.getEntrypoint().fetch(request);
  },
};
`;

/** Starts `command` and resolves with the first line it prints (a port, or "ready"). */
function startPrinting(command: string, args: string[], children: ChildProcess[]): Promise<string> {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.stdout!.once('data', (chunk: Buffer) => resolve(chunk.toString().trim()));
    child.once('exit', (code) => reject(new Error(`${command} exited (${code}) before it was ready`)));
  });
}

function workerdConfig(shape: FloorShape, backendAddress: string, workerdAddress: string): string {
  const date = JSON.stringify(WORKERD.compatibilityDate);
  const main =
    shape === 'loader'
      ? `(name = "main", worker = (modules = [(name = "host.js", esModule = embed "host.js")], compatibilityDate = ${date}, bindings = [(name = "LOADER", workerLoader = ()), (name = "BACKEND", service = "backend")]))`
      : `(name = "main", worker = (modules = [(name = "script.js", esModule = embed "script.js")], compatibilityDate = ${date}, bindings = [(name = "BACKEND", service = "backend")]))`;
  return `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    ${main},
    (name = "backend", external = (address = "${backendAddress}", http = ())),
  ],
  sockets = [(name = "http", address = "${workerdAddress}", http = (), service = "main")],
);
`;
}

export async function startFloor(shape: FloorShape, transport: FloorTransport = 'unix'): Promise<FloorTopology> {
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
    writeFileSync(join(dir, 'host.js'), HOST);
    writeFileSync(join(dir, 'config.capnp'), workerdConfig(shape, capnpAddress(backendAt), capnpAddress(workerdAt)));
    const args = ['serve', join(dir, 'config.capnp'), ...(shape === 'loader' ? ['--experimental'] : [])];
    const workerd = spawn(WORKERD.binary, args, { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
    children.push(workerd);
    const proxyPort = await startPrinting(process.execPath, ['-e', PROXY, workerdAt], children);
    const url = `http://127.0.0.1:${proxyPort}`;
    await waitFor(`${url}/o/d/00/000`);
    const [backend, , proxy] = children;
    return {
      name: `floor ${shape}${transport === 'tcp' ? ' tcp' : ''}`,
      url,
      stop,
      pids: { proxy: proxy!.pid!, workerd: workerd.pid!, backend: backend!.pid! },
    };
  } catch (error) {
    await stop();
    throw error;
  }
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
