/**
 * What the Workers routes share: their dependencies (the registry, a trial start in workerd, the
 * limits), the lookups that answer another account's script exactly like a missing one, and the
 * platform's JSON for scripts, versions and deployments.
 */
import type { DeploymentRecord, RunnableVersion, ScriptRecord, VersionRecord } from '../../db/scripts/script-records.ts';
import type { ScriptRegistry } from '../../db/scripts/script-registry.ts';
import type { TailSessions } from '../../edge/tail-sessions.ts';
import type { TrialRefusal } from '../../runtime/trial-queue.ts';
import type { AccountRecord } from '../../db/control-store.ts';
import { requireOwnAccount } from '../accounts/account-routes.ts';
import { userIdOf } from '../accounts/user-id.ts';
import { ApiError } from '../errors.ts';
import type { RouteContext } from '../route.ts';

export interface WorkersDeps {
  registry: ScriptRegistry;
  /** Starts a version in workerd and stops it: null when it started, else the exception it threw ("Uncaught ..."); `busy` when too many uploads wait. */
  tryStart(runnable: RunnableVersion): Promise<string | null | { refused: TrialRefusal }>;
  maxScriptsPerAccount: number;
  maxRoutesPerZone: number;
  /** The domain of `<script>.<subdomain>.<devDomain>`, or null when the operator serves none. */
  devDomain: string | null;
  /** This instance's tail sessions (`wrangler tail`); without them, opening a tail is refused. */
  tails?: TailSessions;
}

export const ACCOUNT_WORKERS = '/accounts/:account_id/workers';
export const SCRIPT = `${ACCOUNT_WORKERS}/scripts/:script_name`;
const SCRIPT_NAME = /^[a-z0-9_][a-z0-9_-]{0,62}$/;

export function requireWorkers(ctx: RouteContext<unknown>): WorkersDeps {
  requireOwnAccount(ctx);
  const workers = ctx.deps.workers;
  if (!workers) throw new ApiError('API_WORKER_INVALID', { message: 'Scripts cannot be deployed on this server.' });
  return workers;
}

export function scriptNameOf(ctx: RouteContext<unknown>): string {
  const name = ctx.params.script_name ?? '';
  if (!SCRIPT_NAME.test(name)) {
    throw new ApiError('API_WORKER_INVALID', {
      message: `Script name ${JSON.stringify(name.slice(0, 100))} is not valid: use 1-63 lower-case letters, digits, '-' and '_', not starting with '-'`,
    });
  }
  return name;
}

/** The caller's script of the path: a missing one and another account's both answer 10007 (or 10090 for `services`). */
export async function requireScript(
  ctx: RouteContext<unknown>,
  missing: 'API_WORKER_NOT_FOUND' | 'API_SERVICE_NOT_FOUND' = 'API_WORKER_NOT_FOUND',
): Promise<{ workers: WorkersDeps; script: ScriptRecord }> {
  const workers = requireWorkers(ctx);
  const script = await workers.registry.getScript(ctx.account.id, ctx.params.script_name ?? '');
  if (!script) throw new ApiError(missing);
  return { workers, script };
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

export function toScriptJson(script: ScriptRecord, version: VersionRecord | null): Record<string, unknown> {
  return {
    id: script.name,
    tag: script.name,
    etag: version?.etag ?? '',
    handlers: ['fetch'],
    named_handlers: [],
    created_on: iso(script.created),
    modified_on: iso(script.modified),
    usage_model: 'standard',
    compatibility_date: version?.metadata.compatibilityDate ?? null,
    compatibility_flags: version?.metadata.compatibilityFlags ?? [],
    has_modules: true,
    has_assets: false,
    logpush: script.settings.logpush,
    tags: script.settings.tags,
    tail_consumers: script.settings.tail_consumers,
    observability: script.settings.observability,
    // The platform answers the serving version's id here (wrangler prints it as the Current Version ID).
    deployment_id: script.deployment?.versionId ?? null,
    startup_time_ms: 0,
  };
}

/** A binding as the platform shows it: secrets without their values. */
export function bindingsJson(version: VersionRecord): unknown[] {
  return version.metadata.bindings.map((binding) => (binding.type === 'secret_text' ? { type: 'secret_text', name: binding.name } : binding));
}

/**
 * A version as the platform shows it. Its author is the account's one user (an account here is
 * one user: whoever uploaded, with the key or a token, is that user).
 */
export function toVersionJson(version: VersionRecord, script: ScriptRecord, account: Pick<AccountRecord, 'id' | 'email'>): Record<string, unknown> {
  const annotations: Record<string, string> = { 'workers/triggered_by': version.metadata.annotations.triggeredBy ?? 'upload' };
  if (version.metadata.annotations.message !== undefined) annotations['workers/message'] = version.metadata.annotations.message;
  if (version.metadata.annotations.tag !== undefined) annotations['workers/tag'] = version.metadata.annotations.tag;
  return {
    id: version.id,
    number: version.number,
    metadata: {
      created_on: iso(version.created),
      modified_on: iso(version.created),
      source: version.metadata.source,
      author_id: userIdOf(account),
      author_email: account.email,
      has_preview: false,
    },
    annotations,
    resources: {
      bindings: bindingsJson(version),
      script: { etag: version.etag, handlers: ['fetch'], last_deployed_from: 'api' },
      script_runtime: {
        compatibility_date: version.metadata.compatibilityDate,
        compatibility_flags: version.metadata.compatibilityFlags,
        usage_model: 'standard',
        limits: {},
      },
    },
    startup_time_ms: 0,
    script_name: script.name,
  };
}

export function toDeploymentJson(deployment: DeploymentRecord, account: Pick<AccountRecord, 'email'>): Record<string, unknown> {
  return {
    id: deployment.id,
    created_on: iso(deployment.created),
    source: 'api',
    strategy: 'percentage',
    versions: [{ version_id: deployment.versionId, percentage: 100 }],
    annotations: deployment.message === null ? {} : { 'workers/message': deployment.message },
    author_email: account.email,
  };
}

export function secretsJsonResult(names: ReadonlyArray<{ name: string }>): unknown[] {
  return names.map(({ name }) => ({ name, type: 'secret_text' }));
}
