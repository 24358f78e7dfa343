/**
 * One account's workerd process (or the one of the operator's configured scripts): every script of
 * the account that runs is an isolate in it, loaded by the host worker (inside/isolate-host.ts) with
 * workerd's Worker Loader on the first request that needs it, under a loader name the server gives
 * (the isolate's id and a load count: a new name is a fresh isolate, as after an unload or a failed
 * load). The server serves the host worker the isolate's code (isolate-code.ts), its store calls
 * (store-service.ts, limited to each script's own buckets) and its traces (tail-sink.ts), and reads
 * what the process prints as each script's own (output-router.ts). The process starts when its
 * first isolate is needed and stops when none is registered; the supervisor replaces it when it
 * dies or is cut off at the CPU or memory limits, which then cost only this account.
 *
 * The account's share: at most `maxIsolates` loaded at once (the one idle longest is unloaded to
 * make room; with every one busy, the request is answered 429), at most `maxRequests` in flight
 * (as many again wait up to `queueMs`, the rest are answered 429), and the process's resident
 * memory within `memoryBytes` (past it the process is replaced).
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { guardedListener } from '../../core/http/guarded-listener.ts';
import type { Logger } from '../../core/log.ts';
import type { BindingEngine } from '../../store/binding/index.ts';
import type { BlobSource } from '../../store/segment-writer.ts';
import { answerScriptFailure, RuntimeError, SCRIPT_FAILURES, type ScriptFailure } from '../errors.ts';
import type { TailTarget } from '../host.ts';
import type { ScriptConfig, ScriptOutbound } from '../script-config.ts';
import { bundleModule } from './bundle.ts';
import { internalModuleNames, type EntryMarks, type InternalModuleNames } from './entry-module.ts';
import type { HostMarks } from './inside/isolate-host.ts';
import { isolateCode, type ScriptSource } from './isolate-code.ts';
import { newConsoleMarks, OutputRouter, type ConsoleMarks } from './output-router.ts';
import { makeScratchDir, type ScratchDir } from './scratch-dirs.ts';
import { ScriptOutputLog } from './script-output-log.ts';
import { listenOnSocket, type SocketServer } from './socket-server.ts';
import { startStoreService, type StoreCaller } from './store-service.ts';
import { startTailSink } from './tail-sink.ts';
import { CONFIG_FILES, workerdConfig } from './workerd-config.ts';
import { WORKERD } from './workerd-package.ts';
import { proxyToWorkerd } from './workerd-proxy.ts';
import { failureOf, WorkerdSupervisor, type Generation } from './workerd-supervisor.ts';

/** One account's share of the instance. */
export interface ProcessLimits {
  /** Scripts loaded (isolates) at once. */
  maxIsolates: number;
  /** Requests in flight at once; as many more wait for a place, at most `queueMs`. */
  maxRequests: number;
  queueMs: number;
  /** The process's resident memory limit (bytes). */
  memoryBytes: number;
}

export interface IsolateProcessOptions {
  /** Names the process in the log: `account <id>`, `configured scripts`... */
  name: string;
  /** The account whose workerd it is (null: the scripts of no account, or several): what its own lines are logged under. */
  accountId: string | null;
  logger: Logger;
  limits: ProcessLimits;
  /** A place to start the process (the instance's cap on processes); false when there is none. */
  admit(process: IsolateProcess): boolean;
  /** The process started or stopped, or a request was refused: the pool counts. */
  changed(event: 'started' | 'stopped' | ScriptFailure): void;
}

/** A script to run as an isolate of the process. */
export interface IsolateRegistration {
  script: ScriptConfig;
  source: ScriptSource;
  /** The script's account (its log lines' account). */
  accountId: string | null;
  /** Its account's view of the store, when it binds buckets. */
  store?: { engine: BindingEngine; blobs: BlobSource };
  /** Tail sessions: while `watched()`, each request's trace event goes to `publish`. */
  tail?: TailTarget;
}

/** A registered script: its isolate's id, marks, log budget, and where it is loaded. */
export class Isolate {
  readonly id = randomBytes(8).toString('hex');
  /** Its secret name at the store service (inside/isolate-host.ts): whoever holds it reaches this script's buckets. */
  readonly storeToken = randomBytes(16).toString('hex');
  readonly console: ConsoleMarks = newConsoleMarks();
  readonly registration: IsolateRegistration;
  readonly output: ScriptOutputLog;
  readonly outbound: number;
  inflight = 0;
  lastUsed = Date.now();
  /** Its loader name in the process generation it is loaded in. */
  loaded: { generation: number; name: string } | undefined;
  /** Its store caller, when it binds buckets. */
  readonly store: StoreCaller | undefined;

  constructor(registration: IsolateRegistration, logger: Logger, outbound: number) {
    this.registration = registration;
    this.outbound = outbound;
    this.output = new ScriptOutputLog({ logger, scriptName: registration.script.name, accountId: registration.accountId });
    this.store = registration.store && {
      ...registration.store,
      scriptName: registration.script.name,
      buckets: new Set(registration.script.storeBuckets.map(({ bucketName }) => bucketName)),
    };
  }
}

/** Sources of edgeport's modules that run inside workerd, bundled once per server process. */
let insideSources: Promise<Record<keyof typeof CONFIG_FILES, string>> | undefined;

function bundledInside(): Promise<Record<keyof typeof CONFIG_FILES, string>> {
  const inside = (file: string) => bundleModule(new URL(`./inside/${file}`, import.meta.url).pathname);
  insideSources ??= (async () => ({
    host: await inside('isolate-host.ts'),
    cache: await inside('cache-service.ts'),
    cacheApi: await inside('cache-api.ts'),
    storeBinding: await inside('store-binding.ts'),
    consoleMarks: await inside('console-marks.ts'),
  }))();
  insideSources.catch(() => {
    insideSources = undefined;
  });
  return insideSources;
}

const secretHeader = (what: string) => `x-edgeport-${what}-${randomBytes(8).toString('hex')}`;
/** The `env` key the host hands its gates over under, taken out by the prelude before the script runs. */
const INTERNAL_KEY = '__edgeport_gates';
/** What workerd prints on stderr as the server unloads an isolate: not the script's, not worth a log line. */
const UNLOAD_NOISE = /script terminated for unknown reasons|abortIsolate\(\) called|^stack: /;

export class IsolateProcess {
  readonly #options: IsolateProcessOptions;
  readonly #logger: Logger;
  readonly #isolates = new Map<string, Isolate>();
  /** Loaded isolates by their loader name (the code service's lookup). */
  readonly #byName = new Map<string, Isolate>();
  /** Registered isolates by their store token (the store service's lookup). */
  readonly #byToken = new Map<string, Isolate>();
  readonly #marks: HostMarks & EntryMarks;
  readonly #names: InternalModuleNames;
  readonly #router: OutputRouter;
  readonly #ownOutput: ScriptOutputLog;
  readonly #outbounds: ScriptOutbound[] = [];
  #memoryMb = 0;
  /** The config the running process was started with no longer fits the registered scripts (a new outbound policy or memory limit). */
  #stale = false;
  #scratch: ScratchDir | undefined;
  #services: SocketServer[] = [];
  #prepared: Promise<void> | undefined;
  #supervisor: WorkerdSupervisor | undefined;
  #starting: Promise<WorkerdSupervisor> | undefined;
  #loads = 0;
  /** Unloads under way: workerd's lines about them are dropped. */
  #unloading = 0;
  #inflight = 0;
  readonly #waiting: Array<{ run: () => void; drop: () => void; refuse: () => void }> = [];
  #closed = false;
  #closing: Promise<void> | undefined;
  lastUsed = Date.now();

  constructor(options: IsolateProcessOptions) {
    this.#options = options;
    this.#logger = options.logger;
    this.#marks = {
      probe: secretHeader('probe'),
      isolate: secretHeader('isolate'),
      hostFailure: secretHeader('host-failure'),
      tail: secretHeader('tail'),
      failureHeader: secretHeader('failure'),
      loadHeader: secretHeader('load'),
      unloadHeader: secretHeader('unload'),
      tailHeader: '',
    };
    this.#marks.tailHeader = this.#marks.tail;
    this.#names = internalModuleNames(`edgeport-${randomBytes(4).toString('hex')}-`);
    this.#ownOutput = new ScriptOutputLog({ logger: options.logger, scriptName: null, accountId: options.accountId });
    const own = {
      output: (stream: 'stdout' | 'stderr', line: string, cutBytes: number) => {
        if (this.#unloading > 0 && stream === 'stderr' && UNLOAD_NOISE.test(line)) return;
        this.#ownOutput.output(stream, line, cutBytes);
      },
    };
    this.#router = new OutputRouter(own, () => this.#soleBusy()?.output, this.#ownOutput.maxLineBytes);
  }

  /** The isolate with requests in flight, when only one has any. */
  #soleBusy(): Isolate | undefined {
    let busy: Isolate | undefined;
    for (const isolate of this.#isolates.values()) {
      if (isolate.inflight === 0) continue;
      if (busy !== undefined) return undefined;
      busy = isolate;
    }
    return busy;
  }

  get name(): string {
    return this.#options.name;
  }

  /** Whether the workerd process runs (or is starting). */
  get running(): boolean {
    return this.#supervisor !== undefined || this.#starting !== undefined;
  }

  get inflight(): number {
    return this.#inflight;
  }

  get registered(): number {
    return this.#isolates.size;
  }

  /** Isolates loaded in the process serving now. */
  get loaded(): number {
    const generation = this.#supervisor?.current;
    if (generation === undefined) return 0;
    let count = 0;
    for (const isolate of this.#isolates.values()) if (isolate.loaded?.generation === generation.number) count++;
    return count;
  }

  /** Registers a script; its isolate is loaded when a request (or load()) needs it. */
  register(registration: IsolateRegistration): Isolate {
    if (this.#closed) throw new Error('The process is closed.');
    const { script } = registration;
    const policy = JSON.stringify(script.outbound);
    let outbound = this.#outbounds.findIndex((known) => JSON.stringify(known) === policy);
    if (outbound < 0) {
      outbound = this.#outbounds.push({ allow: [...script.outbound.allow], deny: [...script.outbound.deny] }) - 1;
      if (this.running) this.#stale = true;
    }
    if (script.limits.memoryMb > this.#memoryMb) {
      this.#memoryMb = script.limits.memoryMb;
      if (this.running) this.#stale = true;
    }
    const isolate = new Isolate(registration, this.#logger, outbound);
    this.#isolates.set(isolate.id, isolate);
    this.#byToken.set(isolate.storeToken, isolate);
    this.#router.claim(isolate.console, isolate.output);
    return isolate;
  }

  /**
   * Loads the isolate now, without calling the script; rejects with RUNTIME_SCRIPT_START_FAILED
   * (what workerd said) when it cannot load, RUNTIME_NO_CAPACITY when no process can start.
   */
  async load(isolate: Isolate): Promise<void> {
    const { script } = isolate.registration;
    const failed = (message: string, cause?: unknown) =>
      new RuntimeError(
        'RUNTIME_SCRIPT_START_FAILED',
        `Script ${JSON.stringify(script.name)} (${script.main}) failed to start in workerd ${WORKERD.version}: ${message}`,
        { cause },
      );
    const supervisor = await this.#ensureRunning().catch((error: unknown) => {
      if (error instanceof RuntimeError) throw error;
      throw failed((error as Error).message, error);
    });
    const serving = await supervisor.serving();
    if (serving === undefined) throw failed('its workerd process is not running.');
    const name = this.#route(isolate, serving);
    if (name === undefined)
      throw new RuntimeError(
        'RUNTIME_NO_CAPACITY',
        `Script ${JSON.stringify(script.name)} cannot be loaded: every one of the account's ${this.#options.limits.maxIsolates} loaded scripts is busy.`,
      );
    // In flight while it loads: top-level code that never yields is cut off at the CPU limit.
    serving.inflight++;
    isolate.inflight++;
    const answer = await internalRequest(serving, [this.#marks.isolate, name, this.#marks.loadHeader, '1']).finally(() => {
      serving.inflight--;
      isolate.inflight--;
    });
    if (answer.status === 204) return;
    this.#notLoaded(isolate, serving);
    if (answer.status === 0) {
      const failure = await failureOf(serving);
      throw failed(`${SCRIPT_FAILURES[failure].body.trim()} (while loading: ${answer.body})`);
    }
    throw failed(answer.body || `workerd answered ${answer.status}`);
  }

  /** Serves a request with the isolate: at once when the account has a place for it, else after a wait, else 429. */
  handle(isolate: Isolate, req: IncomingMessage, res: ServerResponse): void {
    const { maxRequests, queueMs } = this.#options.limits;
    if (this.#inflight < maxRequests && this.#waiting.length === 0) {
      this.#serve(isolate, req, res);
      return;
    }
    if (this.#waiting.length >= maxRequests) {
      this.#refuse(res, 'account-requests');
      return;
    }
    const waiter = {
      run: () => {
        clearTimeout(timer);
        res.off('close', left);
        this.#serve(isolate, req, res);
      },
      drop: () => {
        const at = this.#waiting.indexOf(waiter);
        if (at >= 0) this.#waiting.splice(at, 1);
      },
      refuse: () => {
        clearTimeout(timer);
        res.off('close', left);
        answerScriptFailure(res, 'unavailable');
      },
    };
    const timer = setTimeout(() => {
      waiter.drop();
      res.off('close', left);
      this.#refuse(res, 'account-requests');
    }, queueMs);
    timer.unref();
    const left = () => {
      clearTimeout(timer);
      waiter.drop();
    };
    res.once('close', left);
    this.#waiting.push(waiter);
  }

  #refuse(res: ServerResponse, failure: ScriptFailure): void {
    this.#options.changed(failure);
    answerScriptFailure(res, failure);
  }

  #serve(isolate: Isolate, req: IncomingMessage, res: ServerResponse): void {
    this.#inflight++;
    isolate.inflight++;
    isolate.lastUsed = this.lastUsed = Date.now();
    res.once('close', () => {
      this.#inflight--;
      isolate.inflight--;
      isolate.lastUsed = this.lastUsed = Date.now();
      // The next waiting request takes the place.
      if (this.#inflight < this.#options.limits.maxRequests) this.#waiting.shift()?.run();
    });
    const supervisor = this.#supervisor !== undefined && !this.#stale ? this.#supervisor : undefined;
    if (supervisor) {
      this.#proxy(isolate, supervisor, req, res);
      return;
    }
    this.#ensureRunning().then(
      (started) => this.#proxy(isolate, started, req, res),
      (error: unknown) => {
        if (!(error instanceof RuntimeError) || error.code !== 'RUNTIME_NO_CAPACITY') {
          this.#logger.error({ workerd: this.name, err: error }, 'The script runtime (workerd) failed to start.');
        }
        this.#refuse(res, 'unavailable');
      },
    );
  }

  #proxy(isolate: Isolate, supervisor: WorkerdSupervisor, req: IncomingMessage, res: ServerResponse): void {
    const tail = isolate.registration.tail;
    proxyToWorkerd(
      {
        supervisor,
        failureHeader: this.#marks.failureHeader,
        hostFailureHeader: this.#marks.hostFailure,
        output: isolate.output,
        isolate: {
          header: this.#marks.isolate,
          route: (generation) => {
            const name = this.#route(isolate, generation);
            if (name === undefined) this.#options.changed('account-scripts');
            return name;
          },
          failed: (generation, message) => {
            this.#notLoaded(isolate, generation);
            this.#logger.error(
              { workerd: this.name, script: isolate.registration.script.name, error: message },
              "A script's isolate could not be loaded again.",
            );
          },
        },
        ...(tail ? { tail: { header: this.#marks.tail, watched: () => tail.watched() } } : {}),
      },
      req,
      res,
    );
  }

  /** The isolate's loader name in `generation`, loading it there (making room first) if it is not; undefined when there is no room. */
  #route(isolate: Isolate, generation: Generation): string | undefined {
    if (isolate.loaded?.generation === generation.number) return isolate.loaded.name;
    if (!this.#makeRoom(generation)) return undefined;
    if (isolate.loaded) this.#byName.delete(isolate.loaded.name);
    const name = `${isolate.id}.${++this.#loads}`;
    isolate.loaded = { generation: generation.number, name };
    this.#byName.set(name, isolate);
    return name;
  }

  /** Room for one more loaded isolate in `generation`: the idle one used longest ago is unloaded when the account is at its limit. */
  #makeRoom(generation: Generation): boolean {
    let loaded = 0;
    let oldest: Isolate | undefined;
    for (const isolate of this.#isolates.values()) {
      if (isolate.loaded?.generation !== generation.number) continue;
      loaded++;
      if (isolate.inflight === 0 && (oldest === undefined || isolate.lastUsed < oldest.lastUsed)) oldest = isolate;
    }
    if (loaded < this.#options.limits.maxIsolates) return true;
    if (oldest === undefined) return false;
    this.#unload(oldest);
    return true;
  }

  /** The isolate failed to load in `generation`: the next request loads it under a new name. */
  #notLoaded(isolate: Isolate, generation: Generation): void {
    if (isolate.loaded?.generation !== generation.number) return;
    this.#byName.delete(isolate.loaded.name);
    isolate.loaded = undefined;
  }

  /** Ends the isolate in workerd (its memory is workerd's to reuse); the next request for it loads it afresh. */
  #unload(isolate: Isolate): void {
    const loaded = isolate.loaded;
    isolate.loaded = undefined;
    if (loaded === undefined) return;
    this.#byName.delete(loaded.name);
    const serving = this.#supervisor?.current;
    if (serving?.number !== loaded.generation) return;
    this.#unloading++;
    void internalRequest(serving, [this.#marks.isolate, loaded.name, this.#marks.unloadHeader, '1'])
      // workerd's lines about it may come a moment after the answer.
      .finally(() => setTimeout(() => this.#unloading--, 1_000).unref());
  }

  /** Forgets a script: its isolate is unloaded; the process stops with the last one. Resolves once that is done. */
  async unregister(isolate: Isolate): Promise<void> {
    if (!this.#isolates.delete(isolate.id)) return;
    this.#byToken.delete(isolate.storeToken);
    this.#unload(isolate);
    this.#router.release(isolate.console);
    isolate.output.close();
    if (this.#isolates.size === 0) await this.close();
  }

  /** Stops the workerd process (the pool makes room, or the account is idle); registered scripts load again on their next request. */
  async stop(): Promise<void> {
    const starting = this.#starting;
    await starting?.catch(() => undefined);
    const supervisor = this.#supervisor;
    if (supervisor === undefined) return;
    this.#supervisor = undefined;
    this.#byName.clear();
    for (const isolate of this.#isolates.values()) isolate.loaded = undefined;
    await supervisor.close();
    this.#options.changed('stopped');
  }

  /** Closing or closed: no script can be registered any more. */
  get closing(): boolean {
    return this.#closed;
  }

  /** Stops the process and the server's services for it; every request still waiting is answered 503. */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    this.#closed = true;
    for (const waiter of this.#waiting.splice(0)) waiter.refuse();
    await this.stop();
    for (const service of this.#services.splice(0)) await service.close();
    this.#ownOutput.close();
    for (const isolate of this.#isolates.values()) isolate.output.close();
    this.#isolates.clear();
    await this.#scratch?.remove();
  }

  /** The supervisor of a process serving this account's scripts as registered now, starting one if need be. */
  #ensureRunning(): Promise<WorkerdSupervisor> {
    if (this.#supervisor !== undefined && !this.#stale) return Promise.resolve(this.#supervisor);
    this.#starting ??= this.#start().finally(() => {
      this.#starting = undefined;
    });
    return this.#starting;
  }

  async #start(): Promise<WorkerdSupervisor> {
    if (this.#closed) throw new RuntimeError('RUNTIME_NO_CAPACITY', 'The process is closed.');
    if (this.#supervisor !== undefined) {
      // A script with an outbound policy or memory limit the running process lacks: it is restarted with them.
      const previous = this.#supervisor;
      this.#supervisor = undefined;
      for (const isolate of this.#isolates.values()) isolate.loaded = undefined;
      this.#byName.clear();
      await previous.close();
    } else if (!this.#options.admit(this)) {
      throw new RuntimeError('RUNTIME_NO_CAPACITY');
    }
    this.#prepared ??= this.#prepare();
    await this.#prepared;
    const dir = this.#scratch!.path;
    this.#stale = false;
    await writeFile(
      join(dir, 'config.capnp'),
      workerdConfig({
        hostSocket: join(dir, 'host.sock'),
        codeSocket: join(dir, 'code.sock'),
        storeSocket: join(dir, 'store.sock'),
        tailSocket: join(dir, 'tail.sock'),
        outbounds: this.#outbounds.length > 0 ? this.#outbounds : [{ allow: ['public'], deny: [] }],
        marks: { probe: this.#marks.probe, isolate: this.#marks.isolate, hostFailure: this.#marks.hostFailure, tail: this.#marks.tail },
        memoryMb: this.#memoryMb || 128,
        internalCompatibilityDate: '2025-01-01',
      }),
    );
    const supervisor = await WorkerdSupervisor.start({
      name: this.name,
      configFile: join(dir, 'config.capnp'),
      cwd: dir,
      socketPath: join(dir, 'host.sock'),
      probeHeader: this.#marks.probe,
      cpuMs: () => this.#cpuMs(),
      memoryLimitBytes: this.#options.limits.memoryBytes,
      logger: this.#logger,
      output: this.#router,
    });
    if (this.#closed) {
      await supervisor.close();
      throw new RuntimeError('RUNTIME_NO_CAPACITY', 'The process is closed.');
    }
    this.#supervisor = supervisor;
    this.#options.changed('started');
    return supervisor;
  }

  /** The CPU limit the process's thread is held to: the largest of the scripts with requests in flight (none is cut off before its own limit). */
  #cpuMs(): number {
    let limit = 0;
    for (const isolate of this.#isolates.values()) {
      if (isolate.inflight > 0) limit = Math.max(limit, isolate.registration.script.limits.cpuMs);
    }
    return limit || 30_000;
  }

  /** The private directory, edgeport's bundles in it, and the server's services for the process (once). */
  async #prepare(): Promise<void> {
    this.#scratch = await makeScratchDir();
    const dir = this.#scratch.path;
    const sources = await bundledInside();
    for (const [key, file] of Object.entries(CONFIG_FILES) as Array<[keyof typeof CONFIG_FILES, string]>) await writeFile(join(dir, file), sources[key]);
    this.#services.push(
      await listenOnSocket(
        createServer(guardedListener((req, res) => this.#serveCode(req, res), `code service of ${this.name}`, this.#logger)),
        join(dir, 'code.sock'),
      ),
    );
    this.#services.push(
      await startStoreService({
        socketPath: join(dir, 'store.sock'),
        logger: this.#logger,
        name: `store binding of ${this.name}`,
        caller: (target) => this.#byToken.get(target.slice(1))?.store,
      }),
    );
    this.#services.push(
      await startTailSink(
        join(dir, 'tail.sock'),
        (id, event) => {
          const isolate = this.#isolates.get(id);
          if (isolate?.registration.tail && typeof event === 'object' && event !== null)
            isolate.registration.tail.publish({ ...event, scriptName: isolate.registration.script.name });
        },
        this.#logger,
        `tail sink of ${this.name}`,
      ),
    );
  }

  /** The code of the isolate the host worker loads by a name (GET /<name>). */
  #serveCode(req: IncomingMessage, res: ServerResponse): void {
    const name = safeDecode((req.url ?? '/').slice(1));
    const isolate = name === undefined ? undefined : this.#byName.get(name);
    if (isolate === undefined || name === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end(`No script is to be loaded as ${JSON.stringify(name)}.`);
      return;
    }
    const { registration } = isolate;
    const body = JSON.stringify(
      isolateCode({
        isolate: isolate.id,
        script: registration.script,
        source: registration.source,
        names: this.#names,
        marks: this.#marks,
        console: isolate.console,
        internalKey: INTERNAL_KEY,
        outbound: isolate.outbound,
        cacheNamespace: cacheNamespace(isolate.id),
        tailed: registration.tail !== undefined,
        storeToken: isolate.storeToken,
      }),
    );
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
  }
}

/** A script's caches' namespace: the same for every load of its isolate, unlike any other's, and all of one length. */
function cacheNamespace(id: string): string {
  return `c${id}`;
}

function safeDecode(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

/** A request of the server's own to the host worker (load, unload): its status and body. */
function internalRequest(generation: Generation, headers: string[]): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    let status = 0;
    let body = '';
    generation.connections.dispatch(
      { method: 'GET', path: '/', headers: ['host', 'edgeport.internal', ...headers], body: null },
      {
        onConnect() {},
        onHeaders(answered) {
          status = answered;
        },
        onData(chunk, release) {
          if (body.length < 64 * 1024) body += Buffer.from(chunk).toString('utf8');
          release();
          return true;
        },
        onComplete() {
          resolve({ status, body });
        },
        onError(error) {
          resolve({ status: 0, body: error.message });
        },
      },
    );
  });
}
