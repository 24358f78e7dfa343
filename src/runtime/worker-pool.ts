/**
 * The workers that run one script (DESIGN.md "Script isolation"). Requests go to the least busy
 * worker; a worker that blocks past the CPU limit, runs out of memory or dies is cut off, its
 * requests answered with an error, and a new worker takes its place while the others keep serving.
 */
import type { Logger } from '../core/log.ts';
import { RuntimeError, type ScriptFailure } from './errors.ts';
import { HEARTBEAT, type FromWorker, type FromWorkerMessage } from './protocol.ts';
import type { ScriptConfig } from './script-config.ts';
import { WorkerSlot, type Exchange, type SlotEvents } from './worker-slot.ts';

export interface WorkerPoolOptions {
  script: ScriptConfig;
  /** The account whose buckets the script binds (null: the buckets of no account, `edgeport dev` before any account exists). */
  accountId: string | null;
  /** The store's data dir (workers open it only when the script binds buckets). */
  dataDir: string;
  /** `[blobs] url`, when blobs live outside the data dir. */
  blobsUrl?: string | undefined;
  /** `[db] url`, when the metadata is in PostgreSQL. */
  dbUrl?: string | undefined;
  logger: Logger;
  /** Workers running the script; each serves many requests at once. Default 2. */
  size?: number;
}

/** Loading a script (tsx, the store, the module) may block longer than a request may. */
const STARTUP_BUDGET_MS = 10_000;
const RESPAWN_DELAY_MS = { first: 250, max: 30_000 } as const;

export class WorkerPool {
  readonly #options: WorkerPoolOptions;
  readonly #slots: WorkerSlot[] = [];
  readonly #pending: Exchange[] = [];
  readonly #events: SlotEvents;
  readonly #watchdog: NodeJS.Timeout;
  readonly #heartbeatMs: number;
  #nextId = 1;
  #respawnDelay: number = RESPAWN_DELAY_MS.first;
  #closing = false;

  private constructor(options: WorkerPoolOptions) {
    this.#options = options;
    const cpuMs = options.script.limits.cpuMs;
    // A breach is seen between cpuMs and cpuMs + heartbeat + check interval after the loop blocked.
    this.#heartbeatMs = clamp(Math.round(cpuMs / 10), 5, 100);
    this.#events = {
      log: (message) => this.#log(message),
      died: (slot, failure, detail) => this.#retire(slot, failure, detail),
    };
    this.#watchdog = setInterval(() => this.#checkHeartbeats(), clamp(Math.round(cpuMs / 5), 10, 200));
    this.#watchdog.unref();
  }

  /** Starts every worker and resolves once all have loaded the script; rejects if it cannot load. */
  static async start(options: WorkerPoolOptions): Promise<WorkerPool> {
    const pool = new WorkerPool(options);
    const slots = Array.from({ length: Math.max(1, options.size ?? 2) }, (_, index) => pool.#spawn(index, false));
    try {
      await Promise.all(slots.map((slot) => slot.started));
    } catch (error) {
      await pool.close();
      const { name, main } = options.script;
      throw new RuntimeError('RUNTIME_SCRIPT_START_FAILED', `Script ${JSON.stringify(name)} (${main}) failed to start: ${(error as Error).message}`, {
        cause: error,
      });
    }
    return pool;
  }

  /** Hands a request to the least busy ready worker, or queues it until one is ready. */
  dispatch(exchange: Exchange): void {
    const slot = this.#pick();
    if (slot === undefined) {
      if (this.#closing) exchange.fail('unavailable');
      else this.#pending.push(exchange);
      return;
    }
    const id = this.#nextId++;
    exchange.dispatchedAt = performance.now();
    slot.inflight.set(id, exchange);
    exchange.start(slot, id);
  }

  /** Stops every worker; requests still in flight are answered 503. */
  async close(): Promise<void> {
    this.#closing = true;
    clearInterval(this.#watchdog);
    for (const exchange of this.#pending.splice(0)) exchange.fail('unavailable');
    await Promise.all(this.#slots.map(async (slot) => {
      this.#release(slot, 'unavailable');
      await slot.terminate('The server is stopping.');
    }));
  }

  /**
   * The ready worker with the fewest requests in flight; ties go to the first. Concentrating light
   * load on one worker keeps its message batches large (fewer cross-thread wake-ups), while a worker
   * that falls behind collects requests and so sheds new ones to the others.
   */
  #pick(): WorkerSlot | undefined {
    let best: WorkerSlot | undefined;
    for (const slot of this.#slots) {
      if (slot.ready && (best === undefined || slot.inflight.size < best.inflight.size)) best = slot;
    }
    return best;
  }

  #spawn(index: number, replacement: boolean): WorkerSlot {
    const { script, accountId, dataDir, blobsUrl, dbUrl } = this.#options;
    const slot = new WorkerSlot({ script, accountId, dataDir, blobsUrl, dbUrl, heartbeatIntervalMs: this.#heartbeatMs }, this.#events);
    this.#slots[index] = slot;
    slot.started.then(() => {
      this.#respawnDelay = RESPAWN_DELAY_MS.first;
      if (replacement) this.#options.logger.info({ script: script.name }, 'Script worker replaced.');
      for (const exchange of this.#pending.splice(0)) this.dispatch(exchange);
    }, (error: unknown) => {
      this.#release(slot, 'unavailable');
      void slot.terminate();
      if (!replacement || this.#closing) return;
      this.#options.logger.error({ script: script.name, error: (error as Error).message }, 'Script worker failed to start; retrying.');
      if (!this.#slots.some((other) => other.ready)) for (const exchange of this.#pending.splice(0)) exchange.fail('unavailable');
      const delay = this.#respawnDelay;
      this.#respawnDelay = Math.min(delay * 2, RESPAWN_DELAY_MS.max);
      setTimeout(() => {
        if (!this.#closing && this.#slots[index] === slot) this.#spawn(index, true);
      }, delay).unref();
    });
    return slot;
  }

  /** Cuts a slot off: answers its requests with `failure`, terminates it, starts a replacement. */
  #retire(slot: WorkerSlot, failure: ScriptFailure, detail: string): void {
    if (!slot.alive) return;
    const wasReady = slot.ready;
    const requests = this.#release(slot, failure);
    void slot.terminate(detail);
    if (this.#closing) return;
    const level = failure === 'crash' ? 'error' : 'warn';
    this.#options.logger[level]({ script: this.#options.script.name, failure, requests, detail }, 'Script worker cut off; its requests were answered with an error.');
    // A worker that never became ready is respawned (with back-off) by its startup failure.
    const index = this.#slots.indexOf(slot);
    if (wasReady && index >= 0) this.#spawn(index, true);
  }

  /** Marks a slot dead and fails what it held; returns how many requests that was. */
  #release(slot: WorkerSlot, failure: ScriptFailure): number {
    slot.alive = false;
    slot.ready = false;
    const exchanges = [...slot.inflight.values()];
    slot.inflight.clear();
    for (const exchange of exchanges) exchange.fail(failure);
    return exchanges.length;
  }

  #checkHeartbeats(): void {
    const now = performance.now();
    const cpuMs = this.#options.script.limits.cpuMs;
    for (const slot of this.#slots) {
      if (!slot.alive) continue;
      const beat = Atomics.load(slot.heartbeat, HEARTBEAT.beat);
      if (beat !== slot.lastBeat) {
        slot.lastBeat = beat;
        slot.lastBeatAt = now;
        continue;
      }
      const limit = slot.ready ? cpuMs : Math.max(cpuMs, STARTUP_BUDGET_MS);
      const busy = !slot.ready || slot.inflight.size > 0 || Atomics.load(slot.heartbeat, HEARTBEAT.busy) > 0;
      // No request is cut off before it has been with the worker for the whole limit, even if the
      // worker's last beat is older (a slow start, or an overloaded machine delaying its timers).
      const oldest = slot.inflight.values().next().value;
      const since = Math.max(slot.lastBeatAt, oldest?.dispatchedAt ?? 0);
      if (busy && now - since > limit + this.#heartbeatMs) {
        this.#retire(slot, 'cpu', `The worker's event loop was blocked for more than ${limit} ms${slot.ready ? '' : ' while loading the script'}.`);
      }
    }
  }

  #log(message: Extract<FromWorkerMessage, { t: FromWorker.Log }>): void {
    this.#options.logger[message.level]({ script: this.#options.script.name, error: message.error?.message, stack: message.error?.stack }, message.msg);
  }
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}
