/**
 * An R2 bucket's CORS rules over the platform's paths, `/accounts/:account_id/r2/buckets/:bucket/cors`:
 * read, replace, delete (the SDK's `r2.buckets.cors`, wrangler's `r2 bucket cors`). R2's JSON shape
 * (`allowed.origins/methods/headers`, `exposeHeaders`, `maxAgeSeconds`, `id`), the same schema and
 * the same stored rules as the dashboard's store CORS routes and S3's Put/Get/DeleteBucketCors.
 *
 * Unlike the dashboard's route, reading the rules of a bucket without any is 404 / 10059, as R2
 * answers (wrangler prints that error for `cors list` on such a bucket).
 */
import { z } from 'zod';
import { successResponse } from '../envelope.ts';
import { ApiError } from '../errors.ts';
import { defineRoute, type ApiRoute } from '../route.ts';
import { corsBody, corsRuleFromJson, corsRuleToJson } from '../store/cors-routes.ts';
import { R2_BUCKETS } from './r2-bucket-routes.ts';
import { r2Store, withR2Errors } from './r2-schema.ts';

const TAG = 'R2';
const CORS = `${R2_BUCKETS}/:bucket/cors`;

export const R2_CORS_ROUTES: ApiRoute[] = [
  defineRoute({
    method: 'GET',
    path: CORS,
    operationId: 'r2-bucket-cors-get',
    summary: "Get an R2 bucket's CORS rules (404 / 10059 when it has none)",
    tag: TAG,
    result: corsBody,
    async handler(ctx) {
      const store = r2Store(ctx);
      const rules = await withR2Errors(() => store.getBucketCors(ctx.params.bucket!));
      if (rules === null) throw new ApiError('API_CORS_NOT_FOUND');
      return successResponse({ rules: rules.map(corsRuleToJson) });
    },
  }),
  defineRoute<z.infer<typeof corsBody>>({
    method: 'PUT',
    path: CORS,
    operationId: 'r2-bucket-cors-put',
    summary: "Replace an R2 bucket's CORS rules (any Content-Type)",
    tag: TAG,
    body: { schema: corsBody, invalid: 'API_STORE_INVALID', anyMediaType: true },
    result: z.object({}),
    async handler(ctx) {
      const store = r2Store(ctx);
      const rules = ctx.body.rules.map(corsRuleFromJson);
      await withR2Errors(() => store.putBucketCors(ctx.params.bucket!, rules.length === 0 ? null : rules));
      return successResponse({});
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: CORS,
    operationId: 'r2-bucket-cors-delete',
    summary: "Delete an R2 bucket's CORS rules",
    tag: TAG,
    result: z.object({}),
    async handler(ctx) {
      const store = r2Store(ctx);
      await withR2Errors(() => store.putBucketCors(ctx.params.bucket!, null));
      return successResponse({});
    },
  }),
];
