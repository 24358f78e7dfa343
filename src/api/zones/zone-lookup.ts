/** The zone named by a route's `:zone_id`, if it is the caller's: else 7003 exactly as for an unknown zone. */
import type { ZoneRecord } from '../../db/control-store.ts';
import { objectNotFound } from '../errors.ts';
import type { RouteContext } from '../route.ts';

const OBJECT_ID = /^[0-9a-f]{32}$/;

export function isObjectId(id: string): boolean {
  return OBJECT_ID.test(id);
}

export async function requireZone(ctx: RouteContext<unknown>): Promise<ZoneRecord> {
  const id = ctx.params.zone_id ?? '';
  if (!isObjectId(id)) throw objectNotFound(ctx.path, 400);
  const zone = await ctx.deps.control.getZone(ctx.account.id, id);
  if (!zone) throw objectNotFound(ctx.path);
  return zone;
}
