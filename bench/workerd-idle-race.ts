/**
 * The edge's connections to workerd against workerd's own idle close (`npm run bench
 * workerd-idle-race`): a bare workerd serving a one-line script on a Unix socket, and the edge's
 * connection pool (workerd-connections.ts). LOOPS clients each send a request, wait 15 s give or
 * take JITTER ms (workerd closes a connection idle for 15 s), and send the next, ROUNDS times:
 * every request after the first goes out on a connection workerd may be closing at that moment.
 * Twice: with the edge closing idle connections exactly when workerd does (the racing value,
 * WORKERD_IDLE_CLOSE_MS), then keeping them 60 s as it once did (every late request then meets a
 * connection workerd closed or is closing). Prints how many failed (none should) and how many the
 * pool sent again on a fresh connection. EDGEPORT_BENCH_RACE_LOOPS / _ROUNDS / _JITTER_MS (default
 * 1000 / 10 / 40: 10,000 requests in about 2.5 minutes each time).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { WorkerdConnections, WORKERD_IDLE_CLOSE_MS } from '../src/runtime/workerd/workerd-connections.ts';
import { WORKERD } from '../src/runtime/workerd/workerd-package.ts';

function send(connections: WorkerdConnections): Promise<string | undefined> {
  return new Promise((resolve) => {
    let body = '';
    connections.dispatch(
      { method: 'GET', path: '/', headers: ['host', 'race.test'], body: null },
      {
        onConnect() {},
        onHeaders() {},
        onData(chunk, release) {
          body += Buffer.from(chunk).toString('utf8');
          release();
          return true;
        },
        onComplete() {
          resolve(body === 'ok' ? undefined : `answered ${JSON.stringify(body)}`);
        },
        onError(error) {
          resolve(error.message);
        },
      },
    );
  });
}

export async function benchWorkerdIdleRace(): Promise<string[]> {
  const loops = Number(process.env.EDGEPORT_BENCH_RACE_LOOPS ?? 1000);
  const rounds = Number(process.env.EDGEPORT_BENCH_RACE_ROUNDS ?? 10);
  const jitterMs = Number(process.env.EDGEPORT_BENCH_RACE_JITTER_MS ?? 40);
  const dir = mkdtempSync(join(tmpdir(), 'edgeport-idle-race-'));
  const socket = join(dir, 'workerd.sock');
  writeFileSync(join(dir, 'script.js'), 'export default { fetch: () => new Response("ok") };\n');
  writeFileSync(
    join(dir, 'config.capnp'),
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [(name = "main", worker = (modules = [(name = "script.js", esModule = embed "script.js")], compatibilityDate = "2025-01-01"))],
  sockets = [(name = "http", address = "unix:${socket}", http = (), service = "main")],
);
`,
  );
  const workerd = spawn(WORKERD.binary, ['serve', join(dir, 'config.capnp')], { cwd: dir, stdio: 'ignore' });
  const lines: string[] = [];
  try {
    for (const deadline = Date.now() + 20_000; !existsSync(socket);) {
      if (Date.now() > deadline) throw new Error('workerd did not listen within 20 s');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    for (const edgeIdleMs of [WORKERD_IDLE_CLOSE_MS, 60_000]) {
      const connections = new WorkerdConnections(socket, { idleMs: edgeIdleMs });
      const failures: string[] = [];
      let sent = 0;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: loops }, async (_, loop) => {
          // Spread over the first second, so that the closes come one by one rather than all at once.
          await new Promise((resolve) => setTimeout(resolve, (loop / loops) * 1000));
          for (let round = 0; round < rounds; round++) {
            if (round > 0) await new Promise((resolve) => setTimeout(resolve, WORKERD_IDLE_CLOSE_MS - jitterMs + Math.random() * 2 * jitterMs));
            const failure = await send(connections);
            sent++;
            if (failure !== undefined) failures.push(failure);
          }
        }),
      );
      await connections.destroy();
      const line =
        `${sent} requests, each after ${WORKERD_IDLE_CLOSE_MS} ± ${jitterMs} ms idle on its connection (the edge's idle close at ${edgeIdleMs} ms, workerd's at ${WORKERD_IDLE_CLOSE_MS} ms), ` +
        `in ${((performance.now() - started) / 1000).toFixed(0)} s: ${failures.length} failed, ${connections.retried} sent again on a fresh connection; load average ${loadavg()[0]!.toFixed(1)}` +
        (failures.length > 0 ? `; first failures: ${[...new Set(failures)].slice(0, 3).join('; ')}` : '');
      console.log(line);
      lines.push(line);
    }
  } finally {
    workerd.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
  return lines;
}
