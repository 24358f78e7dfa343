/**
 * The one permission seam of the management API: "may this caller <read|edit> <service> on
 * <target>?". The global API key (X-Auth-Email + X-Auth-Key) and a dashboard session are the
 * account's owner and may do anything on the account's own things (routes still answer another
 * account's things exactly like missing ones); an API token (`Authorization: Bearer`) may do what
 * its policies grant (tokens/token-policy.ts).
 *
 * Every route is checked before its handler runs: by its `permission` field, else by the table
 * below (the path's first segments name the service; GET reads, other methods edit). Routes of a
 * new service add a row here, or declare `permission`. Handlers that need a finer check (a list
 * filtered to the zones a token may read, a target named in the body) call `mayAccess` or
 * `requirePermission` themselves, e.g. a scripts route:
 *
 *   requirePermission(ctx, 'scripts', 'edit', { kind: 'account', accountId: ctx.params.account_id! });
 *
 * A token refused gets 403: code 10000 "Authentication error" on the account's R2 and Workers
 * routes, 9109 "Unauthorized to access requested resource" elsewhere, as the platform answers.
 */
import { ApiError } from './errors.ts';
import type { RouteContext } from './route.ts';
import type { TokenAccess, TokenService } from './tokens/permission-groups.ts';
import { tokenAllows, type TokenTarget } from './tokens/token-policy.ts';
import { userIdOf } from './accounts/user-id.ts';

export type { TokenAccess, TokenService } from './tokens/permission-groups.ts';
export type { TokenTarget } from './tokens/token-policy.ts';

/** What a route needs from a token; `target` says where the route's own target comes from. */
export interface RoutePermission {
  service: TokenService;
  /** Default: read for GET, edit for the other methods. */
  access?: TokenAccess;
  /**
   * `zone`: the path's `:zone_id`; `account`: the path's `:account_id` (else the caller's account);
   * `user`: the token's user; `zones` / `some-zone`: all / any of the caller's account's zones.
   */
  target: 'zone' | 'account' | 'user' | 'zones' | 'some-zone';
}

/** Path prefixes (below /client/v4, longest first) and what their routes need. */
const PATH_PERMISSIONS: ReadonlyArray<[prefix: RegExp, permission: RoutePermission]> = [
  [/^\/user\/tokens(\/|$)/, { service: 'tokens', target: 'user' }],
  [/^\/user$/, { service: 'user', target: 'user' }],
  [/^\/memberships(\/[^/]+)?$/, { service: 'account', target: 'account' }],
  [/^\/accounts\/[^/]+\/(r2|store|event_notifications)(\/|$)/, { service: 'store', target: 'account' }],
  [/^\/accounts\/[^/]+\/workers(\/|$)/, { service: 'scripts', target: 'account' }],
  [/^\/accounts\/[^/]+\/tokens(\/|$)/, { service: 'account_tokens', target: 'account' }],
  [/^\/accounts(\/|$)/, { service: 'account', target: 'account' }],
  [/^\/zones\/[^/]+\/(rulesets|logshipping|logpush)(\/|$)/, { service: 'logs', target: 'zone' }],
  [/^\/zones\/[^/]+\/workers(\/|$)/, { service: 'workers_routes', target: 'zone' }],
  [/^\/zones\/[^/]+/, { service: 'zones', target: 'zone' }],
];

/** What a route at `path` (its pattern, e.g. `/zones/:zone_id`) needs from a token; null: no row (tokens are refused). */
export function routePermission(method: string, path: string): RoutePermission | null {
  if (path === '/zones') return method === 'GET' ? { service: 'zones', target: 'some-zone' } : { service: 'zones', target: 'zones' };
  return PATH_PERMISSIONS.find(([prefix]) => prefix.test(path))?.[1] ?? null;
}

/** Whether the caller may `access` `service` on `target` (always, for the global key and sessions). */
export function mayAccess(ctx: Pick<RouteContext<unknown>, 'token'>, service: TokenService, access: TokenAccess, target: TokenTarget): boolean {
  return ctx.token === undefined || tokenAllows(ctx.token, service, access, target);
}

/** Throws the platform's 403 unless the caller may `access` `service` on `target`. */
export function requirePermission(ctx: Pick<RouteContext<unknown>, 'token'>, service: TokenService, access: TokenAccess, target: TokenTarget): void {
  if (!mayAccess(ctx, service, access, target)) throw permissionDenied(service);
}

export function permissionDenied(service: TokenService | null): ApiError {
  return new ApiError(service === 'store' || service === 'scripts' ? 'API_TOKEN_FORBIDDEN' : 'API_TOKEN_UNAUTHORIZED');
}

/**
 * The pipeline's check of a route for a token (nothing for the global key or a session): the
 * route's declared permission, else the table's; a route the table does not know is refused.
 */
export function checkRoutePermission(
  ctx: Pick<RouteContext<unknown>, 'token' | 'account' | 'params' | 'request'>,
  declared: RoutePermission | 'none' | undefined,
  path: string,
): void {
  if (ctx.token === undefined || declared === 'none') return;
  const permission = declared ?? routePermission(ctx.request.method, path);
  if (!permission) throw permissionDenied(null);
  const access = permission.access ?? (ctx.request.method === 'GET' || ctx.request.method === 'HEAD' ? 'read' : 'edit');
  requirePermission(ctx, permission.service, access, targetOf(ctx, permission.target));
}

function targetOf(ctx: Pick<RouteContext<unknown>, 'account' | 'params'>, target: RoutePermission['target']): TokenTarget {
  const accountId = ctx.account.id;
  switch (target) {
    case 'user':
      return { kind: 'user', userId: userIdOf(ctx.account) };
    case 'account':
      return { kind: 'account', accountId: ctx.params.account_id ?? accountId };
    case 'zone':
      return { kind: 'zone', accountId, zoneId: ctx.params.zone_id ?? '' };
    case 'zones':
      return { kind: 'zones', accountId };
    case 'some-zone':
      return { kind: 'some-zone', accountId };
  }
}
