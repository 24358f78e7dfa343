/**
 * Where deployed scripts serve: routes per zone (`/zones/:zone_id/workers/routes`), a script's
 * routes as wrangler sets them (`PUT .../scripts/:script_name/routes`), and custom domains (a
 * hostname on one of the account's zones becomes the route `<hostname>/*`). A route's host must
 * be one of the caller's zones or under one, and never match a host of the dev domain (those are
 * the platform's, platform-hosts.ts); a pattern already held by a route is refused whoever holds it
 * (10020), and a zone holds at most `[workers] max_routes_per_zone` routes.
 */
import { z } from 'zod';
import type { RouteRecord } from '../../db/scripts/script-records.ts';
import type { ZoneRecord } from '../../db/control-store.ts';
import { findZoneForHost } from '../../edge/zone-lookup.ts';
import { routeReachesPlatform } from '../../edge/platform-hosts.ts';
import { parseRoutePattern } from '../../edge/script-routes.ts';
import { successResponse } from '../envelope.ts';
import { requirePermission } from '../authorize.ts';
import { ApiError } from '../errors.ts';
import { defineRoute, type ApiRoute, type RouteContext } from '../route.ts';
import { requireZone } from '../zones/zone-lookup.ts';
import { requireScript, SCRIPT, type WorkersDeps } from './workers-common.ts';

const TAG = 'Workers routes';
const ZONE_ROUTES = '/zones/:zone_id/workers/routes';
const anyResult = z.unknown();

const routeBody = z.strictObject({ pattern: z.string().min(1).max(1024), script: z.string().max(63).optional() });
const scriptRoutesBody = z
  .array(
    z.looseObject({
      pattern: z.string().min(1).max(1024),
      zone_id: z.string().max(64).optional(),
      zone_name: z.string().max(253).optional(),
      custom_domain: z.boolean().optional(),
    }),
  )
  .max(1000);
const domainsBody = z.looseObject({
  origins: z
    .array(z.looseObject({ hostname: z.string().min(1).max(253), zone_id: z.string().max(64).optional(), zone_name: z.string().max(253).optional() }))
    .max(100),
});
const changesetBody = z
  .array(z.looseObject({ hostname: z.string().min(1).max(253), zone_id: z.string().max(64).optional(), zone_name: z.string().max(253).optional() }))
  .max(100);

function toRouteJson(route: RouteRecord): Record<string, unknown> {
  return { id: route.id, pattern: route.pattern, script: route.script ?? '' };
}

/** The pattern's host, checked: a valid pattern, on `zone` when given, else on one of the account's zones. */
export async function zoneOfPattern(ctx: RouteContext<unknown>, pattern: string, zone?: ZoneRecord): Promise<ZoneRecord> {
  let parsed: ReturnType<typeof parseRoutePattern>;
  try {
    parsed = parseRoutePattern(pattern);
  } catch (error) {
    throw new ApiError('API_WORKER_ROUTE_INVALID', { message: `Invalid route pattern '${pattern.slice(0, 256)}': ${(error as Error).message}` });
  }
  const { host } = parsed;
  // Before any zone is looked at: a zone at or above the dev domain (made before such zones were refused) does not make its hosts routable.
  const devDomain = ctx.deps.workers?.devDomain ?? null;
  if (routeReachesPlatform(parsed, devDomain)) {
    throw new ApiError('API_WORKER_ROUTE_RESERVED', {
      message: `Invalid route pattern '${pattern.slice(0, 256)}': it would match hosts of ${devDomain}, which belong to this server (it serves each account's scripts at <script>.<account subdomain>.${devDomain}); route hosts of your zones outside it`,
    });
  }
  const publicDomain = ctx.deps.publicBuckets?.publicDomain ?? null;
  if (routeReachesPlatform(parsed, publicDomain)) {
    throw new ApiError('API_WORKER_ROUTE_RESERVED', {
      message: `Invalid route pattern '${pattern.slice(0, 256)}': it would match hosts of ${publicDomain}, which belong to this server (it serves public buckets at <public id>.${publicDomain}); route hosts of your zones outside it`,
    });
  }
  const found = zone ?? (await findZoneForHost(ctx.deps.control, host));
  const onZone = found !== null && found.accountId === ctx.account.id && (host === found.name || host.endsWith(`.${found.name}`));
  if (!onZone) {
    throw new ApiError('API_WORKER_ROUTE_ZONE', {
      message: `Could not find a zone of your account for route pattern '${pattern.slice(0, 256)}': its host must be ${zone ? `${zone.name} or under it` : 'one of your zones or under one'}`,
    });
  }
  // Every caller writes a route on the zone: an API token needs Workers Routes Write there, even on a script's path.
  requirePermission(ctx, 'workers_routes', 'edit', { kind: 'zone', accountId: ctx.account.id, zoneId: found.id });
  return found;
}

export async function putRoute(workers: WorkersDeps, route: Omit<RouteRecord, 'id'> & { id?: string }): Promise<RouteRecord | null> {
  const outcome = await workers.registry.putRoute(route, workers.maxRoutesPerZone);
  if (outcome === null) return null;
  switch (outcome.kind) {
    case 'ok':
      return outcome.route;
    case 'duplicate':
      throw new ApiError('API_WORKER_ROUTE_DUPLICATE', {
        message: `A route with the pattern '${route.pattern}' already exists: delete it, or change that route instead`,
      });
    case 'limit':
      throw new ApiError('API_WORKER_ROUTE_LIMIT', {
        message: `The zone has reached its limit of ${outcome.limit} routes: delete one, or ask the operator to raise [workers] max_routes_per_zone`,
      });
    case 'no-script':
      throw new ApiError('API_WORKER_NOT_FOUND');
  }
}

export function routeNotFound(id: string): ApiError {
  return new ApiError('API_WORKER_ROUTE_NOT_FOUND', { message: `Route not found: the zone has no route ${id.slice(0, 64)}` });
}

/**
 * Makes the script's routes exactly `patterns` (each checked first: a refused one changes nothing).
 * Its custom domains stay unless the list names them (as the platform keeps routes and custom
 * domains apart: wrangler's deploy puts the routes, then attaches the domains).
 */
async function replaceScriptRoutes(
  ctx: RouteContext<unknown>,
  workers: WorkersDeps,
  script: string,
  patterns: ReadonlyArray<{ pattern: string; zone?: ZoneRecord; customDomain?: boolean }>,
): Promise<RouteRecord[]> {
  const zones = [];
  for (const { pattern, zone } of patterns) zones.push(await zoneOfPattern(ctx, pattern, zone));
  const current = await workers.registry.listScriptRoutes(ctx.account.id, script);
  const wanted = new Set(patterns.map(({ pattern }) => pattern));
  const result: RouteRecord[] = [];
  for (const [index, { pattern, customDomain }] of patterns.entries()) {
    const existing = current.find((route) => route.pattern === pattern);
    result.push(
      existing ?? (await putRoute(workers, { zoneId: zones[index]!.id, accountId: ctx.account.id, pattern, script, customDomain: customDomain === true }))!,
    );
  }
  for (const route of current) if (!wanted.has(route.pattern) && !route.customDomain) await workers.registry.deleteRoute(route.zoneId, route.id);
  return result;
}

export const WORKER_ROUTE_ROUTES: ApiRoute[] = [
  defineRoute({
    method: 'GET',
    path: ZONE_ROUTES,
    operationId: 'workers-routes-list',
    summary: "The zone's script routes",
    tag: TAG,
    result: anyResult,
    async handler(ctx) {
      const zone = await requireZone(ctx);
      const workers = ctx.deps.workers;
      return successResponse(workers ? (await workers.registry.listZoneRoutes(zone.id)).map(toRouteJson) : []);
    },
  }),
  defineRoute<z.infer<typeof routeBody>>({
    method: 'POST',
    path: ZONE_ROUTES,
    operationId: 'workers-routes-create',
    summary: 'Route a pattern of the zone to a script (no script: scripts off for it)',
    tag: TAG,
    body: { schema: routeBody, invalid: 'API_WORKER_ROUTE_INVALID' },
    result: anyResult,
    async handler(ctx) {
      const zone = await requireZone(ctx);
      const workers = requireZoneWorkers(ctx);
      await zoneOfPattern(ctx, ctx.body.pattern, zone);
      const route = await putRoute(workers, { zoneId: zone.id, accountId: ctx.account.id, pattern: ctx.body.pattern, script: ctx.body.script || null });
      return successResponse(toRouteJson(route!));
    },
  }),
  defineRoute({
    method: 'GET',
    path: `${ZONE_ROUTES}/:route_id`,
    operationId: 'workers-routes-get',
    summary: 'One route',
    tag: TAG,
    result: anyResult,
    async handler(ctx) {
      const zone = await requireZone(ctx);
      const route = await requireZoneWorkers(ctx).registry.getRoute(zone.id, ctx.params.route_id ?? '');
      if (!route) throw routeNotFound(ctx.params.route_id ?? '');
      return successResponse(toRouteJson(route));
    },
  }),
  defineRoute<z.infer<typeof routeBody>>({
    method: 'PUT',
    path: `${ZONE_ROUTES}/:route_id`,
    operationId: 'workers-routes-update',
    summary: "Change a route's pattern or script",
    tag: TAG,
    body: { schema: routeBody, invalid: 'API_WORKER_ROUTE_INVALID' },
    result: anyResult,
    async handler(ctx) {
      const zone = await requireZone(ctx);
      const workers = requireZoneWorkers(ctx);
      await zoneOfPattern(ctx, ctx.body.pattern, zone);
      const id = ctx.params.route_id ?? '';
      const route = await putRoute(workers, { id, zoneId: zone.id, accountId: ctx.account.id, pattern: ctx.body.pattern, script: ctx.body.script || null });
      if (!route) throw routeNotFound(id);
      return successResponse(toRouteJson(route));
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: `${ZONE_ROUTES}/:route_id`,
    operationId: 'workers-routes-delete',
    summary: 'Delete a route',
    tag: TAG,
    result: anyResult,
    async handler(ctx) {
      const zone = await requireZone(ctx);
      const id = ctx.params.route_id ?? '';
      if (!(await requireZoneWorkers(ctx).registry.deleteRoute(zone.id, id))) throw routeNotFound(id);
      return successResponse({ id });
    },
  }),
  defineRoute({
    method: 'GET',
    path: `${SCRIPT}/routes`,
    operationId: 'workers-script-routes-list',
    summary: "The script's routes",
    tag: TAG,
    result: anyResult,
    async handler(ctx) {
      const { workers, script } = await requireScript(ctx);
      return successResponse((await workers.registry.listScriptRoutes(ctx.account.id, script.name)).map(toRouteJson));
    },
  }),
  defineRoute<z.infer<typeof scriptRoutesBody>>({
    method: 'PUT',
    path: `${SCRIPT}/routes`,
    operationId: 'workers-script-routes-put',
    summary: "Make the script's routes exactly these (wrangler's deploy)",
    tag: TAG,
    body: { schema: scriptRoutesBody, invalid: 'API_WORKER_ROUTE_INVALID', anyMediaType: true },
    result: anyResult,
    async handler(ctx) {
      const { workers, script } = await requireScript(ctx);
      const patterns = ctx.body.map((route) => (route.custom_domain ? { pattern: `${route.pattern}/*`, customDomain: true } : { pattern: route.pattern }));
      return successResponse((await replaceScriptRoutes(ctx, workers, script.name, patterns)).map(toRouteJson));
    },
  }),
  defineRoute<z.infer<typeof changesetBody>>({
    method: 'POST',
    path: `${SCRIPT}/domains/changeset`,
    operationId: 'workers-domains-changeset',
    summary: 'What attaching these custom domains would change',
    tag: TAG,
    body: { schema: changesetBody, invalid: 'API_WORKER_ROUTE_INVALID', anyMediaType: true },
    result: anyResult,
    async handler(ctx) {
      const { workers, script } = await requireScript(ctx);
      const current = new Set((await workers.registry.listScriptRoutes(ctx.account.id, script.name)).map((route) => route.pattern));
      const added = [];
      for (const domain of ctx.body) {
        const zone = await zoneOfPattern(ctx, `${domain.hostname}/*`);
        if (!current.has(`${domain.hostname}/*`)) added.push({ hostname: domain.hostname, zone_id: zone.id, zone_name: zone.name });
      }
      return successResponse({ added, removed: [], updated: [], conflicting: [], dnsRecordConflicts: [] });
    },
  }),
  defineRoute<z.infer<typeof domainsBody>>({
    method: 'PUT',
    path: `${SCRIPT}/domains/records`,
    operationId: 'workers-domains-records',
    summary: 'Attach custom domains: each hostname serves the script (route <hostname>/*)',
    tag: TAG,
    body: { schema: domainsBody, invalid: 'API_WORKER_ROUTE_INVALID', anyMediaType: true },
    result: anyResult,
    async handler(ctx) {
      const { workers, script } = await requireScript(ctx);
      const routes = await workers.registry.listScriptRoutes(ctx.account.id, script.name);
      const attached = [];
      for (const origin of ctx.body.origins) {
        const pattern = `${origin.hostname}/*`;
        const zone = await zoneOfPattern(ctx, pattern);
        const existing = routes.find((route) => route.pattern === pattern);
        const route = existing ?? (await putRoute(workers, { zoneId: zone.id, accountId: ctx.account.id, pattern, script: script.name, customDomain: true }));
        attached.push(toDomainJson(route!, zone));
      }
      return successResponse(attached);
    },
  }),
];

/** A custom domain as the Workers domains API answers it (its id is its route's). */
export function toDomainJson(route: RouteRecord, zone: Pick<ZoneRecord, 'id' | 'name'>): Record<string, unknown> {
  return {
    id: route.id,
    hostname: route.pattern.replace(/\/\*$/, ''),
    zone_id: zone.id,
    zone_name: zone.name,
    service: route.script ?? '',
    environment: 'production',
    cert_id: '',
  };
}

function requireZoneWorkers(ctx: RouteContext<unknown>): WorkersDeps {
  const workers = ctx.deps.workers;
  if (!workers) throw new ApiError('API_WORKER_INVALID', { message: 'Scripts cannot be deployed on this server.' });
  return workers;
}
