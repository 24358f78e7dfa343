/**
 * scrypt on threads of its own. node:crypto's async scrypt runs on libuv's thread pool, which file
 * reads and writes share (4 threads by default): a flood of key checks (~50 ms of CPU each) queued
 * ahead of the store's writes and stalled uploads for seconds. Here worker threads run
 * scryptSync, one derivation at a time each, so the pool stays free for file I/O; the hashing
 * thread of large bodies (off-thread-digest.ts) is not used either, so uploads do not wait behind
 * key checks.
 *
 * Most derivations run on one thread at a lower priority than the process (nice 10, so a flood of
 * key checks takes spare CPU rather than time from requests), behind a bounded queue shared fairly
 * between clients (FairQueue, by the client key each derivation is made for): with `maxQueued`
 * derivations waiting or running there, another takes the place of a job of the client holding
 * the most places, or is refused at once (ScryptBusyError, with an estimate of when the queue will
 * have drained); the next to run is that of the client that asked least lately. Wrong keys from
 * 16 addresses once held all 16 places, and no fresh sign-in got one.
 *
 * A client that has not asked lately (a fresh sign-in) runs on a second thread, at the process's
 * priority, with a few places of its own: it waits neither for the flood's derivation under way
 * nor for CPU the low-priority thread cannot get on a busy machine (seen: 20 hashes in 8 s there).
 * A flooding client is never fresh (every ask counts), so that thread runs at most about one
 * derivation per client address per minute.
 *
 * Threads start on first use, keep the process alive only while a derivation is under way, and
 * are ended by close(), which whoever made the ScryptThread calls.
 */
import { systemClock, type Clock } from '../clock.ts';
import { EdgeportError } from '../errors/edgeport-error.ts';
import { FairQueue } from './fair-queue.ts';
import { ScryptWorker, type ScryptJob } from './scrypt-worker.ts';

export interface ScryptCost {
  N: number;
  r: number;
  p: number;
  keyLength: number;
}

/** The first estimate of a derivation's time, before one has been measured. */
const INITIAL_ESTIMATE_MS = 50;
export const DEFAULT_MAX_QUEUED = 16;
/**
 * How fast a client's asks are forgotten (halved): the failure window of the credential limits,
 * over which a flooding address keeps its low priority.
 */
const USAGE_HALF_LIFE_MS = 60_000;
/** Clients whose asks are remembered (as many as the credential limits track). */
const MAX_CLIENTS = 10_000;
/** The client of derivations made for no client (bootstrap, the CLI): never fresh. */
const NO_CLIENT = '';
/** A client that asked less than this lately is fresh: its one ask, if any, was over a minute (a half-life) ago. */
const FRESH_BELOW = 0.5;
/** Fresh derivations waiting for the fresh thread at most; beyond, they queue like any other. */
const FRESH_MAX_WAITING = 4;

/**
 * The main thread's nice value (Linux): below the event loop and libuv's I/O threads, so a flood of
 * key checks takes spare CPU rather than time from requests; on an idle machine it still runs at
 * full speed.
 */
const THREAD_NICE = 10;

/** The queue is full: refused without waiting. */
export class ScryptBusyError extends EdgeportError<'CRYPTO_SCRYPT_BUSY'> {
  /** When the derivations queued now should be done. */
  readonly retryAfterMs: number;
  constructor(retryAfterMs: number) {
    super('CRYPTO_SCRYPT_BUSY', 'user', 'Too many key checks are waiting for the hashing thread: try again shortly.');
    this.retryAfterMs = retryAfterMs;
  }
}

interface Job {
  job: ScryptJob;
  resolve(bytes: Buffer): void;
  reject(error: Error): void;
}

export class ScryptThread {
  readonly #waiting: FairQueue<Job>;
  readonly #worker = new ScryptWorker(THREAD_NICE);
  readonly #freshWorker = new ScryptWorker(0);
  readonly #freshWaiting: Job[] = [];
  /**
   * A derivation is under way on each thread, as this class sees it: set when one is started and
   * cleared only when none follows, so a derive() made while a finished one's result is handed out
   * (its caller's continuation runs first) queues instead of starting on the thread.
   */
  #busy = false;
  #freshBusy = false;
  #estimateMs = INITIAL_ESTIMATE_MS;
  #closed = false;

  constructor(options: { maxQueued?: number; clock?: Clock } = {}) {
    // One place is the running derivation's.
    this.#waiting = new FairQueue<Job>(
      { capacity: (options.maxQueued ?? DEFAULT_MAX_QUEUED) - 1, halfLifeMs: USAGE_HALF_LIFE_MS, maxClients: MAX_CLIENTS },
      options.clock ?? systemClock,
    );
  }

  /** Derivations waiting or running. */
  get queued(): number {
    return this.#waiting.size + (this.#busy ? 1 : 0) + this.#freshWaiting.length + (this.#freshBusy ? 1 : 0);
  }

  /**
   * scrypt(password, salt) with the given cost, on a thread, queued fairly for `client` (a
   * clientKey; derivations made for no client share one). Rejects with ScryptBusyError at once when
   * the queue is full and `client` may take no place in it, or later when another client takes its
   * place before it runs.
   */
  derive(password: string, salt: Uint8Array, cost: ScryptCost, client: string = NO_CLIENT): Promise<Buffer> {
    if (this.#closed) return Promise.reject(new Error('The scrypt thread is closed.'));
    return new Promise<Buffer>((resolve, reject) => {
      const job: Job = { job: { password, salt, N: cost.N, r: cost.r, p: cost.p, keyLength: cost.keyLength }, resolve, reject };
      const fresh = client !== NO_CLIENT && this.#waiting.usageOf(client) < FRESH_BELOW;
      if (fresh && (!this.#freshBusy || this.#freshWaiting.length < FRESH_MAX_WAITING)) {
        this.#waiting.charge(client);
        if (this.#freshBusy) this.#freshWaiting.push(job);
        else this.#runFresh(job);
        return;
      }
      if (!this.#busy) {
        this.#waiting.charge(client);
        this.#run(job);
        return;
      }
      const offer = this.#waiting.offer(client, job);
      if (!offer.admitted) reject(this.#busyError());
      else if (offer.evicted) offer.evicted.reject(this.#busyError());
    });
  }

  /** Ends the threads; derivations still queued are rejected. */
  async close(): Promise<void> {
    this.#closed = true;
    const error = new Error('The scrypt thread was closed.');
    for (const job of [...this.#waiting.drain(), ...this.#freshWaiting.splice(0)]) job.reject(error);
    await Promise.all([this.#worker.close(error), this.#freshWorker.close(error)]);
  }

  #busyError(): ScryptBusyError {
    return new ScryptBusyError(Math.ceil((this.#waiting.size + 1) * this.#estimateMs));
  }

  /** Runs `job` on the low-priority thread, then what the fair queue gives next; measures each run for the busy estimate. */
  #run(job: Job): void {
    this.#busy = true;
    this.#drive(
      this.#worker,
      job,
      () => this.#waiting.take(),
      () => {
        this.#busy = false;
      },
      (ms) => {
        this.#estimateMs = 0.8 * this.#estimateMs + 0.2 * ms;
      },
    );
  }

  /** Runs `job` on the fresh clients' thread, then the next fresh one waiting. */
  #runFresh(job: Job): void {
    this.#freshBusy = true;
    this.#drive(
      this.#freshWorker,
      job,
      () => this.#freshWaiting.shift(),
      () => {
        this.#freshBusy = false;
      },
    );
  }

  /**
   * Runs `job` on `worker`; when it is done, the job `following` gives is started before the
   * result is handed out (so a derive() made by the caller's continuation queues behind it), or
   * `idle` marks the thread free.
   */
  #drive(worker: ScryptWorker, job: Job, following: () => Job | undefined, idle: () => void, measured?: (ms: number) => void): void {
    const next = () => {
      const queued = this.#closed ? undefined : following();
      if (queued) this.#drive(worker, queued, following, idle, measured);
      else idle();
    };
    worker.run(job.job).then(
      ({ bytes, ms }) => {
        measured?.(ms);
        next();
        job.resolve(bytes);
      },
      (error: Error) => {
        next();
        job.reject(error);
      },
    );
  }
}
