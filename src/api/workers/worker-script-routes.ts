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
import { storeVersion } from './version-writes.ts';
import {
  ACCOUNT_WORKERS,
  requireScript,
  requireWorkers,
  SCRIPT,
  scriptNameOf,
  toDeploymentJson,
  toScriptJson,
  toVersionJson,
  type WorkersDeps,
} from './workers-common.ts';

const TAG = 'Workers';
const anyResult = z.unknown();

async function uploadScript(ctx: RouteContext<unknown>, deploy: boolean): Promise<Response> {
  const workers = requireWorkers(ctx);
  const name = scriptNameOf(ctx);
  const accountId = ctx.account.id;
  if (!deploy && !(await workers.registry.getScript(accountId, name))) throw new ApiError('API_WORKER_NOT_FOUND');
  const form = await readUploadForm(ctx.request);
  const now = ctx.deps.clock.now();
  const prepared = await prepareUpload(form, {
    accountId,
    scriptName: name,
    registry: workers.registry,
    store: ctx.deps.store ? accountStore(ctx.deps.store, accountId) : undefined,
    strictInherit: ctx.query.get('bindings_inherit') === 'strict',
    now,
  });
  const outcome = await storeVersion(workers, accountId, name, prepared, { deploy, now });
  return successResponse(deploy ? toScriptJson(outcome.script, outcome.version) : toVersionJson(outcome.version, outcome.script, ctx.account));
}

/** The account's subdomain, given one on first use: its e-mail's local part when free, else one from its id. */
async function accountSubdomain(workers: WorkersDeps, account: { id: string; email: string }): Promise<string> {
  const existing = await workers.registry.getSubdomain(account.id);
  if (existing !== null) return existing;
  const local = account.email
    .split('@')[0]!
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
  for (const candidate of [local, `${local}-${account.id.slice(0, 6)}`, `account-${account.id.slice(0, 12)}`]) {
    if (candidate.length > 0 && (await workers.registry.setSubdomain(account.id, candidate))) return candidate;
  }
  return (await workers.registry.getSubdomain(account.id)) ?? `account-${account.id}`;
}

const deploymentBody = z.strictObject({
  strategy: z.literal('percentage').default('percentage'),
  versions: z
    .array(z.strictObject({ version_id: z.string().max(64), percentage: z.number() }))
    .min(1)
    .max(2),
  annotations: z.object({ 'workers/message': z.string().max(1024).optional() }).optional(),
  // How Durable Objects take new code; wrangler 4 sends it with every redeploy. Accepted and
  // checked, with nothing to apply: this server runs no Durable Objects.
  code_update_strategy: z.strictObject({ mode: z.enum(['immediate', 'deferred']), max_delay: z.number().int().min(0).max(86_400).optional() }).optional(),
});
const subdomainBody = z.strictObject({ enabled: z.boolean(), previews_enabled: z.boolean().optional() });
const accountSubdomainBody = z.strictObject({
  subdomain: z.string().regex(/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/, 'must be 1-63 lower-case letters, digits and -'),
});

export const WORKER_SCRIPT_ROUTES: ApiRoute[] = [
  defineRoute({
    method: 'GET',
    path: `${ACCOUNT_WORKERS}/scripts`,
    operationId: 'workers-scripts-list',
    summary: "List the account's scripts",
    tag: TAG,
    result: anyResult,
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
    method: 'PUT',
    path: SCRIPT,
    operationId: 'workers-scripts-upload',
    summary: 'Upload a script and deploy it (multipart: metadata + modules; at most 10 MiB)',
    tag: TAG,
    rawBody: {
      contentType: 'multipart/form-data',
      description: 'A `metadata` part (JSON: main_module, compatibility_date, compatibility_flags, bindings, keep_bindings) and one part per module',
    },
    result: anyResult,
    handler: (ctx) => uploadScript(ctx, true),
  }),
  defineRoute({
    method: 'GET',
    path: SCRIPT,
    operationId: 'workers-scripts-get',
    summary: "The deployed version's main module",
    tag: TAG,
    rawResult: { contentType: 'application/javascript', description: "The main module's source" },
    async handler(ctx) {
      const { workers, script } = await requireScript(ctx);
      const runnable = script.deployment ? await workers.registry.runnable(ctx.account.id, script.name, script.deployment.versionId) : null;
      const main = runnable?.modules.find((module) => module.name === runnable.version.metadata.mainModule);
      return new Response(main ? Buffer.from(main.content, 'base64') : '', { headers: { 'content-type': 'application/javascript' } });
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: SCRIPT,
    operationId: 'workers-scripts-delete',
    summary: 'Delete a script with its versions, deployments, secrets and routes',
    tag: TAG,
    result: anyResult,
    async handler(ctx) {
      const workers = requireWorkers(ctx);
      if (!(await workers.registry.deleteScript(ctx.account.id, ctx.params.script_name ?? ''))) throw new ApiError('API_WORKER_NOT_FOUND');
      return successResponse(null);
    },
  }),
  defineRoute({
    method: 'GET',
    path: `${ACCOUNT_WORKERS}/services/:script_name`,
    operationId: 'workers-services-get',
    summary: 'A script as a service (missing: 10090)',
    tag: TAG,
    result: anyResult,
    async handler(ctx) {
      const { workers, script } = await requireScript(ctx, 'API_SERVICE_NOT_FOUND');
      const version = script.deployment ? await workers.registry.getVersion(ctx.account.id, script.name, script.deployment.versionId) : null;
      const created = new Date(script.created).toISOString();
      const modified = new Date(script.modified).toISOString();
      return successResponse({
        id: script.name,
        created_on: created,
        modified_on: modified,
        default_environment: { environment: 'production', created_on: created, modified_on: modified, script: toScriptJson(script, version) },
        environments: [{ environment: 'production', created_on: created, modified_on: modified }],
      });
    },
  }),
  defineRoute({
    method: 'POST',
    path: `${SCRIPT}/versions`,
    operationId: 'workers-versions-create',
    summary: 'Upload a version without deploying it (multipart, as the script upload)',
    tag: TAG,
    rawBody: { contentType: 'multipart/form-data', description: 'As PUT .../scripts/:script_name' },
    result: anyResult,
    handler: (ctx) => uploadScript(ctx, false),
  }),
  defineRoute({
    method: 'GET',
    path: `${SCRIPT}/versions`,
    operationId: 'workers-versions-list',
    summary: "The script's versions, newest first (result.items)",
    tag: TAG,
    result: anyResult,
    async handler(ctx) {
      const { workers, script } = await requireScript(ctx);
      const versions = await workers.registry.listVersions(ctx.account.id, script.name);
      const perPage = Math.min(100, Math.max(1, Number(ctx.query.get('per_page') ?? 100) || 100));
      const page = Math.max(1, Number(ctx.query.get('page') ?? 1) || 1);
      const items = versions.slice((page - 1) * perPage, page * perPage).map((version) => toVersionJson(version, script, ctx.account));
      return successResponse(
        { items },
        {
          resultInfo: {
            page,
            per_page: perPage,
            count: items.length,
            total_count: versions.length,
            total_pages: Math.max(1, Math.ceil(versions.length / perPage)),
          },
        },
      );
    },
  }),
  defineRoute({
    method: 'GET',
    path: `${SCRIPT}/versions/:version_id`,
    operationId: 'workers-versions-get',
    summary: 'One version',
    tag: TAG,
    result: anyResult,
    async handler(ctx) {
      const { workers, script } = await requireScript(ctx);
      const id = ctx.params.version_id ?? '';
      const version = await workers.registry.getVersion(ctx.account.id, script.name, id);
      if (!version) throw new ApiError('API_WORKER_VERSION_NOT_FOUND', { message: `This version does not exist on the Worker: ${id.slice(0, 64)}` });
      return successResponse(toVersionJson(version, script, ctx.account));
    },
  }),
  defineRoute<z.infer<typeof deploymentBody>>({
    method: 'POST',
    path: `${SCRIPT}/deployments`,
    operationId: 'workers-deployments-create',
    summary: "Deploy one of the script's versions (100%)",
    tag: TAG,
    body: { schema: deploymentBody, invalid: 'API_WORKER_INVALID' },
    result: anyResult,
    async handler(ctx) {
      const { workers, script } = await requireScript(ctx);
      const serving = ctx.body.versions.filter((version) => version.percentage > 0);
      if (serving.length !== 1 || serving[0]!.percentage !== 100) {
        throw new ApiError('API_WORKER_INVALID', {
          message: 'A deployment serves one version at 100% on this server: gradual deployments (splits between versions) are not supported',
        });
      }
      const versionId = serving[0]!.version_id;
      const deployment = await workers.registry.deploy(ctx.account.id, script.name, versionId, ctx.body.annotations?.['workers/message'] ?? null);
      if (!deployment) throw new ApiError('API_WORKER_VERSION_NOT_FOUND', { message: `This version does not exist on the Worker: ${versionId}` });
      return successResponse(toDeploymentJson(deployment, ctx.account));
    },
  }),
  defineRoute({
    method: 'GET',
    path: `${SCRIPT}/deployments`,
    operationId: 'workers-deployments-list',
    summary: "The script's deployments, the serving one first (result.deployments)",
    tag: TAG,
    result: anyResult,
    async handler(ctx) {
      const { workers, script } = await requireScript(ctx);
      const all = (await workers.registry.listDeployments(ctx.account.id, script.name)).map((deployment) => toDeploymentJson(deployment, ctx.account));
      // wrangler reads result.deployments (every one, asking no page); the official SDK pages over result.items, asking page 2 next.
      const perPage = Math.min(100, Math.max(1, Number(ctx.query.get('per_page') ?? 100) || 100));
      const page = Math.max(1, Number(ctx.query.get('page') ?? 1) || 1);
      const deployments = ctx.query.has('page') || ctx.query.has('per_page') ? all.slice((page - 1) * perPage, page * perPage) : all;
      return successResponse(
        { deployments, items: deployments },
        {
          resultInfo: {
            page,
            per_page: perPage,
            count: deployments.length,
            total_count: all.length,
            total_pages: Math.max(1, Math.ceil(all.length / perPage)),
          },
        },
      );
    },
  }),
  defineRoute({
    method: 'GET',
    path: `${SCRIPT}/subdomain`,
    operationId: 'workers-script-subdomain-get',
    summary: "Whether the account's subdomain serves the script",
    tag: TAG,
    result: anyResult,
    async handler(ctx) {
      const { script } = await requireScript(ctx);
      return successResponse({ enabled: script.devEnabled, previews_enabled: false });
    },
  }),
  defineRoute<z.infer<typeof subdomainBody>>({
    method: 'POST',
    path: `${SCRIPT}/subdomain`,
    operationId: 'workers-script-subdomain-set',
    summary: "Serve the script on the account's subdomain, or stop",
    tag: TAG,
    body: { schema: subdomainBody, invalid: 'API_WORKER_INVALID', anyMediaType: true },
    result: anyResult,
    async handler(ctx) {
      const { workers, script } = await requireScript(ctx);
      if (ctx.body.enabled) await accountSubdomain(workers, ctx.account);
      const updated = await workers.registry.updateScript(ctx.account.id, script.name, { devEnabled: ctx.body.enabled });
      return successResponse({ enabled: updated?.devEnabled ?? ctx.body.enabled, previews_enabled: false });
    },
  }),
  defineRoute({
    method: 'GET',
    path: `${ACCOUNT_WORKERS}/subdomain`,
    operationId: 'workers-subdomain-get',
    summary: "The account's subdomain (<script>.<subdomain>.<dev domain>)",
    tag: TAG,
    result: anyResult,
    async handler(ctx) {
      const workers = requireWorkers(ctx);
      return successResponse({ subdomain: await accountSubdomain(workers, ctx.account) });
    },
  }),
  defineRoute<z.infer<typeof accountSubdomainBody>>({
    method: 'PUT',
    path: `${ACCOUNT_WORKERS}/subdomain`,
    operationId: 'workers-subdomain-put',
    summary: "Choose the account's subdomain",
    tag: TAG,
    body: { schema: accountSubdomainBody, invalid: 'API_WORKER_INVALID', anyMediaType: true },
    result: anyResult,
    async handler(ctx) {
      const workers = requireWorkers(ctx);
      if (!(await workers.registry.setSubdomain(ctx.account.id, ctx.body.subdomain))) {
        throw new ApiError('API_WORKER_SUBDOMAIN_UNAVAILABLE', { message: `The subdomain '${ctx.body.subdomain}' is not available: choose another` });
      }
      return successResponse({ subdomain: ctx.body.subdomain });
    },
  }),
];
