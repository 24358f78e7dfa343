/**
 * Multipart uploads of the object store (an edgeport extension for the dashboard), under
 * `/accounts/:account_id/store/buckets/:bucket/objects/:key/uploads`: create, upload a part (the
 * request body, streamed), complete, abort. The store's rules apply: parts other than the last
 * are at least 5 MiB and of one size, the last no larger; uploads expire after 7 days. The same
 * uploads the S3 API and script bindings see.
 */
import { z } from 'zod';
import { ApiError } from '../errors.ts';
import { successResponse } from '../envelope.ts';
import { defineRoute, type ApiRoute, type RouteContext } from '../route.ts';
import { OBJECTS } from './object-routes.ts';
import { completeUploadBody, createUploadBody, fromHttpMetadataJson, objectResult, requireStore, streamedBody, toObjectJson } from './store-schema.ts';

const TAG = 'Object store';
const UPLOADS = `${OBJECTS}/:key/uploads`;

export const UPLOAD_ROUTES: ApiRoute[] = [
  defineRoute<z.infer<typeof createUploadBody>>({
    method: 'POST',
    path: UPLOADS,
    operationId: 'store-uploads-create',
    summary: 'Start a multipart upload of the key',
    tag: TAG,
    body: { schema: createUploadBody, invalid: 'API_STORE_INVALID', optional: true },
    result: z.object({ key: z.string(), upload_id: z.string() }),
    async handler(ctx) {
      const store = requireStore(ctx);
      const { http_metadata, custom_metadata, storage_class } = ctx.body;
      const uploadId = await store.createMultipartUpload(ctx.params.bucket!, ctx.params.key!, {
        httpMetadata: fromHttpMetadataJson(http_metadata),
        ...(custom_metadata ? { customMetadata: custom_metadata } : {}),
        ...(storage_class ? { storageClass: storage_class } : {}),
      });
      return successResponse({ key: ctx.params.key!, upload_id: uploadId });
    },
  }),
  defineRoute({
    method: 'PUT',
    path: `${UPLOADS}/:upload_id/parts/:part_number`,
    operationId: 'store-uploads-part',
    tag: TAG,
    summary: "Upload one part (1-10000): the request body, streamed; answers the part's etag for completion",
    rawBody: { contentType: 'application/octet-stream', description: "The part's bytes" },
    result: z.object({ part_number: z.number().int(), etag: z.string() }),
    async handler(ctx) {
      const store = requireStore(ctx);
      const part = await store.uploadPart(ctx.params.bucket!, ctx.params.key!, ctx.params.upload_id!, partNumber(ctx), streamedBody(ctx.request));
      return successResponse({ part_number: part.partNumber, etag: part.etag });
    },
  }),
  defineRoute<z.infer<typeof completeUploadBody>>({
    method: 'POST',
    path: `${UPLOADS}/:upload_id/complete`,
    operationId: 'store-uploads-complete',
    tag: TAG,
    summary: 'Complete an upload from its parts (part numbers and etags); the object is readable at once',
    body: { schema: completeUploadBody, invalid: 'API_STORE_INVALID' },
    result: objectResult,
    async handler(ctx) {
      const store = requireStore(ctx);
      const parts = ctx.body.parts.map((part) => ({ partNumber: part.part_number, etag: part.etag.replaceAll('"', '') }));
      const meta = await store.completeMultipartUpload(ctx.params.bucket!, ctx.params.key!, ctx.params.upload_id!, parts);
      return successResponse(toObjectJson(meta));
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: `${UPLOADS}/:upload_id`,
    operationId: 'store-uploads-abort',
    summary: 'Abort an upload and drop its parts',
    tag: TAG,
    result: z.object({ upload_id: z.string() }),
    async handler(ctx) {
      await requireStore(ctx).abortMultipartUpload(ctx.params.bucket!, ctx.params.key!, ctx.params.upload_id!);
      return successResponse({ upload_id: ctx.params.upload_id! });
    },
  }),
];

function partNumber(ctx: RouteContext<unknown>): number {
  const text = ctx.params.part_number ?? '';
  const n = /^\d{1,5}$/.test(text) ? Number(text) : NaN;
  if (!(n >= 1 && n <= 10_000)) {
    throw new ApiError('API_STORE_INVALID', { message: `'${text}' is not a valid value for part_number because it must be an integer from 1 to 10000` });
  }
  return n;
}
