/**
 * Whether an API token's policies let it read or edit one service on one target (its user, an
 * account, a zone of an account). A policy applies when one of its permission groups grants the
 * service at that access (edit includes read) and one of its resources covers the target:
 *
 * - user groups: `com.cloudflare.api.user.<user id>`;
 * - account groups: `com.cloudflare.api.account.<account id>` or `com.cloudflare.api.account.*`;
 * - zone groups: `com.cloudflare.api.account.zone.<zone id>`, `com.cloudflare.api.account.zone.*`,
 *   or an account resource whose value is `"*"` or an object naming such zone resources (the
 *   account's zones).
 *
 * A deny policy that applies wins over every allow; a denied read denies edit too.
 */
import type { ApiTokenPolicy, ApiTokenRecord } from '../../db/api-tokens/api-token-store.ts';
import { permissionGroup, type GroupScope, type TokenAccess, type TokenService } from './permission-groups.ts';

export const ACCOUNT_RESOURCE = 'com.cloudflare.api.account.';
export const ZONE_RESOURCE = 'com.cloudflare.api.account.zone.';
export const USER_RESOURCE = 'com.cloudflare.api.user.';

/**
 * What a request touches: the token's own user, an account, one zone of an account, or the
 * account's zones as a whole (`zones`: creating one needs the whole account; `some-zone`: listing
 * them needs any one).
 */
export type TokenTarget =
  | { kind: 'user'; userId: string }
  | { kind: 'account'; accountId: string }
  | { kind: 'zone'; accountId: string; zoneId: string }
  | { kind: 'zones'; accountId: string }
  | { kind: 'some-zone'; accountId: string };

/** Whether the token may `access` `service` on `target`. */
export function tokenAllows(token: ApiTokenRecord, service: TokenService, access: TokenAccess, target: TokenTarget): boolean {
  let allowed = false;
  for (const policy of token.policies) {
    const applies = policy.permissionGroups.some((ref) => {
      const group = permissionGroup(ref.id);
      if (!group || group.service !== service) return false;
      // allow: the group must grant the access asked for; deny: a denied read denies edit too.
      const grants = policy.effect === 'allow' ? group.access === 'edit' || access === 'read' : group.access === 'read' || access === 'edit';
      // A deny of some zones leaves the others listable: it stops a listing only when it covers every zone.
      const asked = policy.effect === 'deny' && target.kind === 'some-zone' ? { kind: 'zones' as const, accountId: target.accountId } : target;
      return grants && covers(policy, group.scope, asked);
    });
    if (!applies) continue;
    if (policy.effect === 'deny') return false;
    allowed = true;
  }
  return allowed;
}

function covers(policy: ApiTokenPolicy, scope: GroupScope, target: TokenTarget): boolean {
  return Object.entries(policy.resources).some(([key, value]) => {
    switch (scope) {
      case 'com.cloudflare.api.user':
        return target.kind === 'user' && key === USER_RESOURCE + target.userId;
      case 'com.cloudflare.api.account':
        return target.kind === 'account' && (key === `${ACCOUNT_RESOURCE}*` || key === ACCOUNT_RESOURCE + target.accountId);
      case 'com.cloudflare.api.account.zone':
        return coversZone(key, value, target);
    }
  });
}

function coversZone(key: string, value: string | Record<string, string>, target: TokenTarget): boolean {
  if (target.kind !== 'zone' && target.kind !== 'zones' && target.kind !== 'some-zone') return false;
  if (key.startsWith(ZONE_RESOURCE)) return zoneKeyCovers(key, target);
  if (key !== `${ACCOUNT_RESOURCE}*` && key !== ACCOUNT_RESOURCE + target.accountId) return false;
  // An account resource: "*" is all its zones; an object names some of them.
  if (typeof value === 'string') return true;
  return Object.keys(value).some((zoneKey) => zoneKeyCovers(zoneKey, target));
}

function zoneKeyCovers(key: string, target: { kind: 'zone' | 'zones' | 'some-zone'; zoneId?: string }): boolean {
  const zone = key.slice(ZONE_RESOURCE.length);
  if (target.kind === 'some-zone') return true;
  if (target.kind === 'zones') return zone === '*';
  return zone === '*' || zone === target.zoneId;
}

/** The zones a token may read `service` of, among `zoneIds` (a zone list filtered for a zone-scoped token). */
export function readableZones(token: ApiTokenRecord, service: TokenService, accountId: string, zoneIds: readonly string[]): Set<string> {
  return new Set(zoneIds.filter((zoneId) => tokenAllows(token, service, 'read', { kind: 'zone', accountId, zoneId })));
}
