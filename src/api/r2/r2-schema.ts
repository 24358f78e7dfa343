/**
 * Shapes of the R2 routes (`/accounts/:account_id/r2/...`, the paths the official SDK and wrangler
 * call): buckets as R2 answers them (`creation_date`, `location`, `storage_class`), the create body
 * in R2's camelCase (`storageClass`, `locationHint`), and the account's view of the store behind
 * them. The store itself is the one the dashboard's store routes, the S3 API and bindings use.
 */
import { z } from 'zod';
import { StoreError } from '../../store/engine/errors.ts';
import type { BucketInfo } from '../../store/engine/types.ts';
import type { StoreEngine } from '../../store/engine/store-engine.ts';
import { ApiError } from '../errors.ts';
import type { RouteContext } from '../route.ts';
import { requireStore, storageClass } from '../store/store-schema.ts';

/** R2's location hints. edgeport stores every bucket on this server; the hint is only echoed. */
export const LOCATION_HINTS = ['apac', 'eeur', 'enam', 'weur', 'wnam', 'oc'] as const;

export const r2BucketResult = z.object({
  name: z.string(),
  creation_date: z.string().describe('ISO 8601'),
  location: z.enum(LOCATION_HINTS).optional().describe('Only in the answer to the create that gave locationHint'),
  storage_class: storageClass,
  jurisdiction: z.literal('default'),
});

export const createR2BucketBody = z.strictObject({
  name: z.string().max(1024).describe('3-63 characters of a-z, 0-9 and -, starting and ending with a letter or digit'),
  storageClass: storageClass.optional().describe('Default storage class of new objects; default Standard'),
  // wrangler passes --location as typed; R2 takes it in either case.
  locationHint: z.string().max(16).toLowerCase().pipe(z.enum(LOCATION_HINTS)).optional(),
});

export const listR2BucketsQuery = z.object({
  name_contains: z.string().max(1024).optional(),
  start_after: z.string().max(1024).optional(),
  cursor: z.string().max(2048).optional().describe('result_info.cursor of the previous page'),
  per_page: z.coerce.number().int().min(1).max(1000).default(1000),
  direction: z.enum(['asc', 'desc']).default('asc'),
  order: z.literal('name').optional(),
});

export function toR2BucketJson(bucket: BucketInfo, location?: (typeof LOCATION_HINTS)[number]): z.infer<typeof r2BucketResult> {
  return {
    name: bucket.name,
    creation_date: new Date(bucket.created).toISOString(),
    ...(location === undefined ? {} : { location }),
    storage_class: bucket.storageClass,
    jurisdiction: 'default',
  };
}

/**
 * The account's view of the store for an R2 route: the path's account is the caller's, and the
 * jurisdiction asked for (`cf-r2-jurisdiction`, wrangler's `--jurisdiction`) is the only one this
 * server has. Refusing others beats answering from the default one: the user asked for data kept
 * elsewhere.
 */
export function r2Store(ctx: RouteContext<unknown>): StoreEngine {
  const store = requireStore(ctx);
  const jurisdiction = ctx.request.headers.get('cf-r2-jurisdiction');
  if (jurisdiction !== null && jurisdiction !== 'default') {
    const shown = jurisdiction.slice(0, 64);
    throw new ApiError('API_JURISDICTION_UNSUPPORTED', {
      message: `Jurisdiction '${shown}' is not available on this server: its buckets are all in the default jurisdiction; leave out cf-r2-jurisdiction (wrangler's --jurisdiction) or send 'default'`,
    });
  }
  return store;
}

/** Runs a store call, answering an invalid bucket name with R2's 10005 (the store routes keep 1002). */
export async function withR2Errors<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof StoreError && error.code === 'STORE_INVALID_BUCKET_NAME') throw new ApiError('API_BUCKET_NAME_INVALID', { message: error.message });
    throw error;
  }
}
