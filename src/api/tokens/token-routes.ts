/**
 * API tokens of the caller's user (`/user/tokens`, the official SDK's `user.tokens`) and of the
 * account (`/accounts/<id>/tokens`, `accounts.tokens`: account-owned tokens): create (the value is
 * in that one answer, never again), list, read, update (name, policies, dates, status), roll (`PUT
 * .../value`: a new value, the old one refused at once), delete, the permission groups a policy
 * may name, and verify (what `wrangler whoami` asks about the token it was given).
 *
 * A token belongs to the account that made it and reaches only that account: its policies may name
 * only that account, its zones and its user (another account's or an unknown id is refused alike);
 * an account-owned token holds no user permission. Each path sees only its own kind of token (a
 * user token under `/accounts/<id>/tokens/<token id>` is as missing as an unknown one). Called with
 * a token, these routes need API Tokens Read or Write on the user, or Account API Tokens Read or
 * Write on the account (authorize.ts).
 *
 * By design: IP `condition`s are refused rather than stored unenforced; `last_used_on` is not kept
 * (it would be a write per request).
 */
import { z } from 'zod';
import { randomHexId } from '../../core/ids.ts';
import type { ApiTokenRecord } from '../../db/api-tokens/api-token-store.ts';
import { requireOwnAccount } from '../accounts/account-routes.ts';
import { userIdOf } from '../accounts/user-id.ts';
import { successResponse } from '../envelope.ts';
import { ApiError, objectNotFound } from '../errors.ts';
import { defineRoute, type ApiRoute, type RouteContext } from '../route.ts';
import { validateQuery } from '../validation.ts';
import { generateTokenValue, hashTokenValue, tokenStatusAt } from './bearer-auth.ts';
import { PERMISSION_GROUPS, permissionGroup } from './permission-groups.ts';
import {
  DEFAULT_MAX_TOKENS_PER_ACCOUNT,
  listTokensQuery,
  namedResources,
  permissionGroupResult,
  permissionGroupsQuery,
  toPermissionGroupJson,
  toPolicies,
  tokenBody,
  tokenResult,
  toTokenJson,
  type TokenBody,
} from './token-schema.ts';

/** Where a kind of token is managed: its routes' base path, the owner its tokens carry, its OpenAPI tag and operation prefix. */
interface TokenPlace {
  base: string;
  owner: ApiTokenRecord['owner'];
  tag: string;
  operation: string;
}

const USER_PLACE: TokenPlace = { base: '/user/tokens', owner: undefined, tag: 'User API Tokens', operation: 'user-tokens' };
const ACCOUNT_PLACE: TokenPlace = { base: '/accounts/:account_id/tokens', owner: 'account', tag: 'Account API Tokens', operation: 'account-tokens' };
const TOKEN_ID = /^[0-9a-f]{32}$/;
/** Distinct zones one body may name (each is looked up). */
const MAX_NAMED_ZONES = 256;

/** The place's account: the caller's own (an account path naming another is as unknown as a missing one). */
function placeAccount(ctx: RouteContext<unknown>, place: TokenPlace): void {
  if (place.owner === 'account') requireOwnAccount(ctx);
}

async function requireToken(ctx: RouteContext<unknown>, place: TokenPlace): Promise<ApiTokenRecord> {
  placeAccount(ctx, place);
  const id = ctx.params.token_id ?? '';
  if (!TOKEN_ID.test(id)) throw objectNotFound(ctx.path, 400);
  const token = await ctx.deps.control.apiTokens.get(ctx.account.id, id);
  if (!token || token.owner !== place.owner) throw objectNotFound(ctx.path);
  return token;
}

function statusNow(ctx: RouteContext<unknown>, token: ApiTokenRecord): ApiTokenRecord['status'] {
  const status = tokenStatusAt(token, ctx.deps.clock.now());
  return status === 'pending' ? 'active' : status;
}

/**
 * Refuses policies naming anything but the caller's account, its zones and its user (all as
 * unknown); an account-owned token, any user permission or resource.
 */
async function checkOwnResources(ctx: RouteContext<TokenBody>, body: TokenBody, place: TokenPlace): Promise<void> {
  const policies = toPolicies(body, () => '');
  if (place.owner === 'account') {
    for (const [i, policy] of policies.entries()) {
      const user = policy.permissionGroups.find((group) => permissionGroup(group.id)?.scope === 'com.cloudflare.api.user');
      if (user)
        throw new ApiError('API_TOKEN_INVALID_BODY', {
          message: `'${user.id}' is not a valid value for permission_groups because an account-owned token holds no user permission (${permissionGroup(user.id)!.name}): make a user token with POST /user/tokens`,
          pointer: `/policies/${i}/permission_groups`,
        });
    }
  }
  const { accounts, zones, users } = namedResources(policies);
  const refuse = (kind: string, id: string) =>
    new ApiError('API_TOKEN_INVALID_BODY', {
      message: `'${id}' is not a valid value for resources because it is no ${kind} of yours (GET ${kind === 'user' ? '/user' : kind === 'zone' ? '/zones' : '/accounts'} lists yours)`,
      pointer: '/policies',
    });
  for (const id of accounts) if (id !== ctx.account.id) throw refuse('account', id);
  for (const id of users) if (place.owner === 'account' || id !== userIdOf(ctx.account)) throw refuse('user', id);
  if (zones.size > MAX_NAMED_ZONES)
    throw new ApiError('API_TOKEN_INVALID_BODY', {
      message: `'${zones.size} zones' is not a valid value for resources because a token may name at most ${MAX_NAMED_ZONES} zones`,
      pointer: '/policies',
    });
  for (const id of zones) if (!(await ctx.deps.control.getZone(ctx.account.id, id))) throw refuse('zone', id);
}

function dateOf(value: string | null | undefined): number | null {
  return value ? Date.parse(value) : null;
}

function tokenRoutes(place: TokenPlace): ApiRoute[] {
  const TOKENS = place.base;
  const TAG = place.tag;
  return [
    defineRoute({
      method: 'GET',
      path: `${TOKENS}/verify`,
      operationId: `${place.operation}-verify`,
      tag: TAG,
      permission: 'any-status',
      summary: 'Verify the API token the request carries (Authorization: Bearer): its id and status',
      result: z.object({
        id: z.string(),
        status: z.enum(['active', 'disabled', 'expired']),
        expires_on: z.string().optional(),
        not_before: z.string().optional(),
      }),
      async handler(ctx) {
        placeAccount(ctx, place);
        // The global key or a session is no token: the platform answers 1000 there.
        if (!ctx.token) throw new ApiError('API_TOKEN_INVALID');
        const json = toTokenJson(ctx.token, statusNow(ctx, ctx.token));
        return successResponse({
          id: json.id,
          status: json.status,
          ...(json.expires_on ? { expires_on: json.expires_on } : {}),
          ...(json.not_before ? { not_before: json.not_before } : {}),
        });
      },
    }),
    defineRoute({
      method: 'GET',
      path: `${TOKENS}/permission_groups`,
      operationId: `${place.operation}-permission-groups`,
      tag: TAG,
      permission: 'none',
      summary: 'List the permission groups a token policy may name',
      query: permissionGroupsQuery,
      result: z.array(permissionGroupResult),
      async handler(ctx) {
        placeAccount(ctx, place);
        const q = validateQuery(permissionGroupsQuery, ctx.query);
        const groups = PERMISSION_GROUPS.filter(
          (g) =>
            (q.name === undefined || g.name === q.name) &&
            (q.scope === undefined || g.scope === q.scope) &&
            (place.owner !== 'account' || g.scope !== 'com.cloudflare.api.user'),
        );
        return successResponse(groups.map(toPermissionGroupJson));
      },
    }),
    defineRoute({
      method: 'GET',
      path: TOKENS,
      operationId: `${place.operation}-list`,
      tag: TAG,
      summary: 'List your API tokens (never their values)',
      query: listTokensQuery,
      result: z.array(tokenResult),
      resultInfo: 'page',
      async handler(ctx) {
        const q = validateQuery(listTokensQuery, ctx.query);
        placeAccount(ctx, place);
        let all = (await ctx.deps.control.apiTokens.list(ctx.account.id)).filter((token) => token.owner === place.owner);
        if (q.direction === 'desc') all = all.reverse();
        const page = all.slice((q.page - 1) * q.per_page, q.page * q.per_page);
        return successResponse(
          page.map((token) => toTokenJson(token, statusNow(ctx, token))),
          {
            resultInfo: { page: q.page, per_page: q.per_page, count: page.length, total_count: all.length, total_pages: Math.ceil(all.length / q.per_page) },
          },
        );
      },
    }),
    defineRoute<TokenBody>({
      method: 'POST',
      path: TOKENS,
      operationId: `${place.operation}-create`,
      tag: TAG,
      summary: 'Create an API token; its value is in this answer only',
      body: { schema: tokenBody, invalid: 'API_TOKEN_INVALID_BODY' },
      result: tokenResult,
      async handler(ctx) {
        placeAccount(ctx, place);
        const body = ctx.body;
        if (body.status !== undefined)
          throw new ApiError('API_TOKEN_INVALID_BODY', {
            message: `'${body.status}' is not a valid value for status because a new token is always active: set it with PUT ${place.base}/<id>`,
            pointer: '/status',
          });
        await checkOwnResources(ctx, body, place);
        const now = ctx.deps.clock.now();
        const value = generateTokenValue();
        const token: ApiTokenRecord = {
          id: randomHexId(),
          accountId: ctx.account.id,
          valueHash: hashTokenValue(value),
          name: body.name,
          status: 'active',
          policies: toPolicies(body, randomHexId),
          issuedOn: now,
          modifiedOn: now,
          expiresOn: dateOf(body.expires_on),
          notBefore: dateOf(body.not_before),
          ...(place.owner === undefined ? {} : { owner: place.owner }),
        };
        const max = ctx.deps.maxTokensPerAccount ?? DEFAULT_MAX_TOKENS_PER_ACCOUNT;
        if ((await ctx.deps.control.apiTokens.create(token, max)) === 'limit') {
          throw new ApiError('API_TOKEN_LIMIT', {
            message: `creating a new API token is not allowed: the account has ${max} tokens, the most it may have; delete one first`,
          });
        }
        return successResponse(toTokenJson(token, statusNow(ctx, token), value));
      },
    }),
    defineRoute({
      method: 'GET',
      path: `${TOKENS}/:token_id`,
      operationId: `${place.operation}-get`,
      tag: TAG,
      summary: 'Get an API token (never its value)',
      result: tokenResult,
      async handler(ctx) {
        const token = await requireToken(ctx, place);
        return successResponse(toTokenJson(token, statusNow(ctx, token)));
      },
    }),
    defineRoute<TokenBody>({
      method: 'PUT',
      path: `${TOKENS}/:token_id`,
      operationId: `${place.operation}-update`,
      tag: TAG,
      summary: "Replace an API token's name, policies, dates and status (its value stays)",
      body: { schema: tokenBody, invalid: 'API_TOKEN_INVALID_BODY' },
      result: tokenResult,
      async handler(ctx) {
        await requireToken(ctx, place);
        const body = ctx.body;
        await checkOwnResources(ctx, body, place);
        const now = ctx.deps.clock.now();
        const policies = toPolicies(body, randomHexId);
        const updated = await ctx.deps.control.apiTokens.update(ctx.account.id, ctx.params.token_id!, (current) => ({
          ...current,
          name: body.name,
          policies,
          status: body.status ?? current.status,
          modifiedOn: now,
          expiresOn: dateOf(body.expires_on),
          notBefore: dateOf(body.not_before),
        }));
        if (!updated) throw objectNotFound(ctx.path);
        return successResponse(toTokenJson(updated, statusNow(ctx, updated)));
      },
    }),
    defineRoute({
      method: 'PUT',
      path: `${TOKENS}/:token_id/value`,
      operationId: `${place.operation}-roll`,
      tag: TAG,
      summary: 'Roll an API token: a new value (in this answer only); the old one is refused from now on',
      result: z.string(),
      async handler(ctx) {
        await requireToken(ctx, place);
        const value = generateTokenValue();
        const now = ctx.deps.clock.now();
        const rolled = await ctx.deps.control.apiTokens.update(ctx.account.id, ctx.params.token_id!, (current) => ({
          ...current,
          valueHash: hashTokenValue(value),
          modifiedOn: now,
        }));
        if (!rolled) throw objectNotFound(ctx.path);
        return successResponse(value);
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: `${TOKENS}/:token_id`,
      operationId: `${place.operation}-delete`,
      tag: TAG,
      summary: 'Delete an API token',
      result: z.object({ id: z.string() }),
      async handler(ctx) {
        const token = await requireToken(ctx, place);
        if (!(await ctx.deps.control.apiTokens.delete(ctx.account.id, token.id))) throw objectNotFound(ctx.path);
        return successResponse({ id: token.id });
      },
    }),
  ];
}

export const TOKEN_ROUTES: ApiRoute[] = [...tokenRoutes(USER_PLACE), ...tokenRoutes(ACCOUNT_PLACE)];
