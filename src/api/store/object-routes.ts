/**
 * Objects of a bucket (an edgeport extension for the dashboard), under
 * `/accounts/:account_id/store/buckets/:bucket/objects`: list by prefix and delimiter with a
 * cursor; download one (its bytes, streamed); put one (the request body, streamed); delete one.
 * Keys travel percent-encoded in one path segment (`/` as `%2F`), as in the real R2 REST API.
 *
 * By design: a download is the stored bytes as they are (no Content-Encoding, so a gzipped log
 * batch arrives gzipped), always `Content-Disposition: attachment` and sandboxed by
 * `Content-Security-Policy`, because it is served from the dashboard's own origin: an uploaded
 * HTML page must not run as the dashboard. `result_info.delimited` holds the folded prefixes with
 * their trailing delimiter (S3's form), so a prefix can be passed back as `prefix` as it is.
 */
import { z } from 'zod';
import { headerBytes } from '../../core/http/header-text.ts';
import { StoreError } from '../../store/engine/errors.ts';
import { successResponse } from '../envelope.ts';
import { defineRoute, type ApiRoute } from '../route.ts';
import { validateQuery } from '../validation.ts';
import { BUCKETS } from './bucket-routes.ts';
import {
  CUSTOM_METADATA_HEADER,
  listingResultInfo,
  listObjectsQuery,
  metadataFromHeaders,
  objectResult,
  requireStore,
  streamedBody,
  toObjectJson,
  toWebStream,
} from './store-schema.ts';

const TAG = 'Object store';
export const OBJECTS = `${BUCKETS}/:bucket/objects`;

export const OBJECT_ROUTES: ApiRoute[] = [
  defineRoute({
    method: 'GET',
    path: OBJECTS,
    operationId: 'store-objects-list',
    tag: TAG,
    summary: 'List objects: by prefix, folded at a delimiter (result_info.delimited), a page at a time (result_info.cursor)',
    query: listObjectsQuery,
    result: z.array(objectResult),
    resultInfo: 'cursor',
    async handler(ctx) {
      const store = requireStore(ctx);
      const q = validateQuery(listObjectsQuery, ctx.query);
      const listing = await store.list(ctx.params.bucket!, {
        limit: q.per_page,
        include: { httpMetadata: true, customMetadata: true },
        ...(q.prefix ? { prefix: q.prefix } : {}),
        ...(q.delimiter ? { delimiter: q.delimiter } : {}),
        ...(q.cursor ? { cursor: q.cursor } : {}),
      });
      return successResponse(listing.objects.map(toObjectJson), { resultInfo: listingResultInfo(listing, q.per_page) });
    },
  }),
  defineRoute({
    method: 'GET',
    path: `${OBJECTS}/:key`,
    operationId: 'store-objects-download',
    tag: TAG,
    summary: 'Download an object: its bytes as an attachment, with its Content-Type, ETag and Last-Modified',
    rawResult: { contentType: 'application/octet-stream', description: "The object's bytes" },
    async handler(ctx) {
      const store = requireStore(ctx);
      const key = ctx.params.key!;
      const result = await store.get(ctx.params.bucket!, key);
      if (!result?.body) throw new StoreError('STORE_NO_SUCH_KEY');
      const { meta } = result;
      const name = key.slice(key.lastIndexOf('/') + 1) || 'download';
      const headers = new Headers({
        'content-type': headerBytes(meta.httpMetadata.contentType ?? 'application/octet-stream'),
        'content-length': String(meta.size),
        'content-disposition': `attachment; filename="${name.replace(/[^\x20-\x7e]|["\\]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(name)}`,
        etag: `"${meta.etag}"`,
        'last-modified': new Date(meta.uploaded).toUTCString(),
        'cache-control': 'private, no-cache',
        'x-content-type-options': 'nosniff',
        'content-security-policy': "sandbox; default-src 'none'",
      });
      return new Response(toWebStream(result.body.stream()), { status: 200, headers });
    },
  }),
  defineRoute({
    method: 'PUT',
    path: `${OBJECTS}/:key`,
    operationId: 'store-objects-put',
    tag: TAG,
    summary: `Put an object: the request body, streamed; Content-Type and the other standard headers become its HTTP metadata, ${CUSTOM_METADATA_HEADER}<name> headers its custom metadata`,
    rawBody: { contentType: 'application/octet-stream', description: "The object's bytes (any content type)" },
    result: objectResult,
    async handler(ctx) {
      const store = requireStore(ctx);
      const { httpMetadata, customMetadata } = metadataFromHeaders(ctx.request.headers);
      const meta = await store.put(ctx.params.bucket!, ctx.params.key!, streamedBody(ctx.request), { httpMetadata, customMetadata });
      // put() resolves null only when a condition fails, and none is given.
      if (!meta) throw new StoreError('STORE_PRECONDITION_FAILED');
      return successResponse(toObjectJson(meta));
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: `${OBJECTS}/:key`,
    operationId: 'store-objects-delete',
    tag: TAG,
    summary: 'Delete an object (a missing key is not an error, as in the store)',
    result: z.object({ key: z.string() }),
    async handler(ctx) {
      await requireStore(ctx).delete(ctx.params.bucket!, [ctx.params.key!]);
      return successResponse({ key: ctx.params.key! });
    },
  }),
];
