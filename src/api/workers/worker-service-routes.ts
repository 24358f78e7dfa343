/**
 * What wrangler's `delete` and the SDK's other script calls need besides uploads: a script deleted
 * as a service (`DELETE .../services/<name>?force=`), what refers to it (`.../references`, the
 * scripts that name it a tail consumer), a search of the account's scripts, the content alone
 * (read, or replaced keeping the deployed version's bindings and compatibility), one deployment
 * (read, or deleted when it is not the serving one), and turning the dev subdomain off.
 *
 * Gaps: edgeport has no service bindings, Durable Objects or dispatch namespaces, so nothing but a
 * tail consumer setting can refer to a script; `force` is accepted and changes nothing.
 */
import { z } from 'zod';
import type { ScriptModule } from '../../db/scripts/script-records.ts';
import { successResponse } from '../envelope.ts';
import { ApiError } from '../errors.ts';
import { defineRoute, type ApiRoute } from '../route.ts';
import { validateQuery } from '../validation.ts';
import { prepareUpload, versionEtag } from './script-upload.ts';
import { readUploadForm } from './upload-form.ts';
import { storeVersion } from './version-writes.ts';
import { ACCOUNT_WORKERS, requireScript, requireWorkers, SCRIPT, toDeploymentJson, toScriptJson } from './workers-common.ts';

const TAG = 'Workers';
const anyResult = z.unknown();

/** Media types of the module kinds, as an upload names them. */
const MODULE_MEDIA_TYPES: Record<ScriptModule['type'], string> = {
  esm: 'application/javascript+module',
  cjs: 'application/javascript',
  text: 'text/plain',
  data: 'application/octet-stream',
  wasm: 'application/wasm',
  json: 'application/json',
};

const searchQuery = z.strictObject({
  name: z.string().max(256).optional(),
  id: z.string().max(256).optional(),
  order_by: z.enum(['created_on', 'modified_on', 'name']).default('name'),
  page: z.coerce.number().int().min(1).default(1),
  per_page: z.coerce.number().int().min(1).max(100).default(20),
});

function deploymentNotFound(id: string): ApiError {
  return new ApiError('API_WORKER_VERSION_NOT_FOUND', { message: `This deployment does not exist on the Worker: ${id.slice(0, 64)}` });
}

/** A multipart body of the modules, each a part named by its file name, as an upload sends them. */
function modulesBody(modules: readonly ScriptModule[], mainModule: string): Response {
  const form = new FormData();
  for (const module of [...modules].sort((a, b) => Number(b.name === mainModule) - Number(a.name === mainModule))) {
    form.append(module.name, new Blob([Buffer.from(module.content, 'base64')], { type: MODULE_MEDIA_TYPES[module.type] }), module.name);
  }
  return new Response(form, { headers: { 'cf-entrypoint': mainModule } });
}

const accountSettingsBody = z.strictObject({
  default_usage_model: z.literal('standard', { message: 'scripts run on the standard usage model here' }).optional(),
  green_compute: z.literal(false, { message: 'green compute is not provided: edgeport runs scripts on this server' }).optional(),
});

export const WORKER_SERVICE_ROUTES: ApiRoute[] = [
  defineRoute({
    method: 'GET',
    path: `${ACCOUNT_WORKERS}/account-settings`,
    operationId: 'workers-account-settings-get',
    summary: "The account's Workers settings (standard usage model)",
    tag: TAG,
    result: anyResult,
    async handler(ctx) {
      requireWorkers(ctx);
      return successResponse({ default_usage_model: 'standard', green_compute: false });
    },
  }),
  defineRoute<z.infer<typeof accountSettingsBody>>({
    method: 'PUT',
    path: `${ACCOUNT_WORKERS}/account-settings`,
    operationId: 'workers-account-settings-put',
    summary: "The account's Workers settings: only the defaults are accepted",
    tag: TAG,
    body: { schema: accountSettingsBody, invalid: 'API_WORKER_INVALID', anyMediaType: true },
    result: anyResult,
    async handler(ctx) {
      requireWorkers(ctx);
      return successResponse({ default_usage_model: 'standard', green_compute: false });
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: `${ACCOUNT_WORKERS}/services/:script_name`,
    operationId: 'workers-services-delete',
    summary: 'Delete a script with its versions, deployments, secrets and routes (wrangler delete; missing: 10090)',
    tag: TAG,
    result: anyResult,
    async handler(ctx) {
      const workers = requireWorkers(ctx);
      if (!(await workers.registry.deleteScript(ctx.account.id, ctx.params.script_name ?? ''))) throw new ApiError('API_SERVICE_NOT_FOUND');
      return successResponse(null);
    },
  }),
  defineRoute({
    method: 'GET',
    path: `${SCRIPT}/references`,
    operationId: 'workers-scripts-references',
    summary: 'What refers to the script (service bindings, Durable Objects, dispatch namespaces: none here)',
    tag: TAG,
    result: anyResult,
    async handler(ctx) {
      await requireScript(ctx);
      return successResponse({ services: { incoming: [], outgoing: [], pages_function: false }, durable_objects: [], dispatch_outbounds: [] });
    },
  }),
  defineRoute({
    method: 'GET',
    path: `${ACCOUNT_WORKERS}/tails/by-consumer/:script_name`,
    operationId: 'workers-tails-by-consumer',
    summary: "The account's scripts that name the script a tail consumer",
    tag: TAG,
    result: anyResult,
    async handler(ctx) {
      const workers = requireWorkers(ctx);
      const consumer = ctx.params.script_name ?? '';
      const producers = (await workers.registry.listScripts(ctx.account.id)).filter((script) =>
        script.settings.tail_consumers.some((tail) => tail.service === consumer),
      );
      return successResponse(producers.map((script) => ({ producer: { script: script.name } })));
    },
  }),
  defineRoute({
    method: 'GET',
    path: `${ACCOUNT_WORKERS}/scripts-search`,
    operationId: 'workers-scripts-search',
    summary: "The account's scripts whose name contains `name` or whose id is `id`",
    tag: TAG,
    query: searchQuery,
    result: anyResult,
    async handler(ctx) {
      const workers = requireWorkers(ctx);
      const q = validateQuery(searchQuery, ctx.query);
      const scripts = (await workers.registry.listScripts(ctx.account.id))
        .filter((script) => (q.name === undefined || script.name.includes(q.name.toLowerCase())) && (q.id === undefined || script.name === q.id))
        .sort((a, b) => (q.order_by === 'name' ? a.name.localeCompare(b.name) : q.order_by === 'created_on' ? a.created - b.created : a.modified - b.modified));
      const page = scripts.slice((q.page - 1) * q.per_page, q.page * q.per_page);
      return successResponse(
        page.map((script) => ({
          id: script.name,
          script_name: script.name,
          service_name: script.name,
          environment_name: 'production',
          environment_is_default: true,
          created_on: new Date(script.created).toISOString(),
          modified_on: new Date(script.modified).toISOString(),
        })),
        { resultInfo: { page: q.page, per_page: q.per_page, count: page.length, total_count: scripts.length } },
      );
    },
  }),
  defineRoute({
    method: 'GET',
    path: `${SCRIPT}/content/v2`,
    operationId: 'workers-scripts-content-get',
    summary: "The deployed version's modules (multipart, the main module first)",
    tag: TAG,
    rawResult: { contentType: 'multipart/form-data', description: 'One part per module, named by its file name' },
    async handler(ctx) {
      const { workers, script } = await requireScript(ctx);
      const runnable = script.deployment ? await workers.registry.runnable(ctx.account.id, script.name, script.deployment.versionId) : null;
      if (!runnable) throw new ApiError('API_WORKER_VERSION_NOT_FOUND', { message: 'The Worker has no deployed version' });
      return modulesBody(runnable.modules, runnable.version.metadata.mainModule);
    },
  }),
  defineRoute({
    method: 'PUT',
    path: `${SCRIPT}/content`,
    operationId: 'workers-scripts-content-put',
    summary: "Replace the script's modules, keeping the deployed version's bindings and compatibility: a new version, deployed at once",
    tag: TAG,
    rawBody: {
      contentType: 'multipart/form-data',
      description: 'A `metadata` part (main_module, or the header CF-WORKER-MAIN-MODULE-PART) and one part per module',
    },
    result: anyResult,
    async handler(ctx) {
      const { workers, script } = await requireScript(ctx);
      const deployed = script.deployment ? await workers.registry.getVersion(ctx.account.id, script.name, script.deployment.versionId) : null;
      if (!deployed) throw new ApiError('API_WORKER_VERSION_NOT_FOUND', { message: 'The Worker has no deployed version to replace the content of' });
      const form = await readUploadForm(ctx.request);
      const mainPart = ctx.request.headers.get('cf-worker-main-module-part');
      const bodyPart = ctx.request.headers.get('cf-worker-body-part');
      const given = { ...(mainPart === null ? {} : { main_module: mainPart }), ...(bodyPart === null ? {} : { body_part: bodyPart }), ...form.metadata };
      const now = ctx.deps.clock.now();
      // Only the modules change: the metadata is the deployed version's, with the main module the upload names.
      const prepared = await prepareUpload(
        { metadata: { main_module: given.main_module, body_part: given.body_part }, parts: form.parts },
        {
          accountId: ctx.account.id,
          scriptName: script.name,
          registry: workers.registry,
          store: undefined,
          strictInherit: false,
          now,
        },
      );
      const metadata = { ...deployed.metadata, mainModule: prepared.version.metadata.mainModule, annotations: {} };
      const outcome = await storeVersion(
        workers,
        ctx.account.id,
        script.name,
        {
          version: { metadata, modules: prepared.version.modules, etag: versionEtag(metadata, prepared.version.modules) },
          secrets: {},
          settings: {},
        },
        { deploy: true, now },
      );
      return successResponse(toScriptJson(outcome.script, outcome.version));
    },
  }),
  defineRoute({
    method: 'GET',
    path: `${SCRIPT}/deployments/:deployment_id`,
    operationId: 'workers-deployments-get',
    summary: "One of the script's deployments",
    tag: TAG,
    result: anyResult,
    async handler(ctx) {
      const { workers, script } = await requireScript(ctx);
      const id = ctx.params.deployment_id ?? '';
      const deployment = (await workers.registry.listDeployments(ctx.account.id, script.name)).find((candidate) => candidate.id === id);
      if (!deployment) throw deploymentNotFound(id);
      return successResponse(toDeploymentJson(deployment, ctx.account));
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: `${SCRIPT}/deployments/:deployment_id`,
    operationId: 'workers-deployments-delete',
    summary: "Delete one of the script's deployments (not the serving one)",
    tag: TAG,
    result: anyResult,
    async handler(ctx) {
      const { workers, script } = await requireScript(ctx);
      const id = ctx.params.deployment_id ?? '';
      const outcome = await workers.registry.deleteDeployment(ctx.account.id, script.name, id);
      if (outcome === 'missing') throw deploymentNotFound(id);
      if (outcome === 'latest')
        throw new ApiError('API_WORKER_INVALID', {
          message: `Deployment ${id} is the latest one, which serves the Worker: it cannot be deleted; deploy another version first`,
        });
      return successResponse(null);
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: `${SCRIPT}/subdomain`,
    operationId: 'workers-script-subdomain-delete',
    summary: "Stop serving the script on the account's subdomain",
    tag: TAG,
    result: anyResult,
    async handler(ctx) {
      const { workers, script } = await requireScript(ctx);
      await workers.registry.updateScript(ctx.account.id, script.name, { devEnabled: false });
      return successResponse({ enabled: false, previews_enabled: false });
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: `${ACCOUNT_WORKERS}/subdomain`,
    operationId: 'workers-subdomain-delete',
    summary: "Give up the account's subdomain: no script is served on the dev domain until one is chosen again",
    tag: TAG,
    result: anyResult,
    async handler(ctx) {
      const workers = requireWorkers(ctx);
      if (!(await workers.registry.deleteSubdomain(ctx.account.id))) throw new ApiError('API_WORKER_SUBDOMAIN_NOT_FOUND');
      return successResponse(null);
    },
  }),
];
