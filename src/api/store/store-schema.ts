/**
 * Shapes of the object store routes (an edgeport extension for the dashboard): buckets, objects and
 * multipart uploads as REST JSON (snake_case), converted from the engine's types; object metadata
 * from request headers; request bodies as the async iterables the engine streams from.
 */
import { z } from 'zod';
import {
  STORAGE_CLASSES,
  type BodyInput,
  type BucketInfo,
  type HttpMetadata,
  type ListedObject,
  type ListResult,
  type ObjectMeta,
  type StorageClass,
} from '../../store/engine/types.ts';
import { accountStore } from '../../store/engine/account-store.ts';
import type { StoreEngine } from '../../store/engine/store-engine.ts';
import { toHttpMetadata } from '../../store/binding/http-metadata.ts';
import { headerText } from '../../core/http/header-text.ts';
import { httpMetadataAsText } from '../../store/engine/http-metadata-text.ts';
import type { CursorInfo } from '../envelope.ts';
import { ApiError } from '../errors.ts';
import { requireOwnAccount } from '../accounts/account-routes.ts';
import type { RouteContext } from '../route.ts';

/** Headers that carry custom metadata on a PUT or an upload's creation: `x-edgeport-meta-<name>: <value>`. */
export const CUSTOM_METADATA_HEADER = 'x-edgeport-meta-';

export const storageClass = z.enum(STORAGE_CLASSES as unknown as [StorageClass, ...StorageClass[]]);

export const bucketResult = z.object({ name: z.string(), creation_date: z.string(), storage_class: storageClass });

const httpMetadataJson = z.object({
  content_type: z.string().optional(),
  content_language: z.string().optional(),
  content_disposition: z.string().optional(),
  content_encoding: z.string().optional(),
  cache_control: z.string().optional(),
  cache_expiry: z.string().optional().describe('ISO 8601'),
});

export const objectResult = z.object({
  key: z.string(),
  version: z.string(),
  size: z.number().int(),
  etag: z.string(),
  uploaded: z.string().describe('ISO 8601'),
  storage_class: storageClass,
  http_metadata: httpMetadataJson,
  custom_metadata: z.record(z.string(), z.string()),
});

export const createBucketBody = z.strictObject({
  name: z.string().describe('3-63 characters of a-z, 0-9 and -, starting and ending with a letter or digit'),
  storage_class: storageClass.optional().describe('Default storage class of new objects; default Standard'),
});

export const createUploadBody = z.strictObject({
  http_metadata: z
    .strictObject({
      content_type: z.string().max(1024).optional(),
      content_language: z.string().max(1024).optional(),
      content_disposition: z.string().max(1024).optional(),
      content_encoding: z.string().max(1024).optional(),
      cache_control: z.string().max(1024).optional(),
    })
    .optional(),
  custom_metadata: z.record(z.string(), z.string()).optional(),
  storage_class: storageClass.optional(),
});

export const completeUploadBody = z.strictObject({
  parts: z
    .array(z.strictObject({ part_number: z.number().int().min(1).max(10_000), etag: z.string().min(1).max(200) }))
    .min(1)
    .max(10_000),
});

export const listObjectsQuery = z.object({
  prefix: z.string().optional(),
  delimiter: z.string().max(1024).optional().describe('Usually "/": keys below the next delimiter are folded into result_info.delimited'),
  cursor: z.string().optional(),
  per_page: z.coerce.number().int().min(1).max(1000).default(1000),
});

export function toBucketJson(bucket: BucketInfo): z.infer<typeof bucketResult> {
  return { name: bucket.name, creation_date: new Date(bucket.created).toISOString(), storage_class: bucket.storageClass };
}

export function toObjectJson(object: ObjectMeta | ListedObject): z.infer<typeof objectResult> {
  const http = object.httpMetadata ?? {};
  return {
    key: object.key,
    version: object.version,
    size: object.size,
    etag: object.etag,
    uploaded: new Date(object.uploaded).toISOString(),
    storage_class: object.storageClass,
    http_metadata: {
      ...(http.contentType === undefined ? {} : { content_type: http.contentType }),
      ...(http.contentLanguage === undefined ? {} : { content_language: http.contentLanguage }),
      ...(http.contentDisposition === undefined ? {} : { content_disposition: http.contentDisposition }),
      ...(http.contentEncoding === undefined ? {} : { content_encoding: http.contentEncoding }),
      ...(http.cacheControl === undefined ? {} : { cache_control: http.cacheControl }),
      ...(http.cacheExpiry === undefined ? {} : { cache_expiry: new Date(http.cacheExpiry).toISOString() }),
    },
    custom_metadata: object.customMetadata ?? {},
  };
}

export function fromHttpMetadataJson(json: z.infer<typeof createUploadBody>['http_metadata']): HttpMetadata {
  const out: HttpMetadata = {};
  if (json?.content_type !== undefined) out.contentType = json.content_type;
  if (json?.content_language !== undefined) out.contentLanguage = json.content_language;
  if (json?.content_disposition !== undefined) out.contentDisposition = json.content_disposition;
  if (json?.content_encoding !== undefined) out.contentEncoding = json.content_encoding;
  if (json?.cache_control !== undefined) out.cacheControl = json.cache_control;
  return out;
}

/**
 * HTTP metadata (the standard headers, as a script's `put` reads Headers) and custom metadata of a
 * PUT. A value beyond ASCII is kept as the text its bytes spell (core/http/header-text.ts: UTF-8,
 * else one character a byte), as the S3 API keeps it, so a script reads what was sent.
 */
export function metadataFromHeaders(headers: Headers): { httpMetadata: HttpMetadata; customMetadata: Record<string, string> } {
  const customMetadata: Record<string, string> = {};
  headers.forEach((value, name) => {
    if (name.startsWith(CUSTOM_METADATA_HEADER) && name.length > CUSTOM_METADATA_HEADER.length)
      customMetadata[name.slice(CUSTOM_METADATA_HEADER.length)] = headerText(value);
  });
  return { httpMetadata: httpMetadataAsText(toHttpMetadata(headers) ?? {}), customMetadata };
}

/** The engine, once the `:account_id` of the path is the caller's own. */
/** The account's own view of the object store (its buckets only), once the path's account is checked to be the caller's. */
export function requireStore(ctx: RouteContext<unknown>): StoreEngine {
  const account = requireOwnAccount(ctx);
  if (!ctx.deps.store) throw new ApiError('API_STORE_INVALID', { message: 'The object store is not available on this server.' });
  return accountStore(ctx.deps.store, account.id);
}

/** A request body as the engine reads it: a stream (cancelled if the engine stops early), with its length when declared. */
export function streamedBody(request: Request): BodyInput {
  if (request.body === null) return new Uint8Array(0);
  const declared = request.headers.get('content-length');
  const length = declared !== null && /^\d{1,15}$/.test(declared) ? Number(declared) : undefined;
  return { stream: request.body, ...(length === undefined ? {} : { length }) };
}

/** An engine body as a Web stream, read only as fast as the client takes it (pull). */
export function toWebStream(chunks: AsyncIterable<Uint8Array>): ReadableStream<Uint8Array> {
  const iterator = chunks[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await iterator.next();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
    async cancel() {
      await iterator.return?.();
    },
  });
}

/** A listing's `result_info`, the same on the store's and the R2 paths: the cursor only while more remain. */
export function listingResultInfo(listing: ListResult, perPage: number): CursorInfo {
  return {
    count: listing.objects.length,
    per_page: perPage,
    is_truncated: listing.truncated,
    delimited: listing.delimitedPrefixes,
    ...(listing.truncated && listing.cursor ? { cursor: listing.cursor } : {}),
  };
}
