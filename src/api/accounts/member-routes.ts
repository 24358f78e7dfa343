/**
 * An account's members and roles (`/accounts/<id>/members`, `/accounts/<id>/roles`, the SDK's
 * `accounts.members` and `accounts.roles`): an edgeport account has one member, its owner (the
 * user of `GET /user`), with one role, Super Administrator, which may do everything. They can be
 * read; inviting, changing or removing members is refused by name (not-provided.ts): access for
 * others is given with API tokens (`/accounts/<id>/tokens`).
 */
import { z } from 'zod';
import type { AccountRecord } from '../../db/control-store.ts';
import { successResponse } from '../envelope.ts';
import { objectNotFound } from '../errors.ts';
import { defineRoute, type ApiRoute, type RouteContext } from '../route.ts';
import { validateQuery } from '../validation.ts';
import { requireOwnAccount } from './account-routes.ts';
import { derivedId } from './user-id.ts';
import { OWNER_ROLE, PERMISSION_AREAS, toUserJson } from './user-routes.ts';

const TAG = 'Accounts';
const pageQuery = z.object({ page: z.coerce.number().int().min(1).default(1), per_page: z.coerce.number().int().min(5).max(50).default(20) }).loose();

function roleJson(account: AccountRecord): Record<string, unknown> {
  return {
    id: derivedId('role', account),
    name: OWNER_ROLE,
    description: 'Can edit any Cloudflare setting, make purchases, update billing, and manage memberships.',
    permissions: Object.fromEntries(PERMISSION_AREAS.map((area) => [area, { read: true, write: true }])),
  };
}

function memberJson(account: AccountRecord): Record<string, unknown> {
  const user = toUserJson(account);
  return {
    id: derivedId('membership', account),
    email: account.email,
    status: 'accepted',
    roles: [roleJson(account)],
    policies: [],
    user: { id: user.id, email: user.email, first_name: null, last_name: null, two_factor_authentication_enabled: false },
  };
}

/** A one-item page of `item` (or none past the first page). */
function onePage(ctx: RouteContext<unknown>, item: Record<string, unknown>): Response {
  const q = validateQuery(pageQuery, ctx.query);
  const items = q.page === 1 ? [item] : [];
  return successResponse(items, { resultInfo: { page: q.page, per_page: q.per_page, count: items.length, total_count: 1, total_pages: 1 } });
}

function requireId(ctx: RouteContext<unknown>, param: string, expected: string): void {
  const id = ctx.params[param] ?? '';
  if (id !== expected) throw objectNotFound(ctx.path, /^[0-9a-f]{32}$/.test(id) ? 404 : 400);
}

export const MEMBER_ROUTES: ApiRoute[] = [
  defineRoute({
    method: 'GET',
    path: '/accounts/:account_id/members',
    operationId: 'accounts-members-list',
    summary: "The account's members: its owner",
    tag: TAG,
    query: pageQuery,
    resultInfo: 'page',
    async handler(ctx) {
      return onePage(ctx, memberJson(requireOwnAccount(ctx)));
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/accounts/:account_id/members/:member_id',
    operationId: 'accounts-members-get',
    summary: 'One member (the owner)',
    tag: TAG,
    async handler(ctx) {
      const account = requireOwnAccount(ctx);
      requireId(ctx, 'member_id', derivedId('membership', account));
      return successResponse(memberJson(account));
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/accounts/:account_id/roles',
    operationId: 'accounts-roles-list',
    summary: "The account's roles: Super Administrator",
    tag: TAG,
    query: pageQuery,
    resultInfo: 'page',
    async handler(ctx) {
      return onePage(ctx, roleJson(requireOwnAccount(ctx)));
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/accounts/:account_id/roles/:role_id',
    operationId: 'accounts-roles-get',
    summary: 'One role (Super Administrator)',
    tag: TAG,
    async handler(ctx) {
      const account = requireOwnAccount(ctx);
      requireId(ctx, 'role_id', derivedId('role', account));
      return successResponse(roleJson(account));
    },
  }),
];
