/**
 * Keeps one account's workerd process serving: restarts it (with back-off) when it dies, and cuts
 * it off when it stops answering for longer than the CPU limit: open-source workerd enforces no CPU
 * limit itself and runs all its isolates on one thread, so while requests are in flight the
 * supervisor sends a probe that the host worker answers without entering any script's isolate; a
 * probe unanswered for `cpuMs` means a script has held the thread that long, and the process is
 * replaced. The memory limits are V8's own heap limit per isolate (workerd-config.ts): a script past
 * it ends the process with V8's out-of-memory error, which the supervisor reads on workerd's stderr
 * and reports as the `memory` failure; and the process's resident memory, checked every second
 * against `memoryLimitBytes`: past it, the process is replaced (at once when it serves nothing).
 * Each process is a generation: a request remembers the one it went to, and learns from it why it
 * failed.
 */
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { request } from 'node:http';
import type { Logger } from '../../core/log.ts';
import { within } from '../../core/within.ts';
import type { ScriptFailure } from '../errors.ts';
import type { ScriptOutputLog } from './script-output-log.ts';
import { WorkerdProcess } from './workerd-process.ts';
import { WorkerdConnections } from './workerd-connections.ts';

export interface Generation {
  /** Unique in this server process (a new supervisor's generations never reuse an old one's numbers). */
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
function connectionsTo(socketPath: string, generation: () => Generation): WorkerdConnections {
  return new WorkerdConnections(socketPath, { alive: () => generation().alive });
}

function destroyConnections(generation: Generation | undefined): void {
  // Requests still on them fail, and are answered with why their process went away.
  generation?.connections.destroy().catch(() => undefined);
}

/** A process's resident set (bytes), read from /proc; undefined when it cannot be read. */
function residentBytes(pid: number): number | undefined {
  try {
    const kib = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kib === undefined ? undefined : Number(kib) * 1024;
  } catch {
    return undefined;
  }
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
  /** Names the process in the log (an account, or the config's scripts). */
  name: string;
  configFile: string;
  cwd: string;
  /** Where workerd serves the host worker (for the probe). */
  socketPath: string;
  /** The request header the host worker answers as a probe. */
  probeHeader: string;
  /** How long the process's thread may stay held (ms), asked for at each probe. */
  cpuMs: () => number;
  /** The process's resident memory above which it is replaced; undefined: no such limit. */
  memoryLimitBytes?: number;
  logger: Logger;
  /** Where what workerd prints goes (each script's lines within its log limits: output-router.ts). */
  output: Pick<ScriptOutputLog, 'output' | 'maxLineBytes'>;
}

/** Generations of every supervisor, numbered once. */
let generations = 0;
/** How often the process's resident memory is read. */
const MEMORY_CHECK_MS = 1_000;

const RESTART_DELAY_MS = { first: 250, max: 30_000 } as const;
/** How long a request waits for a restarting process before it is answered 503. */
const WAIT_FOR_RESTART_MS = 10_000;

export class WorkerdSupervisor {
  readonly #options: SupervisorOptions;
  #process: WorkerdProcess | undefined;
  #generation: Generation | undefined;
  #waiting: Array<(generation: Generation | undefined) => void> = [];
  #restartDelay: number = RESTART_DELAY_MS.first;
  #restartTimer: NodeJS.Timeout | undefined;
  #probe: { timer: NodeJS.Timeout; outstanding: boolean };
  #closing = false;
  /** A start in progress: close() waits for it, so that no workerd starts after the host stopped. */
  #starting: Promise<void> | undefined;

  #memoryTimer: NodeJS.Timeout | undefined;

  private constructor(options: SupervisorOptions) {
    this.#options = options;
    this.#probe = { timer: setTimeout(() => this.#sendProbe(), this.#probeEvery()), outstanding: false };
    this.#probe.timer.unref();
    if (options.memoryLimitBytes !== undefined) {
      this.#memoryTimer = setInterval(() => this.#checkMemory(), MEMORY_CHECK_MS);
      this.#memoryTimer.unref();
    }
  }

  /** Probes five times per CPU limit, between every 10 ms and every second. */
  #probeEvery(): number {
    return Math.min(1_000, Math.max(10, Math.round(this.#options.cpuMs() / 5)));
  }

  /** The generation serving now, if any. */
  get current(): Generation | undefined {
    return this.#generation?.alive ? this.#generation : undefined;
  }

  /** Starts the first process; rejects with workerd's errors if it cannot start. */
  static async start(options: SupervisorOptions): Promise<WorkerdSupervisor> {
    const supervisor = new WorkerdSupervisor(options);
    try {
      await supervisor.#startProcess();
    } catch (error) {
      clearTimeout(supervisor.#probe.timer);
      clearInterval(supervisor.#memoryTimer);
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
    clearTimeout(this.#probe.timer);
    clearInterval(this.#memoryTimer);
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
    const { logger, name, output } = this.#options;
    let knownNow: () => void = () => undefined;
    const generation: Generation = {
      number: ++generations,
      inflight: 0,
      failure: 'crash',
      alive: false,
      connections: connectionsTo(this.#options.socketPath, () => generation),
      failureKnown: new Promise<void>((resolve) => {
        knownNow = resolve;
      }),
    };
    // A killed workerd leaves its socket file behind, and workerd will not listen over it.
    await rm(this.#options.socketPath, { force: true });
    const process = await WorkerdProcess.start({
      configFile: this.#options.configFile,
      cwd: this.#options.cwd,
      maxLineBytes: output.maxLineBytes,
      experimental: true,
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
          logger.error(
            { workerd: name, code, signal, failure: memory ? failure : undefined, inflight: generation.inflight },
            memory
              ? 'A script exceeded its memory limit; the script runtime (workerd) is restarted.'
              : 'The script runtime (workerd) stopped unexpectedly; restarting it.',
          );
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
      this.#startProcess().then(
        () => {
          this.#restartDelay = RESTART_DELAY_MS.first;
          this.#options.logger.info({ workerd: this.#options.name }, 'The script runtime (workerd) was restarted.');
        },
        (error: unknown) => {
          if (this.#closing) return;
          this.#options.logger.error(
            { workerd: this.#options.name, error: (error as Error).message },
            'The script runtime (workerd) failed to restart; retrying.',
          );
          this.#scheduleRestart();
        },
      );
    }, delay);
    this.#restartTimer.unref();
  }

  /** While requests are in flight, asks the host worker for an answer; none within the CPU limit cuts the process off. */
  #sendProbe(): void {
    if (this.#closing) return;
    this.#probe.timer = setTimeout(() => this.#sendProbe(), this.#probeEvery());
    this.#probe.timer.unref();
    const generation = this.#generation;
    if (!generation?.alive || generation.inflight === 0 || this.#probe.outstanding) return;
    this.#probe.outstanding = true;
    const { socketPath, probeHeader } = this.#options;
    const cpuMs = this.#options.cpuMs();
    const probe = request({ socketPath, path: '/', method: 'GET', headers: { [probeHeader]: '1' }, agent: false });
    const deadline = setTimeout(() => {
      probe.destroy();
      if (generation !== this.#generation || !generation.alive) return;
      void this.#cutOff(generation, 'cpu', `A script held the process's thread for more than ${cpuMs} ms.`);
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

  /** Past the resident memory limit, the process is replaced: its requests fail with `memory`, if it has any. */
  #checkMemory(): void {
    const generation = this.#generation;
    const limit = this.#options.memoryLimitBytes;
    const pid = this.#process?.workerdPid();
    if (!generation?.alive || limit === undefined || pid === undefined) return;
    const rss = residentBytes(pid);
    if (rss === undefined || rss <= limit) return;
    void this.#cutOff(
      generation,
      'memory',
      `The process's resident memory (${Math.round(rss / 1048576)} MiB) passed its limit of ${Math.round(limit / 1048576)} MiB.`,
    );
  }

  /** Replaces the process at once; its requests fail with `failure`. */
  async #cutOff(generation: Generation, failure: ScriptFailure, detail: string): Promise<void> {
    generation.failure = failure;
    generation.alive = false;
    this.#options.logger.warn(
      { workerd: this.#options.name, failure, requests: generation.inflight, detail },
      'Script runtime cut off; its requests were answered with an error.',
    );
    const process = this.#process;
    this.#process = undefined;
    await process?.kill();
    destroyConnections(generation);
    if (!this.#closing) this.#scheduleRestart();
  }
}
