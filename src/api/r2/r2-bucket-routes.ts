/**
 * R2 buckets over the platform's own paths, `/accounts/:account_id/r2/buckets`: list (in
 * `result.buckets`, a page at a time by cursor), create, read, change the default storage class
 * (PATCH with `cf-r2-storage-class`, wrangler's `r2 bucket update storage-class`), delete (only
 * when empty). What the
 * official SDK's `r2.buckets` and wrangler's `r2 bucket` commands call. The buckets are the
 * account's buckets of the object store, the same ones the dashboard's store routes, the S3 API
 * and script bindings see; another account's bucket answers exactly like a missing one (10006).
 *
 * By design: wrangler labels the create body `text/plain`, so it is read as JSON whatever its
 * Content-Type. `locationHint` is checked and echoed as `location` by the create, not stored: every
 * bucket lives on this server. A list without `per_page` answers up to 1000 buckets, so a client
 * that reads one page (wrangler does) sees them all.
 */
import { z } from 'zod';
import { StoreError } from '../../store/engine/errors.ts';
import { successResponse } from '../envelope.ts';
import { ApiError } from '../errors.ts';
import { defineRoute, type ApiRoute } from '../route.ts';
import { validateQuery } from '../validation.ts';
import { STORAGE_CLASSES } from '../../store/engine/types.ts';
import { createR2BucketBody, listR2BucketsQuery, r2BucketResult, r2Store, storageClassHeader, toR2BucketJson, withR2Errors } from './r2-schema.ts';

const TAG = 'R2';
export const R2_BUCKETS = '/accounts/:account_id/r2/buckets';

/** A list cursor is the last name of the page, base64url: opaque to clients, and checked when it comes back. */
function encodeCursor(name: string): string {
  return Buffer.from(name, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): string {
  const name = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/^[a-z0-9-]{1,63}$/.test(name)) {
    throw new ApiError('API_INVALID_QUERY', {
      message: `'${cursor.slice(0, 100)}' is not a valid value for cursor because it must be the result_info.cursor of a previous list, unchanged`,
    });
  }
  return name;
}

export const R2_BUCKET_ROUTES: ApiRoute[] = [
  defineRoute({
    method: 'GET',
    path: R2_BUCKETS,
    operationId: 'r2-buckets-list',
    summary: "List the account's R2 buckets (result.buckets), a page at a time (result_info.cursor)",
    tag: TAG,
    query: listR2BucketsQuery,
    result: z.object({ buckets: z.array(r2BucketResult) }),
    resultInfo: 'cursor',
    async handler(ctx) {
      const store = r2Store(ctx);
      const q = validateQuery(listR2BucketsQuery, ctx.query);
      const after = q.cursor === undefined ? q.start_after : decodeCursor(q.cursor);
      let buckets = await store.listBuckets();
      if (q.name_contains !== undefined) buckets = buckets.filter((b) => b.name.includes(q.name_contains!));
      if (q.direction === 'desc') buckets = buckets.reverse();
      if (after !== undefined) buckets = buckets.filter((b) => (q.direction === 'asc' ? b.name > after : b.name < after));
      const page = buckets.slice(0, q.per_page);
      const more = buckets.length > page.length;
      return successResponse(
        { buckets: page.map((b) => toR2BucketJson(b)) },
        {
          resultInfo: { count: page.length, per_page: q.per_page, ...(more ? { cursor: encodeCursor(page.at(-1)!.name) } : {}) },
        },
      );
    },
  }),
  defineRoute<z.infer<typeof createR2BucketBody>>({
    method: 'POST',
    path: R2_BUCKETS,
    operationId: 'r2-buckets-create',
    summary: 'Create an R2 bucket (body: name, storageClass, locationHint; any Content-Type)',
    tag: TAG,
    body: { schema: createR2BucketBody, invalid: 'API_STORE_INVALID', anyMediaType: true },
    result: r2BucketResult,
    async handler(ctx) {
      const store = r2Store(ctx);
      const { name, storageClass, locationHint } = ctx.body;
      const bucket = await withR2Errors(() => store.createBucket(name, storageClass === undefined ? {} : { storageClass }));
      return successResponse(toR2BucketJson(bucket, locationHint));
    },
  }),
  defineRoute({
    method: 'GET',
    path: `${R2_BUCKETS}/:bucket`,
    operationId: 'r2-buckets-get',
    summary: 'Get an R2 bucket',
    tag: TAG,
    result: r2BucketResult,
    async handler(ctx) {
      const store = r2Store(ctx);
      const bucket = await withR2Errors(() => store.getBucket(ctx.params.bucket!));
      if (!bucket) throw new StoreError('STORE_NO_SUCH_BUCKET');
      return successResponse(toR2BucketJson(bucket));
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: `${R2_BUCKETS}/:bucket`,
    operationId: 'r2-buckets-edit',
    tag: TAG,
    summary: "Change an R2 bucket's default storage class of new objects (header cf-r2-storage-class; objects already stored keep theirs)",
    result: r2BucketResult,
    async handler(ctx) {
      const store = r2Store(ctx);
      const storageClass = storageClassHeader(ctx);
      if (storageClass === undefined) {
        throw new ApiError('API_STORE_INVALID', {
          message: `cf-r2-storage-class is required: send the bucket's new default storage class, one of ${STORAGE_CLASSES.map((c) => JSON.stringify(c)).join(', ')}`,
        });
      }
      const bucket = await withR2Errors(() => store.setBucketStorageClass(ctx.params.bucket!, storageClass));
      return successResponse(toR2BucketJson(bucket));
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: `${R2_BUCKETS}/:bucket`,
    operationId: 'r2-buckets-delete',
    summary: 'Delete an R2 bucket (only when it holds no objects; its open multipart uploads are aborted)',
    tag: TAG,
    result: z.object({}),
    async handler(ctx) {
      const store = r2Store(ctx);
      await withR2Errors(() => store.deleteBucket(ctx.params.bucket!));
      return successResponse({});
    },
  }),
];
