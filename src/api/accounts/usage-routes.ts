/**
 * `GET /accounts/:account_id/usage` (an edgeport extension; the platform has no such quotas):
 * what the account stores against its quotas: object bytes (bodies and the parts of open
 * multipart uploads) and count, script bytes (modules of every kept version), and how many
 * versions a script keeps. A `max_*` of null is no limit. The operator sets the quotas
 * (`[quotas]`, `edgeport accounts quota`); a write past one is refused (docs/errors.md).
 */
import { z } from 'zod';
import type { AccountUsage } from '../../db/account-usage.ts';
import { successResponse } from '../envelope.ts';
import { ApiError } from '../errors.ts';
import { defineRoute, type ApiRoute } from '../route.ts';
import { requireOwnAccount } from './account-routes.ts';

const TAG = 'Accounts';
const amount = z.number().int();
const limit = z.number().int().nullable().describe('null: no limit');

export const usageResult = z.object({
  objects: z.object({ stored_bytes: amount, max_bytes: limit, count: amount, max_count: limit }),
  scripts: z.object({ stored_bytes: amount, max_bytes: limit, max_versions_per_script: amount }),
});

/** The usage as the API shows it. */
export function toUsageJson(usage: AccountUsage): z.infer<typeof usageResult> {
  const quota = (value: number) => (value === 0 ? null : value);
  return {
    objects: {
      stored_bytes: usage.objectBytes,
      max_bytes: quota(usage.quotas.maxObjectBytes),
      count: usage.objectCount,
      max_count: quota(usage.quotas.maxObjects),
    },
    scripts: { stored_bytes: usage.scriptBytes, max_bytes: quota(usage.quotas.maxScriptBytes), max_versions_per_script: usage.quotas.maxVersionsPerScript },
  };
}

export const USAGE_ROUTES: ApiRoute[] = [
  defineRoute({
    method: 'GET',
    path: '/accounts/:account_id/usage',
    operationId: 'accounts-usage',
    tag: TAG,
    result: usageResult,
    summary: 'What your account stores (objects, scripts) against its quotas',
    async handler(ctx) {
      const account = requireOwnAccount(ctx);
      if (!ctx.deps.store) throw new ApiError('API_STORE_INVALID', { message: 'The object store is not available on this server.' });
      return successResponse(toUsageJson(await ctx.deps.store.accountUsage(account.id)));
    },
  }),
];
