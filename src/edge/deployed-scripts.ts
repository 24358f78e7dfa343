/**
 * The scripts accounts deploy through the API, as this instance's edge serves them: every
 * `pollMs` it reads the registry's change counter (one indexed row), and when another instance or
 * this one changed something, it reloads what is deployed. A new version starts in its own workerd
 * first; only once it is ready do its routes lead to it, and the version it replaces is closed
 * after its requests in flight have finished (at most `drainMs`). A version that fails to start
 * here leaves the previous one serving.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../core/log.ts';
import type { ScriptRegistry } from '../db/scripts/script-registry.ts';
import type { RunnableVersion, ServingState } from '../db/scripts/script-records.ts';
import type { ScriptHost } from '../runtime/index.ts';
import { ScriptRouter } from './script-routes.ts';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

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
}

/** A running version, counting its requests so that it is closed only once they are done. */
class Running {
  readonly key: string;
  readonly #host: ScriptHost;
  #inflight = 0;
  #retired: (() => void) | undefined;

  constructor(key: string, host: ScriptHost) {
    this.key = key;
    this.#host = host;
  }

  readonly handle: Handler = (req, res) => {
    this.#inflight++;
    res.once('close', () => {
      this.#inflight--;
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
  readonly #running = new Map<string, Running>();
  #router = new ScriptRouter<string>([]);
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
  }

  /** Loads what is deployed now, then keeps polling for changes. */
  async start(): Promise<void> {
    await this.sync();
    this.#schedule();
  }

  /** The handler of the deployed script serving host and path, if any. */
  match(host: string, path: string): Handler | undefined {
    const key = this.#router.match(host, path);
    return key === undefined ? undefined : this.#running.get(key)?.handle;
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
    const running = [...this.#running.values()];
    this.#running.clear();
    await Promise.all([...running.map((version) => version.retire(0)), ...this.#retiring]);
  }

  #schedule(): void {
    if (this.#closed) return;
    this.#timer = setTimeout(() => {
      this.sync().catch((error: unknown) => this.#options.logger.error({ err: error }, 'Reading the deployed scripts failed; retrying.')).finally(() => this.#schedule());
    }, this.#options.pollMs ?? 500);
    this.#timer.unref();
  }

  async #syncNow(): Promise<void> {
    const { registry, logger } = this.#options;
    const forced = this.#forced;
    this.#forced = false;
    const seq = await registry.changeSeq();
    if ((seq === this.#seq && !forced) || this.#closed) return;
    const state = await registry.servingState();
    const wanted = new Set<string>();
    let failures = false;
    for (const script of state.scripts) {
      const id = `${script.accountId}/${script.name}`;
      wanted.add(id);
      const tailed = this.#options.tailed?.(script.accountId, script.name) ?? false;
      const key = tailed ? `${script.key}+tail` : script.key;
      if (this.#running.get(id)?.key === key) continue;
      const failedAt = this.#failed.get(key);
      if (failedAt !== undefined && Date.now() - failedAt < RETRY_FAILED_START_MS) {
        failures = true;
        continue;
      }
      const runnable = await registry.runnable(script.accountId, script.name, script.versionId);
      if (!runnable || this.#closed) continue;
      try {
        const host = await this.#options.start(runnable, tailed);
        if (this.#closed) {
          await host.close();
          return;
        }
        this.#replace(id, new Running(key, host));
        this.#failed.delete(key);
      } catch (error) {
        failures = true;
        this.#failed.set(key, Date.now());
        logger.error({ account: script.accountId, script: script.name, version: script.versionId, err: error }, 'A deployed script failed to start; its previous version keeps serving.');
      }
    }
    for (const id of [...this.#running.keys()]) if (!wanted.has(id)) this.#replace(id, undefined);
    this.#router = new ScriptRouter(this.#routes(state));
    // With a version that failed to start, the state is read again on every poll, and the version tried again after RETRY_FAILED_START_MS.
    this.#seq = failures ? -1 : seq;
    if (!failures) this.#failed.clear();
  }

  #replace(id: string, next: Running | undefined): void {
    const previous = this.#running.get(id);
    if (next) this.#running.set(id, next);
    else this.#running.delete(id);
    if (!previous) return;
    const retiring = previous.retire(this.#options.drainMs ?? 30_000).catch((error: unknown) => {
      this.#options.logger.warn({ err: error }, 'Stopping a replaced script version failed.');
    }).finally(() => this.#retiring.delete(retiring));
    this.#retiring.add(retiring);
  }

  #routes(state: ServingState): Array<{ pattern: string; target: string }> {
    const routes: Array<{ pattern: string; target: string }> = [];
    for (const route of state.routes) {
      // A route without a script turns scripts off for its pattern: it matches, and nothing serves it.
      routes.push({ pattern: route.pattern, target: route.script === null ? '' : `${route.accountId}/${route.script}` });
    }
    const { devDomain } = this.#options;
    if (devDomain !== null) {
      const subdomains = new Map(state.subdomains.map(({ accountId, subdomain }) => [accountId, subdomain]));
      for (const script of state.scripts) {
        const subdomain = subdomains.get(script.accountId);
        // A name with '_' is no host name: such a script is served on its routes only.
        if (script.devEnabled && subdomain !== undefined && /^[a-z0-9-]+$/.test(script.name)) routes.push({ pattern: `${script.name}.${subdomain}.${devDomain}/*`, target: `${script.accountId}/${script.name}` });
      }
    }
    return routes;
  }
}
