/**
 * Lists of things an account here can have none of, which wrangler reads before it does something
 * else: `wrangler delete` lists the account's KV namespaces (to clean up a Workers Sites namespace)
 * and its Durable Object namespaces (to find Containers the script made). Each is answered as the
 * truth, an empty list; making or reading one of those things is refused by name
 * (not-provided.ts), and an upload binding one is refused with the binding types this server has.
 */
import { z } from 'zod';
import { requireOwnAccount } from '../accounts/account-routes.ts';
import { successResponse } from '../envelope.ts';
import { defineRoute, type ApiRoute } from '../route.ts';

const TAG = 'Not provided';
const pageQuery = z.object({ page: z.coerce.number().int().min(1).default(1), per_page: z.coerce.number().int().min(1).max(1000).default(20) });

function emptyList(path: string, operationId: string, what: string): ApiRoute {
  return defineRoute({
    method: 'GET',
    path,
    operationId,
    summary: `The account's ${what}: none (edgeport does not provide them)`,
    tag: TAG,
    query: pageQuery,
    result: z.array(z.never()),
    async handler(ctx) {
      requireOwnAccount(ctx);
      const page = Number(ctx.query.get('page') ?? 1) || 1;
      const perPage = Number(ctx.query.get('per_page') ?? 20) || 20;
      return successResponse([], { resultInfo: { page, per_page: perPage, count: 0, total_count: 0, total_pages: 0 } });
    },
  });
}

export const EMPTY_LIST_ROUTES: ApiRoute[] = [
  emptyList('/accounts/:account_id/storage/kv/namespaces', 'kv-namespaces-list', 'Workers KV namespaces'),
  emptyList('/accounts/:account_id/workers/durable_objects/namespaces', 'durable-objects-namespaces-list', 'Durable Object namespaces'),
];
