/**
 * The scripts accounts deploy through the API, as this instance's edge serves them: every
 * `pollMs` it reads the registry's change counter (one indexed row), and when another instance or
 * this one changed something, it reloads what is deployed. A script's workerd starts on its first
 * request (the request waits for it), at most `maxRunning` run at once (the one idle longest is
 * stopped to make room; with none idle, the request is answered 503), and one idle for
 * `idleStopMs` is stopped. A new version of a running script starts in its own workerd first; only
 * once it is ready do its routes lead to it, and the version it replaces is closed after its
 * requests in flight have finished (at most `drainMs`). A version that fails to start here leaves
 * the previous one serving.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../core/log.ts';
import type { ScriptRegistry } from '../db/scripts/script-registry.ts';
import type { RunnableVersion, ServingState } from '../db/scripts/script-records.ts';
import { answerScriptFailure } from '../runtime/errors.ts';
import type { ScriptHost } from '../runtime/index.ts';
import { isPlatformHost } from './platform-hosts.ts';
import { ScriptRouter } from './script-routes.ts';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** What serves a request: the handler, and the account whose script it is. */
export interface DeployedMatch {
  accountId: string;
  handle: Handler;
}

/** A version that failed to start here is tried again on a later poll, at most this often. */
const RETRY_FAILED_START_MS = 10_000;

export interface DeployedScriptsOptions {
  registry: ScriptRegistry;
  /** Starts a version in workerd (rejects when it cannot start); `tailed`: with workerd's tails, for a tail session. */
  start(runnable: RunnableVersion, tailed: boolean): Promise<ScriptHost>;
  /** Whether a tail session watches the script: its version then runs with tails, else without (tails cost every request). */
  tailed?(accountId: string, script: string): boolean;
  /** `<script>.<account subdomain>.<devDomain>` serves each script whose dev subdomain is on; null: none. */
  devDomain: string | null;
  logger: Logger;
  pollMs?: number;
  drainMs?: number;
  /** Scripts running at once (default 50). */
  maxRunning?: number;
  /** A script idle this long is stopped; 0: never (default 15 minutes). */
  idleStopMs?: number;
  /** The clock idle times and retries are measured on (default Date.now). */
  now?: () => number;
}

/** What serves a deployed script now: its version, and whether it runs with tails. */
interface Wanted {
  accountId: string;
  name: string;
  versionId: string;
  key: string;
}

/** A running version, counting its requests so that it is closed only once they are done. */
class Running {
  readonly key: string;
  readonly #host: ScriptHost;
  readonly #now: () => number;
  #inflight = 0;
  #retired: (() => void) | undefined;
  /** When its last request ended (or began, while one is in flight). */
  lastUsed: number;

  constructor(key: string, host: ScriptHost, now: () => number) {
    this.key = key;
    this.#host = host;
    this.#now = now;
    this.lastUsed = now();
  }

  get idle(): boolean {
    return this.#inflight === 0;
  }

  readonly handle: Handler = (req, res) => {
    this.#inflight++;
    this.lastUsed = this.#now();
    res.once('close', () => {
      this.#inflight--;
      this.lastUsed = this.#now();
      if (this.#inflight === 0) this.#retired?.();
    });
    this.#host.handle(req, res);
  };

  /** Closes the host once its requests in flight are done, or after `drainMs`. */
  async retire(drainMs: number): Promise<void> {
    if (this.#inflight > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, drainMs);
        timer.unref();
        this.#retired = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    await this.#host.close();
  }
}

export class DeployedScripts {
  readonly #options: DeployedScriptsOptions;
  readonly #now: () => number;
  /** What should serve each script (by `<account>/<name>`), as last read from the registry. */
  #wanted = new Map<string, Wanted>();
  readonly #running = new Map<string, Running>();
  /** First requests waiting for their script's workerd, one start per script. */
  readonly #starting = new Map<string, Promise<Running | undefined>>();
  #router = new ScriptRouter<string>([]);
  /** Dev hosts -> script (`<account>/<name>`), apart from the routes: the edge looks them up before any zone. */
  #devHosts = new Map<string, string>();
  #seq = -1;
  #timer: NodeJS.Timeout | undefined;
  #syncing: Promise<void> | undefined;
  readonly #retiring = new Set<Promise<void>>();
  #closed = false;
  /** Set when a script's tail sessions came or went: the next sync restarts its version with or without tails. */
  #forced = false;
  /** Versions that failed to start here (by key), with when: retried after RETRY_FAILED_START_MS. */
  readonly #failed = new Map<string, number>();

  constructor(options: DeployedScriptsOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  /** How many scripts run in workerd on this instance now. */
  get runningCount(): number {
    return this.#running.size;
  }

  /** Loads what is deployed now, then keeps polling for changes. */
  async start(): Promise<void> {
    await this.sync();
    this.#schedule();
  }

  /** The dev domain's hosts are the platform's (platform-hosts.ts): the edge asks devMatch, never match, for them. */
  get devDomain(): string | null {
    return this.#options.devDomain;
  }

  /**
   * The deployed script a route sends host and path to, with the account whose route it is; never
   * for a host at or under the dev domain (a route there, made before such routes were refused,
   * matches nothing).
   */
  match(host: string, path: string): DeployedMatch | undefined {
    if (isPlatformHost(host, this.#options.devDomain)) return undefined;
    const id = this.#router.match(host, path);
    // A route without a script ('') matches, and nothing serves it.
    const wanted = id === undefined ? undefined : this.#wanted.get(id);
    return wanted === undefined ? undefined : { accountId: wanted.accountId, handle: this.#handlerOf(id!) };
  }

  /** The script `<script>.<account subdomain>.<dev domain>` serves (any path), if any. */
  devMatch(host: string): DeployedMatch | undefined {
    const id = this.#devHosts.get(host);
    const wanted = id === undefined ? undefined : this.#wanted.get(id);
    return wanted === undefined ? undefined : { accountId: wanted.accountId, handle: this.#handlerOf(id!) };
  }

  #handlerOf(id: string): Handler {
    const running = this.#running.get(id);
    if (running) return running.handle;
    return (req, res) => {
      this.#coldStart(id).then(
        (started) => {
          if (started) started.handle(req, res);
          else answerScriptFailure(res, 'unavailable');
        },
        (error: unknown) => {
          this.#options.logger.error({ err: error }, 'Starting a deployed script failed unexpectedly.');
          answerScriptFailure(res, 'unavailable');
        },
      );
    };
  }

  /** Reloads when the registry changed since the last load (at most one load at a time). */
  sync(): Promise<void> {
    this.#syncing ??= this.#syncNow().finally(() => {
      this.#syncing = undefined;
    });
    return this.#syncing;
  }

  /** A script's tail sessions came or went: its version restarts with or without tails (on the next poll, or now when idle). */
  tailsChanged(): void {
    this.#forced = true;
    if (!this.#closed) this.sync().catch((error: unknown) => this.#options.logger.error({ err: error }, 'Reading the deployed scripts failed; retrying.'));
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    await this.#syncing?.catch(() => undefined);
    await Promise.all([...this.#starting.values()].map((starting) => starting.catch(() => undefined)));
    const running = [...this.#running.values()];
    this.#running.clear();
    await Promise.all([...running.map((version) => version.retire(0)), ...this.#retiring]);
  }

  #schedule(): void {
    if (this.#closed) return;
    this.#timer = setTimeout(() => {
      this.#stopIdle();
      this.sync()
        .catch((error: unknown) => this.#options.logger.error({ err: error }, 'Reading the deployed scripts failed; retrying.'))
        .finally(() => this.#schedule());
    }, this.#options.pollMs ?? 500);
    this.#timer.unref();
  }

  async #syncNow(): Promise<void> {
    const { registry } = this.#options;
    const forced = this.#forced;
    this.#forced = false;
    const seq = await registry.changeSeq();
    if ((seq === this.#seq && !forced) || this.#closed) return;
    const state = await registry.servingState();
    const wanted = new Map<string, Wanted>();
    for (const script of state.scripts) {
      const tailed = this.#options.tailed?.(script.accountId, script.name) ?? false;
      wanted.set(`${script.accountId}/${script.name}`, {
        accountId: script.accountId,
        name: script.name,
        versionId: script.versionId,
        key: tailed ? `${script.key}+tail` : script.key,
      });
    }
    this.#wanted = wanted;
    let failures = false;
    // A running script's new version (or its tails coming or going) starts now, and takes over once ready; the others start on their first request.
    for (const [id, running] of [...this.#running]) {
      const next = wanted.get(id);
      if (next === undefined) {
        this.#replace(id, undefined);
        continue;
      }
      if (running.key === next.key) continue;
      const started = await this.#startVersion(next);
      if (this.#closed) return;
      if (started === 'failed') failures = true;
      else if (started) this.#replace(id, started);
    }
    this.#router = new ScriptRouter(this.#routes(state));
    this.#devHosts = this.#devHostsOf(state);
    // With a version that failed to start, the state is read again on every poll, and the version tried again after RETRY_FAILED_START_MS.
    this.#seq = failures ? -1 : seq;
    const keys = new Set([...wanted.values()].map(({ key }) => key));
    for (const key of [...this.#failed.keys()]) if (!keys.has(key)) this.#failed.delete(key);
  }

  /**
   * Starts `wanted`'s version: a Running, 'failed' (logged; tried again after RETRY_FAILED_START_MS),
   * or undefined when it is not to be tried now (failed lately, no longer in the registry, closing).
   */
  async #startVersion(wanted: Wanted): Promise<Running | 'failed' | undefined> {
    const { registry, logger } = this.#options;
    const failedAt = this.#failed.get(wanted.key);
    if (failedAt !== undefined && this.#now() - failedAt < RETRY_FAILED_START_MS) return 'failed';
    const runnable = await registry.runnable(wanted.accountId, wanted.name, wanted.versionId);
    if (!runnable || this.#closed) return undefined;
    try {
      const host = await this.#options.start(runnable, wanted.key.endsWith('+tail'));
      if (this.#closed) {
        await host.close();
        return undefined;
      }
      this.#failed.delete(wanted.key);
      return new Running(wanted.key, host, this.#now);
    } catch (error) {
      // No place for it now (every account process or every one of its account's scripts busy): not the version's fault, tried again soon.
      if ((error as { code?: string }).code === 'RUNTIME_NO_CAPACITY') return 'failed';
      this.#failed.set(wanted.key, this.#now());
      logger.error(
        { account: wanted.accountId, script: wanted.name, version: wanted.versionId, err: error },
        'A deployed script failed to start; its previous version keeps serving.',
      );
      return 'failed';
    }
  }

  /** The first request of a script not running here: starts it (once, however many requests wait), making room first. */
  #coldStart(id: string): Promise<Running | undefined> {
    let starting = this.#starting.get(id);
    if (!starting) {
      starting = (async () => {
        const wanted = this.#wanted.get(id);
        if (!wanted || this.#closed) return undefined;
        if (!this.#makeRoom()) {
          this.#options.logger.warn(
            { account: wanted.accountId, script: wanted.name, running: this.#running.size },
            'A deployed script cannot start: every running script is busy ([workers] max_running).',
          );
          return undefined;
        }
        const started = await this.#startVersion(wanted);
        if (!started || started === 'failed') return undefined;
        // A sync meanwhile may have started a newer version, or dropped the script.
        const current = this.#running.get(id);
        if (current || !this.#wanted.has(id)) {
          await started.retire(0);
          return current;
        }
        this.#running.set(id, started);
        return started;
      })().finally(() => this.#starting.delete(id));
      this.#starting.set(id, starting);
    }
    return starting;
  }

  /** Room for one more below `maxRunning` (counting starts under way), stopping the script idle longest if need be; false when every one is busy. */
  #makeRoom(): boolean {
    const max = this.#options.maxRunning ?? 50;
    while (this.#running.size + this.#starting.size >= max) {
      let oldest: [string, Running] | undefined;
      for (const entry of this.#running) if (entry[1].idle && (!oldest || entry[1].lastUsed < oldest[1].lastUsed)) oldest = entry;
      if (!oldest) return false;
      this.#replace(oldest[0], undefined);
    }
    return true;
  }

  /** Stops each script that has served nothing for `idleStopMs`. */
  #stopIdle(): void {
    const idleStopMs = this.#options.idleStopMs ?? 900_000;
    if (idleStopMs === 0) return;
    const now = this.#now();
    for (const [id, running] of [...this.#running]) if (running.idle && now - running.lastUsed >= idleStopMs) this.#replace(id, undefined);
  }

  #replace(id: string, next: Running | undefined): void {
    const previous = this.#running.get(id);
    if (next) this.#running.set(id, next);
    else this.#running.delete(id);
    if (!previous) return;
    const retiring = previous
      .retire(this.#options.drainMs ?? 30_000)
      .catch((error: unknown) => {
        this.#options.logger.warn({ err: error }, 'Stopping a replaced script version failed.');
      })
      .finally(() => this.#retiring.delete(retiring));
    this.#retiring.add(retiring);
  }

  #routes(state: ServingState): Array<{ pattern: string; target: string }> {
    // A route without a script turns scripts off for its pattern: it matches, and nothing serves it.
    return state.routes.map((route) => ({ pattern: route.pattern, target: route.script === null ? '' : `${route.accountId}/${route.script}` }));
  }

  /** `<script>.<account subdomain>.<dev domain>` -> the script, for each script whose dev subdomain is on. */
  #devHostsOf(state: ServingState): Map<string, string> {
    const hosts = new Map<string, string>();
    const { devDomain } = this.#options;
    if (devDomain === null) return hosts;
    const subdomains = new Map(state.subdomains.map(({ accountId, subdomain }) => [accountId, subdomain]));
    for (const script of state.scripts) {
      const subdomain = subdomains.get(script.accountId);
      // A name with '_' is no host name: such a script is served on its routes only.
      if (script.devEnabled && subdomain !== undefined && /^[a-z0-9-]+$/.test(script.name))
        hosts.set(`${script.name}.${subdomain}.${devDomain}`, `${script.accountId}/${script.name}`);
    }
    return hosts;
  }
}
