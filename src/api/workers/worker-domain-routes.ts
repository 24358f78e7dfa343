/**
 * An account's Workers custom domains (`/accounts/<id>/workers/domains`, the SDK's
 * `workers.domains`): list them (by hostname, service, zone), attach a hostname of one of the
 * account's zones to a script (`PUT`: the hostname's whole traffic, as the route
 * `<hostname>/*`; attaching it again moves it to the script named), read and detach one. The
 * same domains `wrangler deploy` attaches with `custom_domain` routes.
 */
import { z } from 'zod';
import { successResponse } from '../envelope.ts';
import { ApiError } from '../errors.ts';
import { defineRoute, type ApiRoute, type RouteContext } from '../route.ts';
import { validateQuery } from '../validation.ts';
import { putRoute, routeNotFound, toDomainJson, zoneOfPattern } from './worker-route-routes.ts';
import { ACCOUNT_WORKERS, requireWorkers, type WorkersDeps } from './workers-common.ts';

const TAG = 'Workers domains';
const DOMAINS = `${ACCOUNT_WORKERS}/domains`;
const anyResult = z.unknown();

const attachBody = z.looseObject({
  hostname: z
    .string()
    .min(1)
    .max(253)
    .transform((host) => host.toLowerCase()),
  service: z.string().min(1).max(63),
  environment: z.string().max(64).optional(),
  zone_id: z.string().max(64).optional(),
  zone_name: z.string().max(253).optional(),
});
const listQuery = z.object({
  hostname: z.string().max(253).optional(),
  service: z.string().max(63).optional(),
  environment: z.string().max(64).optional(),
  zone_id: z.string().max(64).optional(),
  zone_name: z.string().max(253).optional(),
});

/** The account's custom domains with their zones (a zone deleted since: left out, as its domain no longer serves). */
async function domainsOf(ctx: RouteContext<unknown>, workers: WorkersDeps): Promise<Array<Record<string, unknown>>> {
  const domains = [];
  for (const route of await workers.registry.listCustomDomains(ctx.account.id)) {
    const zone = await ctx.deps.control.getZone(ctx.account.id, route.zoneId);
    if (zone) domains.push(toDomainJson(route, zone));
  }
  return domains;
}

export const WORKER_DOMAIN_ROUTES: ApiRoute[] = [
  defineRoute({
    method: 'GET',
    path: DOMAINS,
    operationId: 'workers-domains-list',
    summary: "The account's custom domains (filters: hostname, service, environment, zone_id, zone_name)",
    tag: TAG,
    query: listQuery,
    result: anyResult,
    async handler(ctx) {
      const workers = requireWorkers(ctx);
      const q = validateQuery(listQuery, ctx.query);
      const domains = (await domainsOf(ctx, workers)).filter(
        (domain) =>
          (q.hostname === undefined || domain.hostname === q.hostname.toLowerCase()) &&
          (q.service === undefined || domain.service === q.service) &&
          (q.environment === undefined || q.environment === 'production') &&
          (q.zone_id === undefined || domain.zone_id === q.zone_id) &&
          (q.zone_name === undefined || domain.zone_name === q.zone_name),
      );
      return successResponse(domains);
    },
  }),
  defineRoute<z.infer<typeof attachBody>>({
    method: 'PUT',
    path: DOMAINS,
    operationId: 'workers-domains-attach',
    summary: 'Attach a hostname of one of your zones to a script (again: move it to that script)',
    tag: TAG,
    body: { schema: attachBody, invalid: 'API_WORKER_ROUTE_INVALID' },
    result: anyResult,
    async handler(ctx) {
      const workers = requireWorkers(ctx);
      const { hostname, service } = ctx.body;
      if (ctx.body.environment !== undefined && ctx.body.environment !== 'production') {
        throw new ApiError('API_WORKER_INVALID', {
          message: `environment ${JSON.stringify(ctx.body.environment)} is not a script environment here: scripts have one, production`,
        });
      }
      if (!(await workers.registry.getScript(ctx.account.id, service))) throw new ApiError('API_WORKER_NOT_FOUND');
      const pattern = `${hostname}/*`;
      const given = ctx.body.zone_id === undefined ? undefined : ((await ctx.deps.control.getZone(ctx.account.id, ctx.body.zone_id)) ?? undefined);
      const zone = await zoneOfPattern(ctx, pattern, given);
      if (ctx.body.zone_name !== undefined && ctx.body.zone_name !== zone.name) {
        throw new ApiError('API_WORKER_ROUTE_ZONE', {
          message: `Could not find a zone of your account named ${JSON.stringify(ctx.body.zone_name)} holding ${hostname}`,
        });
      }
      const existing = (await workers.registry.listCustomDomains(ctx.account.id)).find((route) => route.pattern === pattern);
      const route = await putRoute(workers, {
        ...(existing ? { id: existing.id } : {}),
        zoneId: zone.id,
        accountId: ctx.account.id,
        pattern,
        script: service,
        customDomain: true,
      });
      return successResponse(toDomainJson(route!, zone));
    },
  }),
  defineRoute({
    method: 'GET',
    path: `${DOMAINS}/:domain_id`,
    operationId: 'workers-domains-get',
    summary: 'One custom domain',
    tag: TAG,
    result: anyResult,
    async handler(ctx) {
      const workers = requireWorkers(ctx);
      const id = ctx.params.domain_id ?? '';
      const domain = (await domainsOf(ctx, workers)).find((candidate) => candidate.id === id);
      if (!domain) throw routeNotFound(id);
      return successResponse(domain);
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: `${DOMAINS}/:domain_id`,
    operationId: 'workers-domains-detach',
    summary: 'Detach a custom domain: the hostname no longer serves the script',
    tag: TAG,
    result: anyResult,
    async handler(ctx) {
      const workers = requireWorkers(ctx);
      const id = ctx.params.domain_id ?? '';
      const route = (await workers.registry.listCustomDomains(ctx.account.id)).find((candidate) => candidate.id === id);
      if (!route || !(await workers.registry.deleteRoute(route.zoneId, route.id))) throw routeNotFound(id);
      return successResponse(null);
    },
  }),
];
