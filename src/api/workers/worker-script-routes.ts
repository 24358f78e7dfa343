/**
 * Scripts an account deploys, over the Workers API's paths (`/accounts/:account_id/workers/...`):
 * upload (and deploy) a script, read, list and delete it, its versions and deployments, secrets,
 * settings and workers.dev-style subdomain. What wrangler's deploy, versions, deployments and secret
 * commands and the official SDK's `workers.scripts` call. Another account's script answers
 * exactly like a missing one (10007; 10090 on `services`).
 *
 * By design: a deployment serves one version (100%); gradual splits are refused. A secret is the
 * script's, not a version's: writing one restarts the deployed version with it, at once.
 */
import { z } from 'zod';
import { accountStore } from '../../store/engine/account-store.ts';
import { successResponse } from '../envelope.ts';
import { ApiError } from '../errors.ts';
import { defineRoute, type ApiRoute, type RouteContext } from '../route.ts';
import { prepareUpload } from './script-upload.ts';
import { readUploadForm } from './upload-form.ts';
import {
  ACCOUNT_WORKERS, requireScript, requireWorkers, SCRIPT, scriptNameOf, secretsJsonResult, toDeploymentJson, toScriptJson, toVersionJson, type WorkersDeps,
} from './workers-common.ts';

const TAG = 'Workers';
/** When an upload that found too many others waiting for their trial start is told to come back. */
const BUSY_RETRY_S = 5;
const anyResult = z.unknown();

async function uploadScript(ctx: RouteContext<unknown>, deploy: boolean): Promise<Response> {
  const workers = requireWorkers(ctx);
  const name = scriptNameOf(ctx);
  const accountId = ctx.account.id;
  if (!deploy && !(await workers.registry.getScript(accountId, name))) throw new ApiError('API_WORKER_NOT_FOUND');
  const form = await readUploadForm(ctx.request);
  const now = ctx.deps.clock.now();
  const prepared = await prepareUpload(form, {
    accountId, scriptName: name, registry: workers.registry, store: ctx.deps.store ? accountStore(ctx.deps.store, accountId) : undefined,
    strictInherit: ctx.query.get('bindings_inherit') === 'strict', now,
  });
  // Before the trial start, which is costly: an upload past the account's script quota is refused now (and again, exactly, as it is stored).
  const refusal = await workers.registry.quotaRefusal(accountId, name, prepared.version, deploy);
  if (refusal) throw refusal;
  const secrets = { ...await workers.registry.secretValues(accountId, name), ...prepared.secrets };
  const failure = await workers.tryStart({
    version: { id: 'trial', accountId, script: name, number: 0, created: now, metadata: prepared.version.metadata, etag: prepared.version.etag },
    modules: prepared.version.modules, secrets,
  });
  if (typeof failure === 'object' && failure !== null) {
    throw new ApiError('API_WORKER_BUSY', { message: `Please wait and consider throttling your request speed: too many script uploads are being tried; retry after ${BUSY_RETRY_S} s`, headers: { 'retry-after': String(BUSY_RETRY_S) } });
  }
  if (failure !== null) throw new ApiError('API_WORKER_START_FAILED', { message: failure });
  const outcome = await workers.registry.uploadVersion(accountId, name, prepared.version, {
    deploy, maxScripts: workers.maxScriptsPerAccount, ...(prepared.version.metadata.annotations.message === undefined ? {} : { message: prepared.version.metadata.annotations.message }),
  });
  if (outcome.kind === 'limit') {
    throw new ApiError('API_WORKER_LIMIT', { message: `You have exceeded the limit of ${outcome.limit} Workers on your account: delete one, or ask the operator to raise [workers] max_scripts_per_account` });
  }
  for (const [secret, value] of Object.entries(prepared.secrets)) await workers.registry.setSecret(accountId, name, secret, value, { asVersion: false });
  return successResponse(deploy ? toScriptJson(outcome.script, outcome.version) : toVersionJson(outcome.version, outcome.script));
}

/** The account's subdomain, given one on first use: its e-mail's local part when free, else one from its id. */
async function accountSubdomain(workers: WorkersDeps, account: { id: string; email: string }): Promise<string> {
  const existing = await workers.registry.getSubdomain(account.id);
  if (existing !== null) return existing;
  const local = account.email.split('@')[0]!.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40);
  for (const candidate of [local, `${local}-${account.id.slice(0, 6)}`, `account-${account.id.slice(0, 12)}`]) {
    if (candidate.length > 0 && await workers.registry.setSubdomain(account.id, candidate)) return candidate;
  }
  return (await workers.registry.getSubdomain(account.id)) ?? `account-${account.id}`;
}

const secretBody = z.strictObject({
  name: z.string().min(1).max(256).regex(/^[A-Za-z_$][A-Za-z0-9_$]*$/, 'must be a JavaScript identifier'),
  text: z.string().max(5 * 1024),
  type: z.literal('secret_text').default('secret_text'),
});
const settingsBody = z.strictObject({
  logpush: z.boolean().optional(),
  tags: z.array(z.string().max(256)).max(8).optional(),
  tail_consumers: z.array(z.object({ service: z.string().max(64) })).max(8).optional(),
  observability: z.object({ enabled: z.boolean(), head_sampling_rate: z.number().min(0).max(1).optional() }).optional(),
});
const deploymentBody = z.strictObject({
  strategy: z.literal('percentage').default('percentage'),
  versions: z.array(z.strictObject({ version_id: z.string().max(64), percentage: z.number() })).min(1).max(2),
  annotations: z.object({ 'workers/message': z.string().max(1024).optional() }).optional(),
  // How Durable Objects take new code; wrangler 4 sends it with every redeploy. Accepted and
  // checked, with nothing to apply: this server runs no Durable Objects.
  code_update_strategy: z.strictObject({ mode: z.enum(['immediate', 'deferred']), max_delay: z.number().int().min(0).max(86_400).optional() }).optional(),
});
const subdomainBody = z.strictObject({ enabled: z.boolean(), previews_enabled: z.boolean().optional() });
const accountSubdomainBody = z.strictObject({ subdomain: z.string().regex(/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/, 'must be 1-63 lower-case letters, digits and -') });

export const WORKER_SCRIPT_ROUTES: ApiRoute[] = [
  defineRoute({
    method: 'GET', path: `${ACCOUNT_WORKERS}/scripts`, operationId: 'workers-scripts-list', summary: 'List the account\'s scripts', tag: TAG, result: anyResult,
    async handler(ctx) {
      const workers = requireWorkers(ctx);
      const scripts = await workers.registry.listScripts(ctx.account.id);
      const result = [];
      for (const script of scripts) {
        const version = script.deployment ? await workers.registry.getVersion(ctx.account.id, script.name, script.deployment.versionId) : null;
        result.push(toScriptJson(script, version));
      }
      return successResponse(result);
    },
  }),
  defineRoute({
    method: 'PUT', path: SCRIPT, operationId: 'workers-scripts-upload', summary: 'Upload a script and deploy it (multipart: metadata + modules; at most 10 MiB)', tag: TAG,
    rawBody: { contentType: 'multipart/form-data', description: 'A `metadata` part (JSON: main_module, compatibility_date, compatibility_flags, bindings, keep_bindings) and one part per module' },
    result: anyResult,
    handler: (ctx) => uploadScript(ctx, true),
  }),
  defineRoute({
    method: 'GET', path: SCRIPT, operationId: 'workers-scripts-get', summary: 'The deployed version\'s main module', tag: TAG,
    rawResult: { contentType: 'application/javascript', description: 'The main module\'s source' },
    async handler(ctx) {
      const { workers, script } = await requireScript(ctx);
      const runnable = script.deployment ? await workers.registry.runnable(ctx.account.id, script.name, script.deployment.versionId) : null;
      const main = runnable?.modules.find((module) => module.name === runnable.version.metadata.mainModule);
      return new Response(main ? Buffer.from(main.content, 'base64') : '', { headers: { 'content-type': 'application/javascript' } });
    },
  }),
  defineRoute({
    method: 'DELETE', path: SCRIPT, operationId: 'workers-scripts-delete', summary: 'Delete a script with its versions, deployments, secrets and routes', tag: TAG, result: anyResult,
    async handler(ctx) {
      const workers = requireWorkers(ctx);
      if (!(await workers.registry.deleteScript(ctx.account.id, ctx.params.script_name ?? ''))) throw new ApiError('API_WORKER_NOT_FOUND');
      return successResponse(null);
    },
  }),
  defineRoute({
    method: 'GET', path: `${ACCOUNT_WORKERS}/services/:script_name`, operationId: 'workers-services-get', summary: 'A script as a service (missing: 10090)', tag: TAG, result: anyResult,
    async handler(ctx) {
      const { workers, script } = await requireScript(ctx, 'API_SERVICE_NOT_FOUND');
      const version = script.deployment ? await workers.registry.getVersion(ctx.account.id, script.name, script.deployment.versionId) : null;
      const created = new Date(script.created).toISOString();
      const modified = new Date(script.modified).toISOString();
      return successResponse({
        id: script.name, created_on: created, modified_on: modified,
        default_environment: { environment: 'production', created_on: created, modified_on: modified, script: toScriptJson(script, version) },
        environments: [{ environment: 'production', created_on: created, modified_on: modified }],
      });
    },
  }),
  defineRoute({
    method: 'GET', path: `${ACCOUNT_WORKERS}/workers/:script_name`, operationId: 'workers-workers-get', summary: 'A script with its subdomain settings', tag: TAG, result: anyResult,
    async handler(ctx) {
      const { script } = await requireScript(ctx);
      return successResponse({
        id: script.name, name: script.name, created_on: new Date(script.created).toISOString(), updated_on: new Date(script.modified).toISOString(),
        subdomain: { enabled: script.devEnabled, previews_enabled: false }, logpush: script.settings.logpush, tags: script.settings.tags,
        tail_consumers: script.settings.tail_consumers, observability: script.settings.observability,
      });
    },
  }),
  defineRoute({
    method: 'GET', path: `${SCRIPT}/secrets`, operationId: 'workers-secrets-list', summary: 'The names of the script\'s secrets (never their values)', tag: TAG, result: anyResult,
    async handler(ctx) {
      const { workers, script } = await requireScript(ctx);
      return successResponse(secretsJsonResult(await workers.registry.listSecrets(ctx.account.id, script.name)));
    },
  }),
  defineRoute<z.infer<typeof secretBody>>({
    method: 'PUT', path: `${SCRIPT}/secrets`, operationId: 'workers-secrets-put', summary: 'Write a secret (the deployed version gets it at once)', tag: TAG,
    body: { schema: secretBody, invalid: 'API_WORKER_INVALID' }, result: anyResult,
    async handler(ctx) {
      const { workers, script } = await requireScript(ctx);
      await workers.registry.setSecret(ctx.account.id, script.name, ctx.body.name, ctx.body.text);
      return successResponse({ name: ctx.body.name, type: 'secret_text' });
    },
  }),
  defineRoute({
    method: 'GET', path: `${SCRIPT}/secrets/:secret_name`, operationId: 'workers-secrets-get', summary: 'A secret\'s name and type (never its value)', tag: TAG, result: anyResult,
    async handler(ctx) {
      const { workers, script } = await requireScript(ctx);
      const name = secretName(ctx);
      if (!(await workers.registry.listSecrets(ctx.account.id, script.name)).some((secret) => secret.name === name)) throw secretNotFound(name);
      return successResponse({ name, type: 'secret_text' });
    },
  }),
  defineRoute({
    method: 'DELETE', path: `${SCRIPT}/secrets/:secret_name`, operationId: 'workers-secrets-delete', summary: 'Delete a secret', tag: TAG, result: anyResult,
    async handler(ctx) {
      const { workers, script } = await requireScript(ctx);
      const name = secretName(ctx);
      if (!(await workers.registry.setSecret(ctx.account.id, script.name, name, null))) throw secretNotFound(name);
      return successResponse(null);
    },
  }),
  ...(['script-settings', 'settings'] as const).flatMap((path) => [
    defineRoute({
      method: 'GET', path: `${SCRIPT}/${path}`, operationId: `workers-${path}-get`, summary: 'The script\'s settings', tag: TAG, result: anyResult,
      async handler(ctx) {
        const { workers, script } = await requireScript(ctx);
        return successResponse(await settingsJson(workers, script.accountId, script.name, path === 'settings'));
      },
    }),
    defineRoute({
      method: 'PATCH', path: `${SCRIPT}/${path}`, operationId: `workers-${path}-edit`, summary: 'Change the script\'s settings (logpush, tags, tail_consumers, observability)', tag: TAG,
      rawBody: { contentType: 'application/json', description: 'The settings to change (multipart: a `settings` part)' }, result: anyResult,
      async handler(ctx) {
        const { workers, script } = await requireScript(ctx);
        const parsed = settingsBody.safeParse(stripUnsupported(await readSettings(ctx.request, ctx.deps.maxBodyBytes)));
        if (!parsed.success) throw new ApiError('API_WORKER_INVALID', { message: `settings.${parsed.error.issues[0]!.path.join('.')}: ${parsed.error.issues[0]!.message}` });
        const settings = Object.fromEntries(Object.entries(parsed.data).filter(([, value]) => value !== undefined));
        await workers.registry.updateScript(ctx.account.id, script.name, { settings });
        return successResponse(await settingsJson(workers, script.accountId, script.name, path === 'settings'));
      },
    }),
  ]),
  defineRoute({
    method: 'POST', path: `${SCRIPT}/versions`, operationId: 'workers-versions-create', summary: 'Upload a version without deploying it (multipart, as the script upload)', tag: TAG,
    rawBody: { contentType: 'multipart/form-data', description: 'As PUT .../scripts/:script_name' }, result: anyResult,
    handler: (ctx) => uploadScript(ctx, false),
  }),
  defineRoute({
    method: 'GET', path: `${SCRIPT}/versions`, operationId: 'workers-versions-list', summary: 'The script\'s versions, newest first (result.items)', tag: TAG, result: anyResult,
    async handler(ctx) {
      const { workers, script } = await requireScript(ctx);
      const versions = await workers.registry.listVersions(ctx.account.id, script.name);
      const perPage = Math.min(100, Math.max(1, Number(ctx.query.get('per_page') ?? 100) || 100));
      const page = Math.max(1, Number(ctx.query.get('page') ?? 1) || 1);
      const items = versions.slice((page - 1) * perPage, page * perPage).map((version) => toVersionJson(version, script));
      return successResponse({ items }, {
        resultInfo: { page, per_page: perPage, count: items.length, total_count: versions.length, total_pages: Math.max(1, Math.ceil(versions.length / perPage)) },
      });
    },
  }),
  defineRoute({
    method: 'GET', path: `${SCRIPT}/versions/:version_id`, operationId: 'workers-versions-get', summary: 'One version', tag: TAG, result: anyResult,
    async handler(ctx) {
      const { workers, script } = await requireScript(ctx);
      const id = ctx.params.version_id ?? '';
      const version = await workers.registry.getVersion(ctx.account.id, script.name, id);
      if (!version) throw new ApiError('API_WORKER_VERSION_NOT_FOUND', { message: `This version does not exist on the Worker: ${id.slice(0, 64)}` });
      return successResponse(toVersionJson(version, script));
    },
  }),
  defineRoute<z.infer<typeof deploymentBody>>({
    method: 'POST', path: `${SCRIPT}/deployments`, operationId: 'workers-deployments-create', summary: 'Deploy one of the script\'s versions (100%)', tag: TAG,
    body: { schema: deploymentBody, invalid: 'API_WORKER_INVALID' }, result: anyResult,
    async handler(ctx) {
      const { workers, script } = await requireScript(ctx);
      const serving = ctx.body.versions.filter((version) => version.percentage > 0);
      if (serving.length !== 1 || serving[0]!.percentage !== 100) {
        throw new ApiError('API_WORKER_INVALID', { message: 'A deployment serves one version at 100% on this server: gradual deployments (splits between versions) are not supported' });
      }
      const versionId = serving[0]!.version_id;
      const deployment = await workers.registry.deploy(ctx.account.id, script.name, versionId, ctx.body.annotations?.['workers/message'] ?? null);
      if (!deployment) throw new ApiError('API_WORKER_VERSION_NOT_FOUND', { message: `This version does not exist on the Worker: ${versionId}` });
      return successResponse(toDeploymentJson(deployment));
    },
  }),
  defineRoute({
    method: 'GET', path: `${SCRIPT}/deployments`, operationId: 'workers-deployments-list', summary: 'The script\'s deployments, the serving one first (result.deployments)', tag: TAG, result: anyResult,
    async handler(ctx) {
      const { workers, script } = await requireScript(ctx);
      const deployments = (await workers.registry.listDeployments(ctx.account.id, script.name)).map(toDeploymentJson);
      // wrangler reads result.deployments; the official SDK pages over result.items.
      return successResponse({ deployments, items: deployments });
    },
  }),
  defineRoute({
    method: 'GET', path: `${SCRIPT}/subdomain`, operationId: 'workers-script-subdomain-get', summary: 'Whether the account\'s subdomain serves the script', tag: TAG, result: anyResult,
    async handler(ctx) {
      const { script } = await requireScript(ctx);
      return successResponse({ enabled: script.devEnabled, previews_enabled: false });
    },
  }),
  defineRoute<z.infer<typeof subdomainBody>>({
    method: 'POST', path: `${SCRIPT}/subdomain`, operationId: 'workers-script-subdomain-set', summary: 'Serve the script on the account\'s subdomain, or stop', tag: TAG,
    body: { schema: subdomainBody, invalid: 'API_WORKER_INVALID', anyMediaType: true }, result: anyResult,
    async handler(ctx) {
      const { workers, script } = await requireScript(ctx);
      if (ctx.body.enabled) await accountSubdomain(workers, ctx.account);
      const updated = await workers.registry.updateScript(ctx.account.id, script.name, { devEnabled: ctx.body.enabled });
      return successResponse({ enabled: updated?.devEnabled ?? ctx.body.enabled, previews_enabled: false });
    },
  }),
  defineRoute({
    method: 'GET', path: `${ACCOUNT_WORKERS}/subdomain`, operationId: 'workers-subdomain-get', summary: 'The account\'s subdomain (<script>.<subdomain>.<dev domain>)', tag: TAG, result: anyResult,
    async handler(ctx) {
      const workers = requireWorkers(ctx);
      return successResponse({ subdomain: await accountSubdomain(workers, ctx.account) });
    },
  }),
  defineRoute<z.infer<typeof accountSubdomainBody>>({
    method: 'PUT', path: `${ACCOUNT_WORKERS}/subdomain`, operationId: 'workers-subdomain-put', summary: 'Choose the account\'s subdomain', tag: TAG,
    body: { schema: accountSubdomainBody, invalid: 'API_WORKER_INVALID', anyMediaType: true }, result: anyResult,
    async handler(ctx) {
      const workers = requireWorkers(ctx);
      if (!(await workers.registry.setSubdomain(ctx.account.id, ctx.body.subdomain))) {
        throw new ApiError('API_WORKER_SUBDOMAIN_UNAVAILABLE', { message: `The subdomain '${ctx.body.subdomain}' is not available: choose another` });
      }
      return successResponse({ subdomain: ctx.body.subdomain });
    },
  }),
];

function secretName(ctx: RouteContext<unknown>): string {
  const raw = ctx.params.secret_name ?? '';
  return ctx.query.get('url_encoded') === 'true' ? decodeURIComponent(raw) : raw;
}

function secretNotFound(name: string): ApiError {
  return new ApiError('API_WORKER_SECRET_NOT_FOUND', { message: `The script has no secret named ${JSON.stringify(name.slice(0, 256))}` });
}

/** Keys of the settings this server keeps; others the platform has (placement, limits, bindings) are accepted and ignored. */
function stripUnsupported(settings: unknown): unknown {
  if (settings === null || typeof settings !== 'object' || Array.isArray(settings)) return settings;
  const kept = ['logpush', 'tags', 'tail_consumers', 'observability'];
  return Object.fromEntries(Object.entries(settings).filter(([key]) => kept.includes(key)));
}

/** A settings PATCH: JSON, or multipart with a `settings` part (the SDK's script-and-version settings). */
async function readSettings(request: Request, maxBytes: number): Promise<unknown> {
  const declared = Number(request.headers.get('content-length') ?? 0);
  if (declared > maxBytes) throw new ApiError('API_BODY_TOO_LARGE', { message: `Request body is too large: at most ${maxBytes} bytes are accepted` });
  const type = request.headers.get('content-type') ?? '';
  try {
    if (/^multipart\/form-data/i.test(type)) {
      const part = (await request.formData()).get('settings');
      return part === null ? {} : JSON.parse(typeof part === 'string' ? part : await part.text()) as unknown;
    }
    const text = await request.text();
    if (text.length > maxBytes) throw new Error('too large');
    return text === '' ? {} : JSON.parse(text) as unknown;
  } catch {
    throw new ApiError('API_MALFORMED_JSON');
  }
}

async function settingsJson(workers: WorkersDeps, accountId: string, name: string, withVersion: boolean): Promise<Record<string, unknown>> {
  const script = (await workers.registry.getScript(accountId, name))!;
  const base = { ...script.settings };
  if (!withVersion) return base;
  const version = script.deployment ? await workers.registry.getVersion(accountId, name, script.deployment.versionId) : null;
  return {
    ...base,
    bindings: version ? version.metadata.bindings.map((binding) => (binding.type === 'secret_text' ? { type: 'secret_text', name: binding.name } : binding)) : [],
    compatibility_date: version?.metadata.compatibilityDate ?? null,
    compatibility_flags: version?.metadata.compatibilityFlags ?? [],
    usage_model: 'standard',
    placement: {},
    limits: {},
  };
}
