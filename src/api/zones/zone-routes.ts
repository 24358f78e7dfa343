/**
 * Zones: `GET|POST /zones`, `GET|PATCH|DELETE /zones/:zone_id`. A zone belongs to one account;
 * another account's zone answers exactly like an unknown one. Zones are active at once (edgeport
 * serves them; there is no DNS delegation to wait for), and deleting one deletes its rulesets,
 * log jobs and ownership challenges. A public suffix is refused (zone-schema.ts), and so is a name
 * equal to, under or above another account's zone (the edge routes a host to its most specific
 * zone: such a zone would take the other account's traffic), with one message that names neither
 * that zone nor which of the three it is; and so is a name at or under the dev domain, whoever
 * asks (the platform's hosts, edge/platform-hosts.ts), and an IP-literal origin the account may
 * not reach (origin-policy.ts).
 */
import { z } from 'zod';
import { randomHexId } from '../../core/ids.ts';
import type { ZoneQuery, ZoneRecord } from '../../db/control-store.ts';
import { isPlatformHost } from '../../edge/platform-hosts.ts';
import { mayAccess } from '../authorize.ts';
import { successResponse } from '../envelope.ts';
import { ApiError, objectNotFound } from '../errors.ts';
import { defineRoute, type ApiRoute, type RouteContext } from '../route.ts';
import { validateQuery } from '../validation.ts';
import { requireZone } from './zone-lookup.ts';
import { createZoneBody, listZonesQuery, patchZoneBody, toZoneJson, zoneResult, type CreateZoneBody, type PatchZoneBody } from './zone-schema.ts';

const TAG = 'Zones';

export const ZONE_ROUTES: ApiRoute[] = [
  defineRoute({
    method: 'GET',
    path: '/zones',
    operationId: 'zones-list',
    summary: 'List your zones',
    tag: TAG,
    query: listZonesQuery,
    result: z.array(zoneResult),
    resultInfo: 'page',
    async handler(ctx) {
      const q = validateQuery(listZonesQuery, ctx.query);
      const { account } = ctx;
      const constants = [
        ...(q.status === undefined ? [] : [q.status === 'active']),
        ...(q['account.id'] === undefined ? [] : [q['account.id'] === account.id]),
        ...(q['account.name'] === undefined ? [] : [q['account.name'] === account.name]),
      ];
      const name = q.name === undefined ? undefined : parseNameFilter(q.name);
      const query: ZoneQuery = { order: 'name', direction: q.direction, offset: (q.page - 1) * q.per_page, limit: q.per_page };
      let none = false;
      if (q.match === 'all') {
        none = constants.includes(false);
        if (name) query.name = name;
      } else if (!constants.includes(true) && (constants.length > 0 || name)) {
        if (name) query.name = name;
        else none = true;
      }
      const listed = none ? { zones: [], total: 0 } : await ctx.deps.control.listZones(account.id, query);
      const { total } = listed;
      // An API token scoped to some zones sees those of the page (total_count stays the account's).
      const zones = listed.zones.filter((zone) => mayAccess(ctx, 'zones', 'read', { kind: 'zone', accountId: account.id, zoneId: zone.id }));
      return successResponse(
        zones.map((zone) => toZoneJson(zone, account)),
        {
          resultInfo: { page: q.page, per_page: q.per_page, count: zones.length, total_count: total, total_pages: Math.ceil(total / q.per_page) },
        },
      );
    },
  }),
  defineRoute<CreateZoneBody>({
    method: 'POST',
    path: '/zones',
    operationId: 'zones-create',
    summary: 'Create a zone',
    tag: TAG,
    body: { schema: createZoneBody, invalid: 'API_ZONE_INVALID' },
    result: zoneResult,
    async handler(ctx) {
      const { account, body } = ctx;
      if (body.account !== undefined && body.account.id !== account.id) {
        throw new ApiError('API_ZONE_INVALID', {
          message: `'${body.account.id}' is not a valid value for id because it is not one of your accounts`,
          pointer: '/account/id',
        });
      }
      refuseReservedName(ctx, body.name.toLowerCase());
      await refuseUnreachableOrigin(ctx, body.origin);
      const now = ctx.deps.clock.now();
      const zone: ZoneRecord = {
        id: randomHexId(),
        accountId: account.id,
        name: body.name.toLowerCase(),
        origin: body.origin ?? null,
        paused: false,
        created: now,
        modified: now,
      };
      const created = await ctx.deps.control.createZone(zone);
      if (created === 'created') return successResponse(toZoneJson(zone, account));
      if (created === 'exists' && (await holdsZoneNamed(ctx, zone.name))) {
        throw new ApiError('API_ZONE_EXISTS', { message: `${zone.name} already exists`, pointer: '/name' });
      }
      throw new ApiError('API_ZONE_NAME_UNAVAILABLE', {
        message: `${zone.name} is not available: it, a domain above it or a subdomain of it is a zone of another account; choose another name`,
        pointer: '/name',
      });
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/zones/:zone_id',
    operationId: 'zones-get',
    summary: 'Get a zone',
    tag: TAG,
    result: zoneResult,
    async handler(ctx) {
      return successResponse(toZoneJson(await requireZone(ctx), ctx.account));
    },
  }),
  defineRoute<PatchZoneBody>({
    method: 'PATCH',
    path: '/zones/:zone_id',
    operationId: 'zones-edit',
    summary: "Change a zone's origin (edgeport extension) or pause it",
    tag: TAG,
    body: { schema: patchZoneBody, invalid: 'API_ZONE_INVALID' },
    result: zoneResult,
    async handler(ctx) {
      const zone = await requireZone(ctx);
      const now = ctx.deps.clock.now();
      const { origin, paused } = ctx.body;
      await refuseUnreachableOrigin(ctx, origin);
      const updated = await ctx.deps.control.updateZone(ctx.account.id, zone.id, (current) => ({
        ...current,
        origin: origin === undefined ? current.origin : origin,
        paused: paused ?? current.paused,
        modified: now,
      }));
      if (!updated) throw objectNotFound(ctx.path);
      return successResponse(toZoneJson(updated, ctx.account));
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/zones/:zone_id',
    operationId: 'zones-delete',
    summary: 'Delete a zone with its rulesets and log jobs',
    tag: TAG,
    result: z.object({ id: z.string() }),
    async handler(ctx) {
      const zone = await requireZone(ctx);
      if (!(await ctx.deps.control.deleteZone(ctx.account.id, zone.id))) throw objectNotFound(ctx.path);
      return successResponse({ id: zone.id });
    },
  }),
];

/**
 * Whether the caller's own zone has `name` (the store's 'exists' says only that some account's
 * does): the real API's 1061 "already exists" tells the caller of its own zone, and another
 * account's answers as a name above or under that account's zone does.
 */
async function holdsZoneNamed(ctx: RouteContext<unknown>, name: string): Promise<boolean> {
  const { total } = await ctx.deps.control.listZones(ctx.account.id, {
    name: { op: 'equal', value: name },
    order: 'name',
    direction: 'asc',
    offset: 0,
    limit: 1,
  });
  return total > 0;
}

/**
 * 400 for a name at or under the dev domain or the public buckets' domain, whoever asks (the
 * operator too): the edge answers those hosts for the platform (platform-hosts.ts), so such a zone
 * would get nothing or, before the edge resolved them first, another account's visitors and their
 * log lines.
 */
function refuseReservedName(ctx: RouteContext<unknown>, name: string): void {
  const devDomain = ctx.deps.workers?.devDomain ?? null;
  if (isPlatformHost(name, devDomain)) {
    throw new ApiError('API_ZONE_RESERVED', {
      message: `${name} is not available: ${devDomain} and the names under it belong to this server, which serves each account's scripts at <script>.<account subdomain>.${devDomain}; choose another name`,
      pointer: '/name',
    });
  }
  const publicDomain = ctx.deps.publicBuckets?.publicDomain ?? null;
  if (isPlatformHost(name, publicDomain)) {
    throw new ApiError('API_ZONE_RESERVED', {
      message: `${name} is not available: ${publicDomain} and the names under it belong to this server, which serves public buckets at <public id>.${publicDomain}; choose another name`,
      pointer: '/name',
    });
  }
}

/** 400 for an origin the account's zones may not use whatever DNS says (an IP literal or `localhost` name), before anything is written. */
async function refuseUnreachableOrigin(ctx: RouteContext<unknown>, origin: string | null | undefined): Promise<void> {
  if (origin === undefined || origin === null) return;
  const problem = await ctx.deps.origins.originProblem(ctx.account.id, new URL(origin));
  if (problem !== null) {
    throw new ApiError('API_ZONE_INVALID', {
      message: `'${origin}' is not a valid value for origin because ${problem}; point it at a public address or host name`,
      pointer: '/origin',
    });
  }
}

function parseNameFilter(text: string): NonNullable<ZoneQuery['name']> {
  for (const op of ['contains', 'starts_with', 'ends_with'] as const) {
    if (text.startsWith(`${op}:`) && text.length > op.length + 1) return { op, value: text.slice(op.length + 1).toLowerCase() };
  }
  return { op: 'equal', value: text.toLowerCase() };
}
