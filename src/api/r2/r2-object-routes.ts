/**
 * Objects of an R2 bucket over the platform's paths,
 * `/accounts/:account_id/r2/buckets/:bucket/objects[/<key>]`: list, put (the request body streamed to the
 * store with its Content-Type, Content-Length and the other standard headers as HTTP metadata,
 * `cf-r2-storage-class` as its storage class), get (the bytes streamed back with their metadata
 * headers), delete. The key is the rest of the path: wrangler sends `a/b/c.txt` with its slashes,
 * the official SDK percent-encodes them; both name the same key.
 *
 * By design: these answers come from the dashboard's origin (the API port), so an object is served
 * with `Content-Security-Policy: sandbox` and `X-Content-Type-Options: nosniff`: an uploaded HTML
 * page renders, if a browser opens it, without scripts and without the dashboard's cookies.
 */
import { z } from 'zod';
import { toStoreHttpMetadata, writeHttpMetadata } from '../../store/binding/http-metadata.ts';
import { StoreError } from '../../store/engine/errors.ts';
import { successResponse } from '../envelope.ts';
import { defineRoute, type ApiRoute } from '../route.ts';
import { httpMetadataAsHeaderBytes } from '../../store/engine/http-metadata-text.ts';
import { listingResultInfo, metadataFromHeaders, objectResult, streamedBody, toObjectJson, toWebStream } from '../store/store-schema.ts';
import { R2_BUCKETS } from './r2-bucket-routes.ts';
import { listR2ObjectsQuery, r2ObjectResult, r2Store, storageClassHeader, toR2ObjectJson, withR2Errors } from './r2-schema.ts';
import { validateQuery } from '../validation.ts';

const TAG = 'R2';
/** `{.+}`: the key runs to the end of the path, slashes included. */
const OBJECT = `${R2_BUCKETS}/:bucket/objects/:key{.+}`;

export const R2_OBJECT_ROUTES: ApiRoute[] = [
  defineRoute({
    method: 'GET',
    path: `${R2_BUCKETS}/:bucket/objects`,
    operationId: 'r2-objects-list',
    tag: TAG,
    summary:
      "List objects (the SDK's r2.buckets.objects.list): by prefix, after a key, folded at a delimiter (result_info.delimited), a page at a time (result_info.cursor)",
    query: listR2ObjectsQuery,
    result: z.array(r2ObjectResult),
    resultInfo: 'cursor',
    async handler(ctx) {
      const store = r2Store(ctx);
      const q = validateQuery(listR2ObjectsQuery, ctx.query);
      const listing = await withR2Errors(() =>
        store.list(ctx.params.bucket!, {
          limit: q.per_page,
          include: { httpMetadata: true, customMetadata: true },
          ...(q.prefix ? { prefix: q.prefix } : {}),
          ...(q.delimiter ? { delimiter: q.delimiter } : {}),
          ...(q.start_after ? { startAfter: q.start_after } : {}),
          ...(q.cursor ? { cursor: q.cursor } : {}),
        }),
      );
      return successResponse(listing.objects.map(toR2ObjectJson), { resultInfo: listingResultInfo(listing, q.per_page) });
    },
  }),
  defineRoute({
    method: 'PUT',
    path: OBJECT,
    operationId: 'r2-objects-put',
    tag: TAG,
    summary:
      'Put an object: the request body, streamed; Content-Type and the other standard headers become its HTTP metadata, cf-r2-storage-class its storage class',
    rawBody: { contentType: 'application/octet-stream', description: "The object's bytes (any content type)" },
    result: objectResult,
    async handler(ctx) {
      const store = r2Store(ctx);
      const storageClass = storageClassHeader(ctx);
      const { httpMetadata, customMetadata } = metadataFromHeaders(ctx.request.headers);
      const meta = await withR2Errors(() =>
        store.put(ctx.params.bucket!, ctx.params.key!, streamedBody(ctx.request), {
          httpMetadata,
          customMetadata,
          ...(storageClass === undefined ? {} : { storageClass }),
        }),
      );
      // put() resolves null only when a condition fails, and none is given.
      if (!meta) throw new StoreError('STORE_PRECONDITION_FAILED');
      return successResponse(toObjectJson(meta));
    },
  }),
  defineRoute({
    method: 'GET',
    path: OBJECT,
    operationId: 'r2-objects-get',
    tag: TAG,
    summary: 'Get an object: its bytes, streamed, with Content-Type, Content-Length, ETag, Last-Modified and its other HTTP metadata',
    rawResult: { contentType: 'application/octet-stream', description: "The object's bytes" },
    async handler(ctx) {
      const store = r2Store(ctx);
      const result = await withR2Errors(() => store.get(ctx.params.bucket!, ctx.params.key!));
      if (!result?.body) throw new StoreError('STORE_NO_SUCH_KEY');
      const { meta } = result;
      const headers = new Headers();
      writeHttpMetadata(toStoreHttpMetadata(httpMetadataAsHeaderBytes(meta.httpMetadata)), headers);
      if (!headers.has('content-type')) headers.set('content-type', 'application/octet-stream');
      headers.set('content-length', String(meta.size));
      headers.set('etag', `"${meta.etag}"`);
      headers.set('last-modified', new Date(meta.uploaded).toUTCString());
      headers.set('x-content-type-options', 'nosniff');
      headers.set('content-security-policy', "sandbox; default-src 'none'");
      return new Response(toWebStream(result.body.stream()), { status: 200, headers });
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: OBJECT,
    operationId: 'r2-objects-delete',
    tag: TAG,
    summary: 'Delete an object (a missing key is not an error)',
    result: z.object({}),
    async handler(ctx) {
      const store = r2Store(ctx);
      await withR2Errors(() => store.delete(ctx.params.bucket!, [ctx.params.key!]));
      return successResponse({});
    },
  }),
];
