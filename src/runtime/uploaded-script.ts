/**
 * Scripts deployed through the API: a stored version (its modules, bindings and the script's
 * secrets) becomes what the script host runs. The script runs exactly as a configured one does
 * (workerd, the same sandbox and limits); its `r2_bucket` bindings reach its account's buckets,
 * `plain_text` and `secret_text` become strings in `env`, `json` a parsed value.
 */
import type { Logger } from '../core/log.ts';
import type { ModuleType, RunnableVersion } from '../db/scripts/script-records.ts';
import type { ObjectEngine } from '../store/engine/object-engine.ts';
import { startScriptHost, type ScriptHost, type TailTarget, type UploadedSource } from './host.ts';
import { SCRIPT_LIMIT_DEFAULTS, type ScriptConfig, type ScriptLimits } from './script-config.ts';
import { TrialQueue, type TrialRefusal } from './trial-queue.ts';
import type { IsolatePool } from './workerd/isolate-pool.ts';
import type { WorkerdModule } from './workerd/workerd-config.ts';

const MODULE_KINDS: Record<ModuleType, WorkerdModule['kind']> = {
  esm: 'esModule',
  cjs: 'commonJsModule',
  text: 'text',
  data: 'data',
  wasm: 'wasm',
  json: 'json',
};

export interface UploadedHostDeps {
  engine: ObjectEngine;
  dataDir: string;
  logger: Logger;
  /** `[workers] script_cpu_ms` and `script_memory_mb` (default SCRIPT_LIMIT_DEFAULTS). */
  limits?: ScriptLimits;
}

/**
 * A deployed version's host: an isolate in its account's process of `pool` (without one, a process
 * of its own); its requests' trace events go to `tail` while a session watches.
 */
export interface ServingHostDeps extends UploadedHostDeps {
  tail?: TailTarget;
  pool?: IsolatePool;
}

/** The host config and sources of a stored version. */
export function uploadedScript(runnable: RunnableVersion, limits: ScriptLimits = SCRIPT_LIMIT_DEFAULTS): { script: ScriptConfig; uploaded: UploadedSource } {
  const { version, modules, secrets } = runnable;
  const { metadata } = version;
  const vars: Array<UploadedSource['vars'][number]> = [];
  const storeBuckets: ScriptConfig['storeBuckets'][number][] = [];
  for (const binding of metadata.bindings) {
    if (binding.type === 'r2_bucket') storeBuckets.push({ binding: binding.name, bucketName: binding.bucket_name });
    else if (binding.type === 'plain_text') vars.push({ name: binding.name, kind: 'text', value: binding.text });
    else if (binding.type === 'json') vars.push({ name: binding.name, kind: 'json', value: JSON.stringify(binding.json) });
  }
  for (const [name, value] of Object.entries(secrets)) {
    if (!metadata.bindings.some((binding) => binding.name === name && binding.type !== 'secret_text')) vars.push({ name, kind: 'text', value });
  }
  return {
    script: {
      name: version.script,
      runtime: 'workerd',
      main: metadata.mainModule,
      compatibilityDate: metadata.compatibilityDate,
      compatibilityFlags: metadata.compatibilityFlags,
      storeBuckets,
      routes: [],
      limits: { cpuMs: limits.cpuMs, memoryMb: limits.memoryMb },
      outbound: { allow: ['public'], deny: [] },
    },
    uploaded: {
      mainModule: metadata.mainModule,
      modules: modules.map((module) => ({ name: module.name, kind: MODULE_KINDS[module.type], content: Buffer.from(module.content, 'base64') })),
      vars,
    },
  };
}

/** Starts a stored version in workerd; rejects with RUNTIME_SCRIPT_START_FAILED (workerd's own words) when it cannot start. */
export function startUploadedHost(runnable: RunnableVersion, deps: ServingHostDeps): Promise<ScriptHost> {
  const { script, uploaded } = uploadedScript(runnable, deps.limits);
  const accountId = runnable.version.accountId;
  return startScriptHost({
    script,
    uploaded,
    accountId,
    dataDir: deps.dataDir,
    logger: deps.logger,
    engine: deps.engine,
    ...(deps.tail ? { tail: deps.tail } : {}),
    ...(deps.pool ? { pool: { pool: deps.pool, tenant: accountId, name: `account ${accountId}` } } : {}),
  });
}

/** The exception in workerd's start-up output ("Uncaught SyntaxError: ..." and where), else all of it. */
export function startFailureMessage(error: unknown): string {
  const lines = (error as Error).message.split('\n');
  const start = lines.findIndex((line) => /Uncaught /.test(line));
  if (start < 0) return (error as Error).message;
  const where = lines
    .slice(start + 1)
    .filter((line) => /^\s+at /.test(line))
    .slice(0, 5);
  return [/Uncaught .*/.exec(lines[start]!)![0], ...where].join('\n');
}

/**
 * A trial start for uploads: the version starts in workerd and stops at once. Resolves null when it
 * started, else with the exception it threw; past the account's or the server's share of uploads
 * being tried (trial-queue.ts), with the refusal at once.
 */
export function trialStarter(
  deps: UploadedHostDeps,
  queue = new TrialQueue(),
): (runnable: RunnableVersion) => Promise<string | null | { refused: TrialRefusal }> {
  return (runnable) =>
    queue.run(runnable.version.accountId, async () => {
      try {
        const host = await startUploadedHost(runnable, deps);
        await host.close();
        return null;
      } catch (error) {
        if ((error as { code?: string }).code !== 'RUNTIME_SCRIPT_START_FAILED') throw error;
        return startFailureMessage(error);
      }
    });
}
