/**
 * S3 access keys of the object store (an edgeport extension), under
 * `/accounts/:account_id/store/access-keys`: list your keys, make one (its secret is shown once,
 * in the answer), revoke one. A key reaches only its account's buckets; `permission` and `buckets`
 * limit it further, as the real store's bucket-scoped tokens ("Object Read only", "Object Read &
 * Write"): see src/store/s3/key-grant.ts. Another account's key answers like one that does not exist.
 * `/accounts/:account_id/store/s3-endpoint` says where to use them: the S3 listener's URL (as
 * the gateway networks route reports the gateway's) and the region.
 */
import { z } from 'zod';
import { ACCESS_KEY_PERMISSIONS, type AccessKeyPermission } from '../../db/metadata-store.ts';
import type { ListedAccessKey } from '../../store/s3/access-keys.ts';
import { successResponse } from '../envelope.ts';
import { objectNotFound } from '../errors.ts';
import { requireOwnAccount } from '../accounts/account-routes.ts';
import { publicUrl } from '../gateway/network-routes.ts';
import { defineRoute, type ApiRoute } from '../route.ts';

/** What the endpoint route needs from the S3 listener. */
export interface S3ListenerStatus {
  /** The S3 listener's URL, e.g. `http://127.0.0.1:9000`; undefined until it listens. */
  url(): string | undefined;
}

const TAG = 'Object store access keys';
const BASE = '/accounts/:account_id/store/access-keys';
const BUCKET_NAME = /^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/;

const permission = z.enum(ACCESS_KEY_PERMISSIONS as unknown as [AccessKeyPermission, ...AccessKeyPermission[]]);

const accessKeyResult = z.object({
  access_key_id: z.string(),
  permission,
  buckets: z.array(z.string()).nullable().describe('The buckets the key is limited to; null: every bucket of the account'),
  created_on: z.string(),
  revoked_on: z.string().nullable(),
  status: z.enum(['active', 'revoked']),
});

const createKeyBody = z
  .strictObject({
    permission: permission
      .optional()
      .describe('admin_read_write (default): buckets and objects; admin_read_only; object_read_write / object_read_only: objects only'),
    buckets: z
      .array(z.string().regex(BUCKET_NAME, "must be a bucket name: 3-63 characters of a-z, 0-9 and '-', starting and ending with a letter or digit"))
      .min(1)
      .max(1000)
      .optional()
      .describe('Limits an object_* key to these buckets of the account'),
  })
  .superRefine((body, ctx) => {
    if (body.buckets !== undefined && !(body.permission ?? 'admin_read_write').startsWith('object_')) {
      ctx.addIssue({
        code: 'custom',
        path: ['buckets'],
        message: 'only object_read_write and object_read_only keys are limited to buckets: admin keys reach every bucket of the account',
      });
    }
  });

function toKeyJson(key: ListedAccessKey): z.infer<typeof accessKeyResult> {
  return {
    access_key_id: key.accessKeyId,
    permission: key.permission,
    buckets: key.buckets,
    created_on: new Date(key.created).toISOString(),
    revoked_on: key.revoked === null ? null : new Date(key.revoked).toISOString(),
    status: key.revoked === null ? 'active' : 'revoked',
  };
}

export const ACCESS_KEY_ROUTES: ApiRoute[] = [
  defineRoute({
    method: 'GET',
    path: BASE,
    operationId: 'store-access-keys-list',
    summary: 'List your S3 access keys (secrets are never shown again)',
    tag: TAG,
    result: z.array(accessKeyResult),
    resultInfo: 'page',
    async handler(ctx) {
      const account = requireOwnAccount(ctx);
      const keys = (await ctx.deps.accessKeys.list(account.id)).map(toKeyJson);
      return successResponse(keys, { resultInfo: { page: 1, per_page: keys.length, count: keys.length, total_count: keys.length, total_pages: 1 } });
    },
  }),
  defineRoute<z.infer<typeof createKeyBody>>({
    method: 'POST',
    path: BASE,
    operationId: 'store-access-keys-create',
    summary: 'Make an S3 access key; the secret is in this answer only',
    tag: TAG,
    body: { schema: createKeyBody, invalid: 'API_ACCESS_KEY_INVALID', optional: true },
    result: accessKeyResult.omit({ revoked_on: true, status: true }).extend({ secret_access_key: z.string() }),
    async handler(ctx) {
      const account = requireOwnAccount(ctx);
      const permissionGiven = ctx.body?.permission ?? 'admin_read_write';
      const buckets = ctx.body?.buckets === undefined ? null : [...new Set(ctx.body.buckets)];
      const key = await ctx.deps.accessKeys.create(account.id, { permission: permissionGiven, buckets });
      return successResponse({
        access_key_id: key.accessKeyId,
        secret_access_key: key.secretAccessKey,
        permission: permissionGiven,
        buckets,
        created_on: new Date(key.created).toISOString(),
      });
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/accounts/:account_id/store/s3-endpoint',
    operationId: 'store-s3-endpoint-get',
    tag: TAG,
    summary: 'Where S3 clients reach the object store with these keys: endpoint URL and region',
    result: z.object({
      endpoint: z.string().nullable().describe("The S3-compatible API's URL (path-style requests); null when this server runs none"),
      region: z.literal('auto').describe("The one region, as in the real store's S3 API"),
    }),
    async handler(ctx) {
      requireOwnAccount(ctx);
      return successResponse({ endpoint: publicUrl(ctx.deps.s3?.url(), ctx.request) ?? null, region: 'auto' as const });
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: `${BASE}/:access_key_id`,
    operationId: 'store-access-keys-revoke',
    summary: 'Revoke one of your S3 access keys (within a second everywhere)',
    tag: TAG,
    result: z.object({ access_key_id: z.string(), status: z.literal('revoked') }),
    async handler(ctx) {
      const account = requireOwnAccount(ctx);
      const id = ctx.params.access_key_id!;
      if (!(await ctx.deps.accessKeys.revoke(account.id, id))) throw objectNotFound(ctx.path);
      return successResponse({ access_key_id: id, status: 'revoked' });
    },
  }),
];
