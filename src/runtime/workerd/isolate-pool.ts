/**
 * Where scripts run: one workerd process per account that has running scripts (and one for the
 * operator's configured scripts), each script an isolate in its account's process
 * (isolate-process.ts). An account's endless loop or heap bomb then costs only that account's
 * process; processes grow with active accounts, not with scripts. The instance runs at most
 * `maxProcesses` at once: to start one more, the process idle longest (no request in flight) is
 * stopped; with every one busy, the newcomer waits for none and is answered 503.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../core/log.ts';
import type { ScriptFailure } from '../errors.ts';
import { IsolateProcess, type IsolateRegistration, type ProcessLimits } from './isolate-process.ts';

export interface PoolLimits {
  /** Account processes running at once. */
  maxProcesses: number;
  /** Each account's share. */
  account: ProcessLimits;
}

/** Defaults of `[workers]` (src/config/defaults.ts has the reasons). */
export const POOL_LIMIT_DEFAULTS: PoolLimits = {
  maxProcesses: 32,
  account: { maxIsolates: 100, maxRequests: 100, queueMs: 5_000, memoryBytes: 1024 * 1024 * 1024 },
};

export interface PoolOptions {
  logger: Logger;
  limits?: PoolLimits;
}

/** A script registered in its account's process: a node:http handler, and close() to forget it. */
export interface PooledScript {
  readonly handle: (req: IncomingMessage, res: ServerResponse) => void;
  close(): Promise<void>;
}

export interface PoolStats {
  /** Account processes running. */
  processes: number;
  /** Scripts registered (each loads as an isolate on demand). */
  scripts: number;
  /** Isolates loaded now. */
  isolates: number;
  /** Requests in flight. */
  inflight: number;
  /** Requests refused since start, by why. */
  refused: Record<'account-requests' | 'account-scripts' | 'unavailable', number>;
}

export class IsolatePool {
  readonly #logger: Logger;
  readonly #limits: PoolLimits;
  /** By tenant: an account id, or a name of the server's own (`config`). */
  readonly #processes = new Map<string, IsolateProcess>();
  readonly #refused: PoolStats['refused'] = { 'account-requests': 0, 'account-scripts': 0, unavailable: 0 };
  #closed = false;

  constructor(options: PoolOptions) {
    this.#logger = options.logger;
    this.#limits = options.limits ?? POOL_LIMIT_DEFAULTS;
  }

  /**
   * Registers a script in `tenant`'s process and loads its isolate; rejects with
   * RUNTIME_SCRIPT_START_FAILED when it cannot load, RUNTIME_NO_CAPACITY when no process can start.
   */
  async open(tenant: string, describe: { name: string; accountId: string | null }, registration: IsolateRegistration): Promise<PooledScript> {
    if (this.#closed) throw new Error('The script pool is closed.');
    let process = this.#processes.get(tenant);
    if (process?.closing) {
      // Its last script went a moment ago: a new process takes its place once it has stopped.
      await process.close();
      if (this.#processes.get(tenant) === process) this.#processes.delete(tenant);
      process = this.#processes.get(tenant);
    }
    if (process === undefined) {
      process = new IsolateProcess({
        name: describe.name,
        accountId: describe.accountId,
        logger: this.#logger,
        limits: this.#limits.account,
        admit: (starting) => this.#admit(starting),
        changed: (event) => this.#changed(event),
      });
      this.#processes.set(tenant, process);
    }
    const owner = process;
    const isolate = owner.register(registration);
    const forget = async () => {
      await owner.unregister(isolate);
      if (owner.registered === 0 && this.#processes.get(tenant) === owner) this.#processes.delete(tenant);
    };
    try {
      await owner.load(isolate);
    } catch (error) {
      await forget();
      throw error;
    }
    return { handle: (req, res) => owner.handle(isolate, req, res), close: forget };
  }

  stats(): PoolStats {
    const stats: PoolStats = { processes: 0, scripts: 0, isolates: 0, inflight: 0, refused: { ...this.#refused } };
    for (const process of this.#processes.values()) {
      if (process.running) stats.processes++;
      stats.scripts += process.registered;
      stats.isolates += process.loaded;
      stats.inflight += process.inflight;
    }
    return stats;
  }

  async close(): Promise<void> {
    this.#closed = true;
    const processes = [...this.#processes.values()];
    this.#processes.clear();
    await Promise.all(processes.map((process) => process.close()));
  }

  /** A place for `starting` among the running processes: the idle one used longest ago is stopped if need be. */
  #admit(starting: IsolateProcess): boolean {
    if (this.#closed) return false;
    let running = 0;
    let idlest: IsolateProcess | undefined;
    for (const process of this.#processes.values()) {
      if (process === starting || !process.running) continue;
      running++;
      if (process.inflight === 0 && (idlest === undefined || process.lastUsed < idlest.lastUsed)) idlest = process;
    }
    if (running < this.#limits.maxProcesses) return true;
    if (idlest === undefined) {
      this.#logger.warn(
        { workerd: starting.name, running },
        'A script runtime (workerd) cannot start: every running one is busy ([workers] max_account_processes).',
      );
      return false;
    }
    this.#logger.info({ workerd: idlest.name }, "The script runtime (workerd) idle longest was stopped to make room for another account's.");
    void idlest.stop();
    return true;
  }

  #changed(event: 'started' | 'stopped' | ScriptFailure): void {
    if (event === 'account-requests' || event === 'account-scripts' || event === 'unavailable') this.#refused[event]++;
  }
}
