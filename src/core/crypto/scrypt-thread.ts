/**
 * scrypt on a thread of its own. node:crypto's async scrypt runs on libuv's thread pool, which file
 * reads and writes share (4 threads by default): a flood of key checks (~50 ms of CPU each) queued
 * ahead of the store's writes and stalled uploads for seconds. Here one worker thread runs
 * scryptSync, one derivation at a time, so the pool stays free for file I/O; the hashing thread of
 * large bodies (off-thread-digest.ts) is not used either, so uploads do not wait behind key checks.
 *
 * The queue is bounded and fair between clients (FairQueue, by the client key each derivation is
 * made for): with `maxQueued` derivations waiting or running, another takes the place of a job of
 * the client holding the most places, or is refused at once (ScryptBusyError, with an estimate of
 * when the queue will have drained); the next to run is that of the client served least lately.
 * Wrong keys from 16 addresses once held all 16 places, and no fresh sign-in got one. The thread
 * runs at a lower priority than the process (THREAD_NICE), starts on first use, keeps the process
 * alive only while a derivation is under way, and is ended by close(), which whoever made the
 * ScryptThread calls.
 */
import { Worker } from 'node:worker_threads';
import { systemClock, type Clock } from '../clock.ts';
import { EdgeportError } from '../errors/edgeport-error.ts';
import { FairQueue } from './fair-queue.ts';

export interface ScryptCost {
  N: number;
  r: number;
  p: number;
  keyLength: number;
}

/** Largest memory a derivation may use (N=16384, r=8 needs 16 MiB). */
const MAX_MEMORY_BYTES = 64 * 1024 * 1024;
/** The first estimate of a derivation's time, before one has been measured. */
const INITIAL_ESTIMATE_MS = 50;
export const DEFAULT_MAX_QUEUED = 16;
/**
 * How fast a client's use of the thread is forgotten (halved): the failure window of the
 * credential limits, over which a flooding address keeps its low priority.
 */
const USAGE_HALF_LIFE_MS = 60_000;
/** Clients whose use is remembered (as many as the credential limits track). */
const MAX_CLIENTS = 10_000;
/** The client of derivations made for no client (bootstrap, the CLI). */
const NO_CLIENT = '';

/**
 * The thread's nice value (Linux): below the event loop and libuv's I/O threads, so a flood of key
 * checks takes spare CPU rather than time from requests; on an idle machine it still runs at full
 * speed. Linux keeps a nice value per thread (setpriority(2), "BUGS"): set on the thread's own id.
 */
const THREAD_NICE = 10;

const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { scryptSync } = require('node:crypto');
try {
  const tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop());
  require('node:os').setPriority(tid, ${THREAD_NICE});
} catch {
  // Not Linux, or no /proc: the thread keeps the process's priority.
}
parentPort.on('message', (job) => {
  const started = performance.now();
  try {
    const derived = scryptSync(job.password, job.salt, job.keyLength, { N: job.N, r: job.r, p: job.p, maxmem: job.maxmem });
    const bytes = derived.buffer.slice(derived.byteOffset, derived.byteOffset + derived.length);
    parentPort.postMessage({ id: job.id, bytes, ms: performance.now() - started }, [bytes]);
  } catch (error) {
    parentPort.postMessage({ id: job.id, error: String(error && error.message || error) });
  }
});
`;

/** The queue is full: refused without waiting. */
export class ScryptBusyError extends EdgeportError<'CRYPTO_SCRYPT_BUSY'> {
  /** When the derivations queued now should be done. */
  readonly retryAfterMs: number;
  constructor(retryAfterMs: number) {
    super('CRYPTO_SCRYPT_BUSY', 'user', 'Too many key checks are waiting for the hashing thread: try again shortly.');
    this.retryAfterMs = retryAfterMs;
  }
}

type FromWorker = { id: number; bytes: ArrayBuffer; ms: number } | { id: number; error: string };

interface Job {
  id: number;
  message: { id: number; password: string; salt: Uint8Array; N: number; r: number; p: number; keyLength: number; maxmem: number };
  resolve(bytes: Buffer): void;
  reject(error: Error): void;
}

export class ScryptThread {
  readonly #waiting: FairQueue<Job>;
  #running: Job | undefined;
  #worker: Worker | undefined;
  #nextId = 1;
  #estimateMs = INITIAL_ESTIMATE_MS;
  #closed = false;

  constructor(options: { maxQueued?: number; clock?: Clock } = {}) {
    // One place is the running derivation's.
    this.#waiting = new FairQueue<Job>({ capacity: (options.maxQueued ?? DEFAULT_MAX_QUEUED) - 1, halfLifeMs: USAGE_HALF_LIFE_MS, maxClients: MAX_CLIENTS }, options.clock ?? systemClock);
  }

  /** Derivations waiting or running. */
  get queued(): number {
    return this.#waiting.size + (this.#running ? 1 : 0);
  }

  /**
   * scrypt(password, salt) with the given cost, on the thread, queued fairly for `client` (a
   * clientKey; derivations made for no client share one). Rejects with ScryptBusyError at once when
   * the queue is full and `client` may take no place in it, or later when another client takes its
   * place before it runs.
   */
  derive(password: string, salt: Uint8Array, cost: ScryptCost, client: string = NO_CLIENT): Promise<Buffer> {
    if (this.#closed) return Promise.reject(new Error('The scrypt thread is closed.'));
    return new Promise<Buffer>((resolve, reject) => {
      const id = this.#nextId++;
      // A copy of the salt's own bytes: a pooled Buffer's whole backing store would be cloned.
      const message = { id, password, salt: new Uint8Array(salt), N: cost.N, r: cost.r, p: cost.p, keyLength: cost.keyLength, maxmem: MAX_MEMORY_BYTES };
      const job: Job = { id, message, resolve, reject };
      if (this.#running === undefined) {
        this.#waiting.charge(client);
        this.#run(job);
        return;
      }
      const offer = this.#waiting.offer(client, job);
      if (!offer.admitted) reject(this.#busy());
      else if (offer.evicted) offer.evicted.reject(this.#busy());
    });
  }

  /** Ends the thread; derivations still queued are rejected. */
  async close(): Promise<void> {
    this.#closed = true;
    const worker = this.#worker;
    this.#worker = undefined;
    this.#failAll(new Error('The scrypt thread was closed.'));
    if (worker) await worker.terminate();
  }

  #busy(): ScryptBusyError {
    return new ScryptBusyError(Math.ceil(this.queued * this.#estimateMs));
  }

  #run(job: Job): void {
    const worker = this.#started();
    this.#running = job;
    worker.ref();
    worker.postMessage(job.message);
  }

  #started(): Worker {
    if (this.#worker) return this.#worker;
    // Not the process's flags: the source is CommonJS whatever they say (e.g. --input-type=module).
    const worker = new Worker(WORKER_SOURCE, { eval: true, execArgv: [] });
    worker.unref();
    worker.on('message', (message: FromWorker) => {
      const job = this.#running;
      if (job === undefined || job.id !== message.id) return;
      this.#running = undefined;
      if ('error' in message) job.reject(new Error(`scrypt failed: ${message.error}`));
      else {
        this.#estimateMs = 0.8 * this.#estimateMs + 0.2 * message.ms;
        job.resolve(Buffer.from(message.bytes));
      }
      const next = this.#waiting.take();
      if (next) this.#run(next);
      else worker.unref();
    });
    const fail = (error: Error) => {
      // The next derivation starts a new thread.
      if (this.#worker === worker) this.#worker = undefined;
      this.#failAll(error);
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`The scrypt thread exited (code ${code}).`)));
    this.#worker = worker;
    return worker;
  }

  #failAll(error: Error): void {
    const jobs = [...(this.#running ? [this.#running] : []), ...this.#waiting.drain()];
    this.#running = undefined;
    for (const job of jobs) job.reject(error);
  }
}
