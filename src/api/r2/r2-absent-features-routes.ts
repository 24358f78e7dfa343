/**
 * What a bucket here never has, read as the platform answers for a bucket without it: its lock
 * rules (none), its Sippy migration (off; turning it off again is a no-op), its event
 * notification configuration (no queues). Setting any of them is refused by name
 * (not-provided.ts), since edgeport has no bucket locks, Sippy or Queues. A bucket that does not
 * exist (or is another account's) is 404 / 10006, as on the other R2 routes.
 */
import { z } from 'zod';
import { successResponse } from '../envelope.ts';
import { ApiError, objectNotFound } from '../errors.ts';
import { defineRoute, type ApiRoute, type RouteContext } from '../route.ts';
import { R2_BUCKETS } from './r2-bucket-routes.ts';
import { r2Store, withR2Errors } from './r2-schema.ts';

const TAG = 'R2';

async function requireBucket(ctx: RouteContext<unknown>, param = 'bucket'): Promise<string> {
  const name = ctx.params[param] ?? '';
  const bucket = await withR2Errors(() => r2Store(ctx).getBucket(name));
  if (!bucket) throw new ApiError('API_BUCKET_NOT_FOUND');
  return bucket.name;
}

const NOTIFICATIONS = '/accounts/:account_id/event_notifications/r2/:bucket/configuration';

export const R2_ABSENT_FEATURE_ROUTES: ApiRoute[] = [
  defineRoute({
    method: 'GET',
    path: `${R2_BUCKETS}/:bucket/lock`,
    operationId: 'r2-bucket-lock-get',
    summary: "The bucket's lock rules: none (edgeport has no bucket locks)",
    tag: TAG,
    result: z.object({ rules: z.array(z.never()) }),
    async handler(ctx) {
      await requireBucket(ctx);
      return successResponse({ rules: [] });
    },
  }),
  defineRoute({
    method: 'GET',
    path: `${R2_BUCKETS}/:bucket/sippy`,
    operationId: 'r2-bucket-sippy-get',
    summary: "The bucket's Sippy migration: off (edgeport has no Sippy)",
    tag: TAG,
    result: z.object({ enabled: z.literal(false) }),
    async handler(ctx) {
      await requireBucket(ctx);
      return successResponse({ enabled: false });
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: `${R2_BUCKETS}/:bucket/sippy`,
    operationId: 'r2-bucket-sippy-delete',
    summary: "Turn the bucket's Sippy migration off: it is",
    tag: TAG,
    result: z.object({ enabled: z.literal(false) }),
    async handler(ctx) {
      await requireBucket(ctx);
      return successResponse({ enabled: false });
    },
  }),
  defineRoute({
    method: 'GET',
    path: NOTIFICATIONS,
    operationId: 'r2-event-notifications-list',
    summary: "The bucket's event notification configuration: no queues (edgeport has no Queues)",
    tag: TAG,
    result: z.object({ bucketName: z.string(), queues: z.array(z.never()) }),
    async handler(ctx) {
      return successResponse({ bucketName: await requireBucket(ctx), queues: [] });
    },
  }),
  defineRoute({
    method: 'GET',
    path: `${NOTIFICATIONS}/queues/:queue_id`,
    operationId: 'r2-event-notifications-get',
    summary: "One queue's notification rules of the bucket: there are none",
    tag: TAG,
    async handler(ctx) {
      await requireBucket(ctx);
      throw objectNotFound(ctx.path);
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: `${NOTIFICATIONS}/queues/:queue_id`,
    operationId: 'r2-event-notifications-delete',
    summary: "Delete one queue's notification rules of the bucket: there are none",
    tag: TAG,
    async handler(ctx) {
      await requireBucket(ctx);
      throw objectNotFound(ctx.path);
    },
  }),
];
