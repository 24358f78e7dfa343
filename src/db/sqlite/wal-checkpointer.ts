/**
 * Moves SQLite WAL checkpoints off the threads that serve requests: a checkpoint copies the WAL
 * into the database file and fsyncs it, which would otherwise stall whichever commit happens to
 * cross the auto-checkpoint threshold. A dedicated thread with its own connection runs PASSIVE
 * checkpoints (they never block readers or writers), and request connections turn auto-checkpoint off.
 *
 * SQLite starts the WAL over from its beginning only when a commit finds every frame already
 * copied; under steady writes a commit always landed while the checkpoint ran, and the WAL grew
 * for as long as the writes went on (37 MB in 8 s of puts), each fsync of it then also writing the
 * file's new blocks and size (here an fsync after a 45 KiB write took 127 us of CPU growing the
 * file, 75 us in blocks it already had). So each round checkpoints again while the previous pass
 * left frames behind, a few passes at most: the last ones are short (only what came during the
 * pass before), and once a pass ends with nothing left the next commit starts the WAL over, in the
 * file's existing blocks.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** Checkpoint passes per round, at most (in practice under steady puts: one to five). */
const MAX_PASSES = 5;

const CHECKPOINTER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.exec('PRAGMA busy_timeout = 1000');
// Answers [busy, frames in the WAL, frames copied into the database].
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)').raw();
const run = () => {
  try {
    let [, frames] = checkpoint.get();
    for (let pass = 1; pass < ${MAX_PASSES}; pass++) {
      const [, now, copied] = checkpoint.get();
      // Nothing was committed during the pass before, and all of it is copied: done.
      if (now === frames && copied === now) break;
      frames = now;
    }
  } catch (error) {
    parentPort.postMessage({ error: String(error) });
  }
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
