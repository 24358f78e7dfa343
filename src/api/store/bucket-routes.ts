/**
 * Buckets of the object store (an edgeport extension for the dashboard), under
 * `/accounts/:account_id/store/buckets`: list, create, read, delete (only when it holds no objects),
 * and what a bucket or one of its folders holds (`.../usage?prefix=`: a bounded count). The same
 * buckets the S3 API and script bindings see.
 *
 * By design: the object store is not partitioned by account (as with S3 access keys), so every
 * account sees every bucket.
 */
import { z } from 'zod';
import { StoreError } from '../../store/engine/errors.ts';
import { successResponse } from '../envelope.ts';
import { defineRoute, type ApiRoute } from '../route.ts';
import { validateQuery } from '../validation.ts';
import { bucketResult, createBucketBody, requireStore, toBucketJson } from './store-schema.ts';

const TAG = 'Object store';
const usageQuery = z.object({
  prefix: z.string().max(1024).default('').describe('Count only the keys starting with it (a folder: "photos/2026/"); none: the whole bucket'),
});
const usageResult = z.object({
  prefix: z.string(),
  object_count: z.number().int(),
  payload_size: z.number().int(),
  metadata_size: z.number().int(),
  upload_count: z.number().int(),
  complete: z.boolean().describe('false when more rows were there than one count reads: the figures are then lower bounds'),
});
export const BUCKETS = '/accounts/:account_id/store/buckets';

export const BUCKET_ROUTES: ApiRoute[] = [
  defineRoute({
    method: 'GET',
    path: BUCKETS,
    operationId: 'store-buckets-list',
    summary: "List the object store's buckets",
    tag: TAG,
    result: z.array(bucketResult),
    resultInfo: 'page',
    async handler(ctx) {
      const buckets = (await requireStore(ctx).listBuckets()).map(toBucketJson);
      return successResponse(buckets, {
        resultInfo: { page: 1, per_page: buckets.length, count: buckets.length, total_count: buckets.length, total_pages: 1 },
      });
    },
  }),
  defineRoute<z.infer<typeof createBucketBody>>({
    method: 'POST',
    path: BUCKETS,
    operationId: 'store-buckets-create',
    summary: 'Create a bucket',
    tag: TAG,
    body: { schema: createBucketBody, invalid: 'API_STORE_INVALID' },
    result: bucketResult,
    async handler(ctx) {
      const store = requireStore(ctx);
      const bucket = await store.createBucket(ctx.body.name, ctx.body.storage_class === undefined ? {} : { storageClass: ctx.body.storage_class });
      return successResponse(toBucketJson(bucket));
    },
  }),
  defineRoute({
    method: 'GET',
    path: `${BUCKETS}/:bucket`,
    operationId: 'store-buckets-get',
    summary: 'Get a bucket',
    tag: TAG,
    result: bucketResult,
    async handler(ctx) {
      const bucket = await requireStore(ctx).getBucket(ctx.params.bucket!);
      if (!bucket) throw new StoreError('STORE_NO_SUCH_BUCKET');
      return successResponse(toBucketJson(bucket));
    },
  }),
  defineRoute({
    method: 'GET',
    path: `${BUCKETS}/:bucket/usage`,
    operationId: 'store-buckets-usage',
    tag: TAG,
    query: usageQuery,
    result: usageResult,
    summary:
      'What the bucket, or its keys under a prefix, hold now: object count, bytes of bodies and metadata, open multipart uploads (at most 1,000,000 rows counted)',
    async handler(ctx) {
      const q = validateQuery(usageQuery, ctx.query);
      const usage = await requireStore(ctx).bucketUsage(ctx.params.bucket!, q.prefix);
      return successResponse({
        prefix: q.prefix,
        object_count: usage.objectCount,
        payload_size: usage.payloadSize,
        metadata_size: usage.metadataSize,
        upload_count: usage.uploadCount,
        complete: usage.complete,
      });
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: `${BUCKETS}/:bucket`,
    operationId: 'store-buckets-delete',
    summary: 'Delete a bucket (only when it holds no objects; its open multipart uploads are aborted)',
    tag: TAG,
    result: z.object({ name: z.string() }),
    async handler(ctx) {
      await requireStore(ctx).deleteBucket(ctx.params.bucket!);
      return successResponse({ name: ctx.params.bucket! });
    },
  }),
];
