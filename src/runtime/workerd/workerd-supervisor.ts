/**
 * Keeps one script's workerd process serving: restarts it (with back-off) when it dies, and cuts it
 * off when its isolate stops answering for longer than the script's CPU limit: open-source workerd
 * enforces no CPU limit itself, so while requests are in flight the supervisor sends a probe that
 * the entry module answers without calling the script; a probe unanswered for `cpuMs` means the
 * script has held the isolate that long, and the process is replaced. The memory limit is V8's own
 * heap limit (workerd-config.ts): a script past it ends the process with V8's out-of-memory error,
 * which the supervisor reads on workerd's stderr and reports as the `memory` failure. Each process
 * is a generation: a request remembers the one it went to, and learns from it why it failed.
 */
import { rm } from 'node:fs/promises';
import { request } from 'node:http';
import type { Logger } from '../../core/log.ts';
import { within } from '../../core/within.ts';
import type { ScriptFailure } from '../errors.ts';
import type { ScriptOutputLog } from './script-output-log.ts';
import { WorkerdProcess } from './workerd-process.ts';
import { WorkerdConnections } from './workerd-connections.ts';

export interface Generation {
  readonly number: number;
  /** Requests sent to this process and not yet finished. */
  inflight: number;
  /** Why its requests failed if it goes away (crash unless the supervisor cut it off). */
  failure: ScriptFailure;
  alive: boolean;
  /**
   * Kept-alive connections to this process only: destroyed when it exits, so a request never goes
   * out over a socket of a process that has died (it would be answered 502 instead of reaching
   * the replacement). Edgeport's own client (workerd-connections.ts) rather than undici's pool or
   * node:http's agent: it reads answers into reused buffers.
   */
  readonly connections: WorkerdConnections;
  /**
   * Resolves once why the process failed is known: V8's out-of-memory error was read, or the
   * process exited and all it printed was read (then it is a crash, unless cut off).
   */
  failureKnown: Promise<void>;
}

/**
 * Kept-alive connections to the workerd serving at `socketPath`, as many as requests in flight (as
 * node:http's agent did: a long-streaming answer never holds others up). No timeouts of their own:
 * a script may take as long as its limits allow, and stream its answer for as long as it likes.
 */
function connectionsTo(socketPath: string): WorkerdConnections {
  return new WorkerdConnections(socketPath);
}

function destroyConnections(generation: Generation | undefined): void {
  // Requests still on them fail, and are answered with why their process went away.
  generation?.connections.destroy().catch(() => undefined);
}

/** What workerd prints when V8 reaches the heap limit (--max-old-space-size), just before the process aborts. */
const OUT_OF_MEMORY = /V8 fatal error.*(heap limit|out of memory)/i;
/** How long a request that failed with its process waits to learn why the process died (then: a crash). */
const FAILURE_KNOWN_WITHIN_MS = 5_000;

/**
 * Why `generation`'s process failed: at once when the supervisor cut it off, else once V8's
 * out-of-memory line or the end of all the process printed has been read, at most
 * FAILURE_KNOWN_WITHIN_MS (then it counts as a crash).
 */
export async function failureOf(generation: Generation): Promise<ScriptFailure> {
  if (generation.failure === 'crash') await within(generation.failureKnown, FAILURE_KNOWN_WITHIN_MS, undefined);
  return generation.failure;
}

export interface SupervisorOptions {
  scriptName: string;
  configFile: string;
  cwd: string;
  /** Where workerd serves the script (for the probe). */
  socketPath: string;
  /** The request header the entry module answers as a probe. */
  probeHeader: string;
  cpuMs: number;
  logger: Logger;
  /** Where what workerd prints goes (within the script's log limits). */
  output: ScriptOutputLog;
}

const RESTART_DELAY_MS = { first: 250, max: 30_000 } as const;
/** How long a request waits for a restarting process before it is answered 503. */
const WAIT_FOR_RESTART_MS = 10_000;

export class WorkerdSupervisor {
  readonly #options: SupervisorOptions;
  #process: WorkerdProcess | undefined;
  #generation: Generation | undefined;
  #generations = 0;
  #waiting: Array<(generation: Generation | undefined) => void> = [];
  #restartDelay: number = RESTART_DELAY_MS.first;
  #restartTimer: NodeJS.Timeout | undefined;
  #probe: { timer: NodeJS.Timeout; outstanding: boolean };
  #closing = false;
  /** A start in progress: close() waits for it, so that no workerd starts after the host stopped. */
  #starting: Promise<void> | undefined;

  private constructor(options: SupervisorOptions) {
    this.#options = options;
    const every = Math.min(1_000, Math.max(10, Math.round(options.cpuMs / 5)));
    this.#probe = { timer: setInterval(() => this.#sendProbe(), every), outstanding: false };
    this.#probe.timer.unref();
  }

  /** Starts the first process; rejects with workerd's errors if it cannot start. */
  static async start(options: SupervisorOptions): Promise<WorkerdSupervisor> {
    const supervisor = new WorkerdSupervisor(options);
    try {
      await supervisor.#startProcess();
    } catch (error) {
      clearInterval(supervisor.#probe.timer);
      throw error;
    }
    return supervisor;
  }

  /** The process serving now; while one restarts, waits for it (a while); undefined when stopping or not back in time. */
  serving(): Generation | Promise<Generation | undefined> | undefined {
    if (this.#closing) return undefined;
    if (this.#generation?.alive) return this.#generation;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#waiting = this.#waiting.filter((waiter) => waiter !== settle);
        resolve(undefined);
      }, WAIT_FOR_RESTART_MS);
      const settle = (generation: Generation | undefined) => {
        clearTimeout(timer);
        resolve(generation);
      };
      this.#waiting.push(settle);
    });
  }

  async close(): Promise<void> {
    this.#closing = true;
    clearInterval(this.#probe.timer);
    clearTimeout(this.#restartTimer);
    for (const waiter of this.#waiting.splice(0)) waiter(undefined);
    if (this.#generation) this.#generation.alive = false;
    await this.#starting?.catch(() => undefined);
    await this.#process?.stop();
    destroyConnections(this.#generation);
  }

  #startProcess(): Promise<void> {
    const starting = this.#spawn().finally(() => {
      if (this.#starting === starting) this.#starting = undefined;
    });
    this.#starting = starting;
    return starting;
  }

  async #spawn(): Promise<void> {
    const { logger, scriptName, output } = this.#options;
    let knownNow: () => void = () => undefined;
    const generation: Generation = {
      number: ++this.#generations, inflight: 0, failure: 'crash', alive: false, connections: connectionsTo(this.#options.socketPath),
      failureKnown: new Promise<void>((resolve) => { knownNow = resolve; }),
    };
    // A killed workerd leaves its socket file behind, and workerd will not listen over it.
    await rm(this.#options.socketPath, { force: true });
    const process = await WorkerdProcess.start({
      configFile: this.#options.configFile,
      cwd: this.#options.cwd,
      maxLineBytes: output.maxLineBytes,
      onOutput(stream, line, cutBytes) {
        // The process is aborting: no new request may go to it (they wait for its replacement).
        // Read before the log limit, which may drop the line.
        if (stream === 'stderr' && OUT_OF_MEMORY.test(line)) {
          generation.failure = 'memory';
          generation.alive = false;
          knownNow();
        }
        output.output(stream, line, cutBytes);
      },
      onExit: (code, signal) => {
        generation.alive = false;
        destroyConnections(generation);
        if (this.#closing) return;
        void failureOf(generation).then((failure) => {
          const memory = failure === 'memory';
          logger.error({ script: scriptName, code, signal, failure: memory ? failure : undefined, inflight: generation.inflight },
            memory ? 'The script exceeded its memory limit; the script runtime (workerd) is restarted.' : 'The script runtime (workerd) stopped unexpectedly; restarting it.');
        });
        this.#scheduleRestart();
      },
    });
    if (this.#closing) {
      await process.stop();
      destroyConnections(generation);
      return;
    }
    generation.alive = true;
    void process.closed.then(knownNow);
    this.#process = process;
    this.#generation = generation;
    this.#probe.outstanding = false;
    for (const waiter of this.#waiting.splice(0)) waiter(generation);
  }

  #scheduleRestart(): void {
    const delay = this.#restartDelay;
    this.#restartDelay = Math.min(delay * 2, RESTART_DELAY_MS.max);
    this.#restartTimer = setTimeout(() => {
      this.#startProcess().then(() => {
        this.#restartDelay = RESTART_DELAY_MS.first;
        this.#options.logger.info({ script: this.#options.scriptName }, 'The script runtime (workerd) was restarted.');
      }, (error: unknown) => {
        if (this.#closing) return;
        this.#options.logger.error({ script: this.#options.scriptName, error: (error as Error).message }, 'The script runtime (workerd) failed to restart; retrying.');
        this.#scheduleRestart();
      });
    }, delay);
    this.#restartTimer.unref();
  }

  /** While requests are in flight, asks the isolate for an answer; none within the CPU limit cuts the process off. */
  #sendProbe(): void {
    const generation = this.#generation;
    if (!generation?.alive || generation.inflight === 0 || this.#probe.outstanding) return;
    this.#probe.outstanding = true;
    const { cpuMs, socketPath, probeHeader } = this.#options;
    const probe = request({ socketPath, path: '/', method: 'GET', headers: { [probeHeader]: '1' }, agent: false });
    const deadline = setTimeout(() => {
      probe.destroy();
      if (generation !== this.#generation || !generation.alive) return;
      void this.#cutOff(generation, 'cpu', `The script held its isolate for more than ${cpuMs} ms.`);
    }, cpuMs);
    const done = () => {
      clearTimeout(deadline);
      if (generation === this.#generation) this.#probe.outstanding = false;
    };
    probe.on('response', (res) => {
      res.resume();
      done();
    });
    probe.on('error', done);
    probe.end();
  }

  /** Replaces the process at once; its requests fail with `failure`. */
  async #cutOff(generation: Generation, failure: ScriptFailure, detail: string): Promise<void> {
    generation.failure = failure;
    generation.alive = false;
    this.#options.logger.warn({ script: this.#options.scriptName, failure, requests: generation.inflight, detail }, 'Script runtime cut off; its requests were answered with an error.');
    const process = this.#process;
    this.#process = undefined;
    await process?.kill();
    destroyConnections(generation);
    if (!this.#closing) this.#scheduleRestart();
  }
}
