/**
 * One script worker as the server thread sees it: the thread, its heartbeat, the requests it
 * holds, and the routing of its messages to them. The pool decides when a slot is replaced.
 */
import { Worker } from 'node:worker_threads';
import type { ScriptFailure } from './errors.ts';
import { Outbox } from './outbox.ts';
import {
  FromWorker, HEARTBEAT, ToWorker, type FromWorkerMessage, type ScriptErrorInfo, type ToWorkerMessage, type WorkerInit,
} from './protocol.ts';

/** A message the worker sends about one request. */
export type ExchangeMessage = Extract<FromWorkerMessage, { id: number }>;

/** One request as the pool sees it (implemented by HttpExchange). */
export interface Exchange {
  /** When the pool handed it to a worker (performance.now()), for the CPU watchdog. */
  dispatchedAt: number;
  /** A worker took the request: send it (and its body) through `slot`. */
  start(slot: WorkerSlot, id: number): void;
  receive(message: ExchangeMessage): void;
  /** The worker was cut off or died before finishing the response. */
  fail(failure: ScriptFailure): void;
}

export interface SlotEvents {
  log(message: Extract<FromWorkerMessage, { t: FromWorker.Log }>): void;
  /** The worker stopped (error or exit) while the slot was alive. */
  died(slot: WorkerSlot, failure: ScriptFailure, detail: string): void;
}

const BOOT = new URL('./worker-boot.js', import.meta.url);

export class WorkerSlot {
  readonly worker: Worker;
  readonly heartbeat: Int32Array;
  readonly inflight = new Map<number, Exchange>();
  /** Serving requests. */
  ready = false;
  /** False once retired: its messages and exit are ignored. */
  alive = true;
  lastBeat = 0;
  lastBeatAt = performance.now();
  /** Resolves when the script is loaded; rejects with the reason it could not be. */
  readonly started: Promise<void>;
  readonly #events: SlotEvents;
  readonly #outbox: Outbox<ToWorkerMessage>;
  #startup: { resolve: () => void; reject: (error: Error) => void } | undefined;
  #exitFailure: ScriptFailure = 'crash';
  /** Why the worker stopped, when known before it exits (reported if it was still starting). */
  #exitReason: string | undefined;

  constructor(init: Omit<WorkerInit, 'heartbeat'>, events: SlotEvents) {
    const shared = new SharedArrayBuffer(HEARTBEAT.slots * Int32Array.BYTES_PER_ELEMENT);
    this.heartbeat = new Int32Array(shared);
    this.#events = events;
    this.worker = new Worker(BOOT, {
      workerData: { ...init, heartbeat: shared } satisfies WorkerInit,
      resourceLimits: { maxOldGenerationSizeMb: init.script.limits.memoryMb },
    });
    this.#outbox = new Outbox(this.worker);
    this.started = new Promise<void>((resolve, reject) => {
      this.#startup = { resolve, reject };
    });
    this.started.catch(() => undefined);
    this.worker.on('message', (batch: FromWorkerMessage[]) => {
      for (const message of batch) this.#receive(message);
    });
    this.worker.on('error', (error: Error & { code?: string }) => {
      this.#exitFailure = error.code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'memory' : 'crash';
      this.#exitReason ??= error.message;
      if (this.alive) events.died(this, this.#exitFailure, error.message);
    });
    this.worker.on('exit', (code) => {
      this.#settleStartup(new Error(this.#exitReason ?? `The worker exited (code ${code}) while loading the script.`));
      if (this.alive) events.died(this, this.#exitFailure, `The worker exited with code ${code}.`);
    });
  }

  /** Queues a message for the worker (sent at the end of this event-loop turn, with the others). */
  post(message: ToWorkerMessage, transfer?: readonly ArrayBuffer[]): void {
    this.#outbox.post(message, transfer);
  }

  /** Stops the thread; `reason` is what a startup still in progress fails with. */
  terminate(reason?: string): Promise<number> {
    this.#exitReason ??= reason;
    return this.worker.terminate();
  }

  /** The client went away: tell the worker, and forget the request. */
  abort(id: number): void {
    if (!this.inflight.delete(id) || !this.alive) return;
    this.post({ t: ToWorker.Abort, id });
  }

  #receive(message: FromWorkerMessage): void {
    switch (message.t) {
      case FromWorker.Ready:
        this.ready = true;
        this.lastBeatAt = performance.now();
        this.#settleStartup();
        return;
      case FromWorker.StartupFailed:
        this.#settleStartup(startupError(message.error));
        return;
      case FromWorker.Log:
        if (this.alive) this.#events.log(message);
        return;
      default:
        this.#route(message);
    }
  }

  #settleStartup(error?: Error): void {
    const startup = this.#startup;
    this.#startup = undefined;
    if (error === undefined) startup?.resolve();
    else startup?.reject(error);
  }

  #route(message: ExchangeMessage): void {
    if (!this.alive) return;
    const exchange = this.inflight.get(message.id);
    if (exchange === undefined) return;
    // After these the worker holds nothing more of the request; the server may still be writing.
    const t = message.t;
    if (t === FromWorker.Response || t === FromWorker.End || t === FromWorker.Segments || t === FromWorker.Error) this.inflight.delete(message.id);
    exchange.receive(message);
  }
}

function startupError(info: ScriptErrorInfo): Error {
  const error = new Error(info.message);
  if (info.stack) error.stack = info.stack;
  return error;
}
