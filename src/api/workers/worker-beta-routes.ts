/**
 * The Workers API's `workers/workers` resources (the SDK's `workers.beta.workers`), which name a
 * script as a Worker: list them, read one, change its script-level settings and whether its dev
 * subdomain serves it (`PUT` replaces them, `PATCH` changes those given), delete it. A Worker here
 * is a deployed script (`id` and `name` are the script's name). Making a Worker without code, its
 * versions under this path and renaming one are refused by name (not-provided.ts): upload with
 * `PUT .../workers/scripts/<name>`.
 */
import { z } from 'zod';
import type { ScriptRecord, ScriptSettings } from '../../db/scripts/script-records.ts';
import { DEFAULT_SETTINGS } from '../../db/scripts/script-records.ts';
import { successResponse } from '../envelope.ts';
import { ApiError } from '../errors.ts';
import { defineRoute, type ApiRoute, type RouteContext } from '../route.ts';
import { validateQuery } from '../validation.ts';
import { scriptSettingsOf } from './script-settings.ts';
import { ACCOUNT_WORKERS, requireScript, requireWorkers, type WorkersDeps } from './workers-common.ts';

const TAG = 'Workers';
const WORKER = `${ACCOUNT_WORKERS}/workers/:script_name`;
const anyResult = z.unknown();
const listQuery = z.object({ page: z.coerce.number().int().min(1).default(1), per_page: z.coerce.number().int().min(1).max(100).default(20) }).loose();
const workerBody = z.looseObject({
  name: z.string().max(63).optional(),
  subdomain: z.looseObject({ enabled: z.boolean().optional(), previews_enabled: z.boolean().optional() }).optional(),
  previews_base_config: z.unknown().optional(),
});

async function workerJson(workers: WorkersDeps, script: ScriptRecord): Promise<Record<string, unknown>> {
  const domains = (await workers.registry.listScriptRoutes(script.accountId, script.name)).filter((route) => route.customDomain);
  return {
    id: script.name,
    name: script.name,
    created_on: new Date(script.created).toISOString(),
    updated_on: new Date(script.modified).toISOString(),
    deployed_on: script.deployment ? new Date(script.deployment.created).toISOString() : null,
    subdomain: { enabled: script.devEnabled, previews_enabled: false },
    logpush: script.settings.logpush,
    tags: script.settings.tags,
    tail_consumers: script.settings.tail_consumers,
    observability: script.settings.observability,
    references: {
      dispatch_namespace_outbounds: [],
      domains: domains.map((route) => ({
        id: route.id,
        certificate_id: '',
        hostname: route.pattern.replace(/\/\*$/, ''),
        zone_id: route.zoneId,
        zone_name: '',
      })),
      durable_objects: [],
      queues: [],
    },
  };
}

/** A PUT (`replace`: what it leaves out goes back to the default) or PATCH of a Worker's settings. */
async function changeWorker(ctx: RouteContext<z.infer<typeof workerBody>>, replace: boolean): Promise<Response> {
  const { workers, script } = await requireScript(ctx);
  const body = ctx.body;
  if (body.name !== undefined && body.name !== script.name) {
    throw new ApiError('API_NOT_PROVIDED', {
      message: `not entitled: edgeport does not provide renaming a Worker; upload the script as ${JSON.stringify(body.name)} and delete ${JSON.stringify(script.name)}`,
    });
  }
  if (body.previews_base_config !== undefined && body.previews_base_config !== null && Object.keys(body.previews_base_config as object).length > 0) {
    throw new ApiError('API_NOT_PROVIDED', { message: 'not entitled: edgeport does not provide Worker previews (previews_base_config)' });
  }
  const { name: _name, subdomain, previews_base_config: _previews, ...rest } = body;
  const given = scriptSettingsOf(rest, 'worker');
  const settings: Partial<ScriptSettings> = replace ? { ...DEFAULT_SETTINGS, ...given } : given;
  const devEnabled = subdomain?.enabled ?? (replace ? true : undefined);
  const updated = await workers.registry.updateScript(ctx.account.id, script.name, { settings, ...(devEnabled === undefined ? {} : { devEnabled }) });
  if (!updated) throw new ApiError('API_WORKER_NOT_FOUND');
  return successResponse(await workerJson(workers, updated));
}

export const WORKER_BETA_ROUTES: ApiRoute[] = [
  defineRoute({
    method: 'GET',
    path: `${ACCOUNT_WORKERS}/workers`,
    operationId: 'workers-workers-list',
    summary: "The account's scripts as Workers",
    tag: TAG,
    query: listQuery,
    resultInfo: 'page',
    result: anyResult,
    async handler(ctx) {
      const workers = requireWorkers(ctx);
      const q = validateQuery(listQuery, ctx.query);
      const scripts = await workers.registry.listScripts(ctx.account.id);
      const page = scripts.slice((q.page - 1) * q.per_page, q.page * q.per_page);
      const items = [];
      for (const script of page) items.push(await workerJson(workers, script));
      return successResponse(items, {
        resultInfo: {
          page: q.page,
          per_page: q.per_page,
          count: items.length,
          total_count: scripts.length,
          total_pages: Math.max(1, Math.ceil(scripts.length / q.per_page)),
        },
      });
    },
  }),
  defineRoute({
    method: 'GET',
    path: WORKER,
    operationId: 'workers-workers-get',
    summary: 'A script as a Worker (settings, subdomain, custom domains)',
    tag: TAG,
    result: anyResult,
    async handler(ctx) {
      const { workers, script } = await requireScript(ctx);
      return successResponse(await workerJson(workers, script));
    },
  }),
  defineRoute<z.infer<typeof workerBody>>({
    method: 'PUT',
    path: WORKER,
    operationId: 'workers-workers-update',
    summary: "Replace a Worker's settings (what is left out goes back to the default)",
    tag: TAG,
    body: { schema: workerBody, invalid: 'API_WORKER_INVALID', anyMediaType: true },
    result: anyResult,
    handler: (ctx) => changeWorker(ctx, true),
  }),
  defineRoute<z.infer<typeof workerBody>>({
    method: 'PATCH',
    path: WORKER,
    operationId: 'workers-workers-edit',
    summary: "Change the Worker's settings given",
    tag: TAG,
    body: { schema: workerBody, invalid: 'API_WORKER_INVALID', anyMediaType: true },
    result: anyResult,
    handler: (ctx) => changeWorker(ctx, false),
  }),
  defineRoute({
    method: 'DELETE',
    path: WORKER,
    operationId: 'workers-workers-delete',
    summary: 'Delete a Worker: the script with its versions, deployments, secrets and routes',
    tag: TAG,
    result: anyResult,
    async handler(ctx) {
      const workers = requireWorkers(ctx);
      if (!(await workers.registry.deleteScript(ctx.account.id, ctx.params.script_name ?? ''))) throw new ApiError('API_WORKER_NOT_FOUND');
      return successResponse(null);
    },
  }),
];
