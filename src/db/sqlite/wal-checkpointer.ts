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
 *
 * At rates the passes cannot follow (thousands of commits a second: a fast disk, or the engine
 * driven in process) the WAL still grew, 121 MiB in 12 s of puts. Past `maxWalBytes` of frames a
 * round ends with a RESTART checkpoint: it waits for the write lock, copies what is left, and holds
 * new writers until readers are done with the WAL, so the next commit starts it over. Writers
 * wait that long (milliseconds: the passes before it copied nearly everything; at most
 * RESTART_WAIT_MS for a reader, then the restart gives up until the next round), and the WAL's
 * file stays within the bound plus what a round or two write.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Logger } from '../../core/log.ts';

/** Checkpoint passes per round, at most (in practice under steady puts: one to five). */
const MAX_PASSES = 5;
/** Frames in the WAL past which a round restarts it (blocking writers briefly): 64 MiB. */
export const MAX_WAL_BYTES = 64 * 1024 * 1024;
/** The longest a restart holds writers while it waits for the lock or for readers. */
const RESTART_WAIT_MS = 100;

const CHECKPOINTER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.exec('PRAGMA busy_timeout = 1000');
// Answers [busy, frames in the WAL, frames copied into the database].
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)').raw();
const restart = db.prepare('PRAGMA wal_checkpoint(RESTART)').raw();
// How long a restart may hold writers waiting for the write lock or for readers (a long read,
// a listing, keeps it from finishing): then it gives up, and the next round tries again.
const restartWait = db.prepare('PRAGMA busy_timeout = ${RESTART_WAIT_MS}');
const normalWait = db.prepare('PRAGMA busy_timeout = 1000');
// A frame is a page and its 24-byte header.
const maxFrames = Math.floor(workerData.maxWalBytes / (db.pragma('page_size', { simple: true }) + 24));
// Rounds run so far, shared with the thread that started this one.
const rounds = new Int32Array(workerData.rounds);
const run = () => {
  Atomics.add(rounds, 0, 1);
  try {
    let [, frames] = checkpoint.get();
    for (let pass = 1; pass < workerData.passes; pass++) {
      const [, now, copied] = checkpoint.get();
      // Nothing was committed during the pass before, and all of it is copied: done.
      if (now === frames && copied === now) break;
      frames = now;
    }
    if (frames > maxFrames) {
      const started = performance.now();
      restartWait.get();
      let busy;
      try {
        [busy] = restart.get();
      } finally {
        normalWait.get();
      }
      parentPort.postMessage({ restart: { frames, busy: busy === 1, ms: performance.now() - started } });
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
  /** Rounds the thread has begun so far (fewer than its interval allows when the machine is busy). */
  rounds(): number;
  stop(): Promise<void>;
}

/** A round that restarted the WAL: how many frames it had, whether readers kept it from finishing, and how long writers were held. */
export interface WalRestart {
  frames: number;
  busy: boolean;
  ms: number;
}

export interface WalCheckpointerOptions {
  intervalMs: number;
  /** Frames past this many bytes restart the WAL (default MAX_WAL_BYTES). */
  maxWalBytes?: number;
  /** Checkpoint passes a round makes at most (default MAX_PASSES; 1 is the single pass that let the WAL grow). */
  passes?: number;
  onError?: (message: string) => void;
  onRestart?: (restart: WalRestart) => void;
}

/** Starts a checkpointer thread for the database at `file`. */
export function startWalCheckpointer(file: string, options: WalCheckpointerOptions): WalCheckpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const rounds = new Int32Array(new SharedArrayBuffer(4));
  const workerData = {
    file,
    driver,
    intervalMs: options.intervalMs,
    maxWalBytes: options.maxWalBytes ?? MAX_WAL_BYTES,
    passes: options.passes ?? MAX_PASSES,
    rounds: rounds.buffer,
  };
  const worker = new Worker(CHECKPOINTER_SOURCE, { eval: true, workerData });
  worker.on('message', (message: { error?: string; restart?: WalRestart }) => {
    if (message.error) options.onError?.(message.error);
    if (message.restart) options.onRestart?.(message.restart);
  });
  worker.on('error', (error) => options.onError?.(String(error)));
  worker.unref();
  return {
    rounds: () => Atomics.load(rounds, 0),
    async stop() {
      const exited = new Promise((resolve) => worker.once('exit', resolve));
      worker.ref();
      worker.postMessage('stop');
      await exited;
    },
  };
}

/**
 * Logs the WAL's restarts at most once a minute: the first at once, then how many came since and
 * the longest that writers were held.
 */
export function walRestartLogger(logger: Logger, now: () => number = Date.now): (restart: WalRestart) => void {
  let lastLogged = -Infinity;
  let count = 0;
  let longestMs = 0;
  return (restart) => {
    count++;
    longestMs = Math.max(longestMs, restart.ms);
    if (now() - lastLogged < 60_000) return;
    logger.info(
      { restarts: count, longestHoldMs: Math.round(longestMs * 10) / 10, frames: restart.frames, readersKeptIt: restart.busy },
      'The WAL grew past its bound under writes faster than background checkpoints; blocking checkpoints started it over, holding writers meanwhile.',
    );
    lastLogged = now();
    count = 0;
    longestMs = 0;
  };
}
