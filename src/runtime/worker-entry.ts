/**
 * A script worker (loaded by worker-boot.js): beats a heartbeat for the CPU watchdog, loads the
 * script's env and module once, then serves the server thread's requests until it is terminated.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { pathToFileURL } from 'node:url';
import { createScriptEnv } from './env-bindings.ts';
import { describeError, FromWorker, HEARTBEAT, type FromWorkerMessage, type ToWorkerMessage, type WorkerInit } from './protocol.ts';
import { ScriptRunner, type ScriptHandler } from './script-runner.ts';
import { installScriptResponse } from './static-response.ts';
import { Outbox } from './outbox.ts';

const init = workerData as WorkerInit;
const port = parentPort!;
const heartbeat = new Int32Array(init.heartbeat);
const outbox = new Outbox<FromWorkerMessage>(port);
const post = (message: FromWorkerMessage, transfer?: readonly ArrayBuffer[]): void => outbox.post(message, transfer);

setInterval(() => Atomics.add(heartbeat, HEARTBEAT.beat, 1), init.heartbeatIntervalMs).unref();

// A script's stray rejection or exception must not take down every request this worker serves.
process.on('unhandledRejection', (reason) => {
  post({ t: FromWorker.Log, level: 'error', msg: 'A script promise rejected and nothing handled it.', error: describeError(reason) });
});
process.on('uncaughtException', (error) => {
  post({ t: FromWorker.Log, level: 'error', msg: 'A script threw outside of any request.', error: describeError(error) });
});

async function loadHandler(main: string): Promise<ScriptHandler> {
  const module = await import(pathToFileURL(main).href) as { default?: Partial<ScriptHandler> };
  const handler = module.default;
  if (typeof handler?.fetch !== 'function') {
    throw new TypeError(`${main} must have a default export with a fetch(request, env, ctx) method.`);
  }
  return handler as ScriptHandler;
}

try {
  installScriptResponse();
  const { env } = await createScriptEnv(init.script, init.dataDir, { accountId: init.accountId, blobsUrl: init.blobsUrl, dbUrl: init.dbUrl });
  const handler = await loadHandler(init.script.main);
  const runner = new ScriptRunner({
    post,
    busy: (delta) => Atomics.add(heartbeat, HEARTBEAT.busy, delta),
  }, handler, env);
  port.on('message', (batch: ToWorkerMessage[]) => {
    for (const message of batch) runner.receive(message);
  });
  post({ t: FromWorker.Ready });
} catch (error) {
  post({ t: FromWorker.StartupFailed, error: describeError(error) });
}
