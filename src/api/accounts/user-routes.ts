/**
 * Who the caller is, as the platform's identity routes answer for a global-API-key user (what
 * wrangler asks before account-scoped commands): `GET /user` (the user) and `GET /memberships` (the
 * user's one membership: its account, accepted, with every permission; `GET /memberships/<id>`
 * reads it). `GET /user/tokens/verify`
 * is with the API token routes (tokens/token-routes.ts).
 *
 * By design: an edgeport account has one member, its owner, so the user and the membership are
 * the account seen from two sides. Their ids are derived from the account's id (stable, 32 hex
 * characters like the real ones, and distinct from it: clients must not mix them up).
 */
import { z } from 'zod';
import type { AccountRecord } from '../../db/control-store.ts';
import { successResponse } from '../envelope.ts';
import { ApiError, objectNotFound } from '../errors.ts';
import { defineRoute, type ApiRoute } from '../route.ts';
import { validateQuery } from '../validation.ts';
import { accountResult, toAccountJson } from './account-routes.ts';
import { derivedId } from './user-id.ts';

const TAG = 'User';

/** The permission areas of a membership (the SDK's Membership.Permissions); the owner may read and write all. */
export const PERMISSION_AREAS = [
  'analytics',
  'billing',
  'cache_purge',
  'dns',
  'dns_records',
  'lb',
  'logs',
  'organization',
  'ssl',
  'waf',
  'zone_settings',
  'zones',
] as const;
export const OWNER_ROLE = 'Super Administrator - All Privileges';

const grant = z.object({ read: z.boolean(), write: z.boolean() });
export const membershipResult = z.object({
  id: z.string(),
  account: accountResult,
  status: z.literal('accepted'),
  api_access_enabled: z.null(),
  permissions: z.object(Object.fromEntries(PERMISSION_AREAS.map((area) => [area, grant])) as Record<(typeof PERMISSION_AREAS)[number], typeof grant>),
  roles: z.array(z.string()),
});

const userResult = z.object({
  id: z.string(),
  email: z.string(),
  first_name: z.null(),
  last_name: z.null(),
  telephone: z.null(),
  country: z.null(),
  zipcode: z.null(),
  two_factor_authentication_enabled: z.boolean(),
  two_factor_authentication_locked: z.boolean(),
  has_pro_zones: z.boolean(),
  has_business_zones: z.boolean(),
  has_enterprise_zones: z.boolean(),
  suspended: z.boolean(),
  betas: z.array(z.string()),
  organizations: z.array(z.never()),
  created_on: z.string(),
});

const membershipBody = z.strictObject({ status: z.enum(['accepted', 'rejected']) });

const listMembershipsQuery = z.object({
  'account.name': z.string().optional(),
  status: z.enum(['accepted', 'pending', 'rejected']).optional(),
  page: z.coerce.number().int().min(1).default(1),
  per_page: z.coerce.number().int().min(5).max(50).default(20),
  order: z.enum(['id', 'account.name', 'status']).optional(),
  direction: z.enum(['asc', 'desc']).default('asc'),
});

export function toMembershipJson(account: AccountRecord): z.infer<typeof membershipResult> {
  return {
    id: derivedId('membership', account),
    account: toAccountJson(account),
    status: 'accepted',
    api_access_enabled: null,
    permissions: Object.fromEntries(PERMISSION_AREAS.map((area) => [area, { read: true, write: true }])) as z.infer<typeof membershipResult>['permissions'],
    roles: [OWNER_ROLE],
  };
}

export function toUserJson(account: AccountRecord): z.infer<typeof userResult> {
  return {
    id: derivedId('user', account),
    email: account.email,
    first_name: null,
    last_name: null,
    telephone: null,
    country: null,
    zipcode: null,
    two_factor_authentication_enabled: false,
    two_factor_authentication_locked: false,
    has_pro_zones: false,
    has_business_zones: false,
    has_enterprise_zones: false,
    suspended: false,
    betas: [],
    organizations: [],
    created_on: new Date(account.created).toISOString(),
  };
}

export const USER_ROUTES: ApiRoute[] = [
  defineRoute({
    method: 'GET',
    path: '/user',
    operationId: 'user-get',
    summary: 'Get the user the credentials belong to',
    tag: TAG,
    result: userResult,
    async handler(ctx) {
      return successResponse(toUserJson(ctx.account));
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/memberships',
    operationId: 'memberships-list',
    summary: "List the user's account memberships (one: its own account)",
    tag: TAG,
    query: listMembershipsQuery,
    result: z.array(membershipResult),
    resultInfo: 'page',
    async handler(ctx) {
      const q = validateQuery(listMembershipsQuery, ctx.query);
      const name = q['account.name'];
      const matches =
        (name === undefined || ctx.account.name.toLowerCase().includes(name.toLowerCase())) && (q.status === undefined || q.status === 'accepted');
      const all = matches ? [ctx.account] : [];
      const page = all.slice((q.page - 1) * q.per_page, q.page * q.per_page);
      return successResponse(page.map(toMembershipJson), {
        resultInfo: { page: q.page, per_page: q.per_page, count: page.length, total_count: all.length, total_pages: Math.ceil(all.length / q.per_page) },
      });
    },
  }),
  defineRoute<z.infer<typeof membershipBody>>({
    method: 'PUT',
    path: '/memberships/:membership_id',
    operationId: 'memberships-update',
    summary: "Accept the membership (it is: the owner's is always accepted)",
    tag: TAG,
    body: { schema: membershipBody, invalid: 'API_TOKEN_INVALID_BODY' },
    result: membershipResult,
    async handler(ctx) {
      const id = ctx.params.membership_id ?? '';
      if (id !== derivedId('membership', ctx.account)) throw objectNotFound(ctx.path, /^[0-9a-f]{32}$/.test(id) ? 404 : 400);
      if (ctx.body.status === 'rejected') {
        throw new ApiError('API_TOKEN_INVALID_BODY', {
          message: "'rejected' is not a valid value for status because this is the membership of the account's owner, which cannot be rejected",
          pointer: '/status',
        });
      }
      return successResponse(toMembershipJson(ctx.account));
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/memberships/:membership_id',
    operationId: 'memberships-get',
    summary: "One of the user's memberships (its own account's)",
    tag: TAG,
    result: membershipResult,
    async handler(ctx) {
      const id = ctx.params.membership_id ?? '';
      if (id !== derivedId('membership', ctx.account)) throw objectNotFound(ctx.path, /^[0-9a-f]{32}$/.test(id) ? 404 : 400);
      return successResponse(toMembershipJson(ctx.account));
    },
  }),
];
