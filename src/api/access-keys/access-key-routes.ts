/**
 * S3 access keys of the object store (an edgeport extension, issue 4), under
 * `/accounts/:account_id/store/access-keys`: list the keys you made, make one (its secret is
 * shown once, in the answer), revoke one. Keys live in the object store's metadata (AccessKeys);
 * the control store remembers which account made which, so an account sees only its own.
 *
 * By design: the object store is not partitioned by account, so any key reaches every bucket.
 * The bootstrap key of the first start belongs to no account and is managed through the
 * environment (EDGEPORT_S3_ACCESS_KEY_ID / EDGEPORT_S3_SECRET_ACCESS_KEY).
 */
import { z } from 'zod';
import { successResponse } from '../envelope.ts';
import { objectNotFound } from '../errors.ts';
import { requireOwnAccount } from '../accounts/account-routes.ts';
import { defineRoute, type ApiRoute } from '../route.ts';

const TAG = 'Object store access keys';
const BASE = '/accounts/:account_id/store/access-keys';

const accessKeyResult = z.object({
  access_key_id: z.string(),
  created_on: z.string(),
  revoked_on: z.string().nullable(),
  status: z.enum(['active', 'revoked']),
});

const createKeyBody = z.strictObject({});

export const ACCESS_KEY_ROUTES: ApiRoute[] = [
  defineRoute({
    method: 'GET', path: BASE, operationId: 'store-access-keys-list', summary: 'List the S3 access keys you made (secrets are never shown again)', tag: TAG,
    result: z.array(accessKeyResult), resultInfo: 'page',
    async handler(ctx) {
      const account = requireOwnAccount(ctx);
      const mine = new Set(await ctx.deps.control.listAccessKeyIds(account.id));
      const keys = (await ctx.deps.accessKeys.list()).filter((key) => mine.has(key.accessKeyId)).map((key) => ({
        access_key_id: key.accessKeyId,
        created_on: new Date(key.created).toISOString(),
        revoked_on: key.revoked === null ? null : new Date(key.revoked).toISOString(),
        status: key.revoked === null ? 'active' as const : 'revoked' as const,
      }));
      return successResponse(keys, { resultInfo: { page: 1, per_page: keys.length, count: keys.length, total_count: keys.length, total_pages: 1 } });
    },
  }),
  defineRoute<z.infer<typeof createKeyBody>>({
    method: 'POST', path: BASE, operationId: 'store-access-keys-create', summary: 'Make an S3 access key; the secret is in this answer only', tag: TAG,
    body: { schema: createKeyBody, invalid: 'API_ACCESS_KEY_INVALID', optional: true },
    result: z.object({ access_key_id: z.string(), secret_access_key: z.string(), created_on: z.string() }),
    async handler(ctx) {
      const account = requireOwnAccount(ctx);
      const key = await ctx.deps.accessKeys.create();
      await ctx.deps.control.recordAccessKeyOwner(key.accessKeyId, account.id);
      const created = (await ctx.deps.accessKeys.list()).find((listed) => listed.accessKeyId === key.accessKeyId)?.created ?? ctx.deps.clock.now();
      return successResponse({ access_key_id: key.accessKeyId, secret_access_key: key.secretAccessKey, created_on: new Date(created).toISOString() });
    },
  }),
  defineRoute({
    method: 'DELETE', path: `${BASE}/:access_key_id`, operationId: 'store-access-keys-revoke', summary: 'Revoke an S3 access key you made (within a second everywhere)', tag: TAG,
    result: z.object({ access_key_id: z.string(), status: z.literal('revoked') }),
    async handler(ctx) {
      const account = requireOwnAccount(ctx);
      const id = ctx.params.access_key_id!;
      if (await ctx.deps.control.accessKeyOwner(id) !== account.id || !await ctx.deps.accessKeys.revoke(id)) throw objectNotFound(ctx.path);
      return successResponse({ access_key_id: id, status: 'revoked' });
    },
  }),
];
