/**
 * Accounts: `GET /accounts` lists the caller's own account (an edgeport account has one member);
 * `GET /accounts/:account_id` reads it. Accounts are made by the first start and by
 * `edgeport accounts create <email>`, not through the API.
 */
import { z } from 'zod';
import type { AccountRecord } from '../../db/control-store.ts';
import { successResponse } from '../envelope.ts';
import { objectNotFound } from '../errors.ts';
import { defineRoute, type ApiRoute, type RouteContext } from '../route.ts';
import { validateQuery } from '../validation.ts';

const TAG = 'Accounts';

export const accountResult = z.object({
  id: z.string(),
  name: z.string(),
  type: z.literal('standard'),
  settings: z.object({ enforce_twofactor: z.boolean(), use_account_custom_ns_by_default: z.boolean() }),
  created_on: z.string(),
});

const listAccountsQuery = z.object({
  name: z.string().optional(),
  page: z.coerce.number().int().min(1).default(1),
  per_page: z.coerce.number().int().min(5).max(50).default(20),
  direction: z.enum(['asc', 'desc']).default('asc'),
});

export function toAccountJson(account: AccountRecord): z.infer<typeof accountResult> {
  return {
    id: account.id,
    name: account.name,
    type: 'standard',
    settings: { enforce_twofactor: false, use_account_custom_ns_by_default: false },
    created_on: new Date(account.created).toISOString(),
  };
}

/** The account named by `:account_id`, if it is the caller's; else 7003 as for an unknown one. */
export function requireOwnAccount(ctx: RouteContext<unknown>): AccountRecord {
  if (ctx.params.account_id !== ctx.account.id) throw objectNotFound(ctx.path, /^[0-9a-f]{32}$/.test(ctx.params.account_id ?? '') ? 404 : 400);
  return ctx.account;
}

export const ACCOUNT_ROUTES: ApiRoute[] = [
  defineRoute({
    method: 'GET',
    path: '/accounts',
    operationId: 'accounts-list',
    summary: 'List the accounts you are a member of',
    tag: TAG,
    query: listAccountsQuery,
    result: z.array(accountResult),
    resultInfo: 'page',
    async handler(ctx) {
      const q = validateQuery(listAccountsQuery, ctx.query);
      const all = q.name === undefined || ctx.account.name.toLowerCase().includes(q.name.toLowerCase()) ? [ctx.account] : [];
      const page = all.slice((q.page - 1) * q.per_page, q.page * q.per_page);
      return successResponse(page.map(toAccountJson), {
        resultInfo: { page: q.page, per_page: q.per_page, count: page.length, total_count: all.length, total_pages: Math.ceil(all.length / q.per_page) },
      });
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/accounts/:account_id',
    operationId: 'accounts-get',
    summary: 'Get your account',
    tag: TAG,
    result: accountResult,
    async handler(ctx) {
      return successResponse(toAccountJson(requireOwnAccount(ctx)));
    },
  }),
];
