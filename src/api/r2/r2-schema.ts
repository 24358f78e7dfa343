/**
 * Shapes of the R2 routes (`/accounts/:account_id/r2/...`, the paths the official SDK and wrangler
 * call): buckets as R2 answers them (`creation_date`, `location`, `storage_class`), the create body
 * in R2's camelCase (`storageClass`, `locationHint`), and the account's view of the store behind
 * them. The store itself is the one the dashboard's store routes, the S3 API and bindings use.
 */
import { z } from 'zod';
import { StoreError } from '../../store/engine/errors.ts';
import { STORAGE_CLASSES, type BucketInfo, type ListedObject, type StorageClass } from '../../store/engine/types.ts';
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

export const listR2ObjectsQuery = z.object({
  prefix: z.string().max(1024).optional(),
  delimiter: z.string().max(1024).optional().describe('Usually "/": keys below the next delimiter are folded into result_info.delimited'),
  start_after: z.string().max(1024).optional(),
  cursor: z.string().max(2048).optional().describe('result_info.cursor of the previous page'),
  per_page: z.coerce.number().int().min(1).max(1000).default(1000),
});

/** An object as R2's JSON answers list it: camelCase HTTP metadata, the raw hex ETag. */
export const r2ObjectResult = z.object({
  key: z.string(),
  etag: z.string(),
  last_modified: z.string().describe('ISO 8601'),
  size: z.number().int(),
  storage_class: storageClass,
  http_metadata: z.object({
    contentType: z.string().optional(),
    contentLanguage: z.string().optional(),
    contentDisposition: z.string().optional(),
    contentEncoding: z.string().optional(),
    cacheControl: z.string().optional(),
    cacheExpiry: z.string().optional(),
  }),
  custom_metadata: z.record(z.string(), z.string()),
});

export function toR2ObjectJson(object: ListedObject): z.infer<typeof r2ObjectResult> {
  const { cacheExpiry, ...http } = object.httpMetadata ?? {};
  return {
    key: object.key,
    etag: object.etag,
    last_modified: new Date(object.uploaded).toISOString(),
    size: object.size,
    storage_class: object.storageClass,
    http_metadata: { ...http, ...(cacheExpiry === undefined ? {} : { cacheExpiry: new Date(cacheExpiry).toISOString() }) },
    custom_metadata: object.customMetadata ?? {},
  };
}

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

/** The `cf-r2-storage-class` header (an object's class on put, a bucket's default on PATCH), checked. */
export function storageClassHeader(ctx: RouteContext<unknown>): StorageClass | undefined {
  const value = ctx.request.headers.get('cf-r2-storage-class');
  if (value === null) return undefined;
  if (!(STORAGE_CLASSES as readonly string[]).includes(value)) {
    throw new ApiError('API_STORE_INVALID', {
      message: `'${value.slice(0, 64)}' is not a valid value for cf-r2-storage-class because it must be one of ${STORAGE_CLASSES.map((c) => JSON.stringify(c)).join(', ')}`,
    });
  }
  return value as StorageClass;
}
