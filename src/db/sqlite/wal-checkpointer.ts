/**
 * Moves SQLite WAL checkpoints off the threads that serve requests: a checkpoint copies the WAL
 * into the database file and fsyncs it, which would otherwise stall whichever commit happens to
 * cross the auto-checkpoint threshold. A dedicated thread with its own connection runs PASSIVE
 * checkpoints (they never block readers or writers), and request connections turn auto-checkpoint off.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

const CHECKPOINTER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.exec('PRAGMA busy_timeout = 1000');
const run = () => {
  try { db.exec('PRAGMA wal_checkpoint(PASSIVE)'); } catch (error) { parentPort.postMessage({ error: String(error) }); }
};
const timer = setInterval(run, workerData.intervalMs);
parentPort.on('message', (message) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  run();
  db.close();
  parentPort.close();
});
`;

export interface WalCheckpointer {
  stop(): Promise<void>;
}

/** Starts a checkpointer thread for the database at `file`. */
export function startWalCheckpointer(file: string, options: { intervalMs: number; onError?: (message: string) => void }): WalCheckpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(CHECKPOINTER_SOURCE, { eval: true, workerData: { file, driver, intervalMs: options.intervalMs } });
  worker.on('message', (message: { error?: string }) => {
    if (message.error) options.onError?.(message.error);
  });
  worker.on('error', (error) => options.onError?.(String(error)));
  worker.unref();
  return {
    async stop() {
      const exited = new Promise((resolve) => worker.once('exit', resolve));
      worker.ref();
      worker.postMessage('stop');
      await exited;
    },
  };
}
