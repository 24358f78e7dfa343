/**
 * A bucket's CORS rules, under `/accounts/:account_id/store/buckets/:bucket/cors`: read, replace,
 * delete. The same rules the S3 API's Put/Get/DeleteBucketCors store, in the real platform's JSON
 * shape for bucket CORS (`allowed.origins/methods/headers`, `exposeHeaders`, `maxAgeSeconds`).
 * Validation is the store's, so both faces accept and refuse the same rules. A bucket without
 * rules reads as `{ rules: [] }` (an edgeport choice: these routes are edgeport's own, for the
 * dashboard, and GET then always answers what the last PUT set).
 */
import { z } from 'zod';
import type { CorsMethod, CorsRule } from '../../store/engine/cors.ts';
import { successResponse } from '../envelope.ts';
import { defineRoute, type ApiRoute } from '../route.ts';
import { BUCKETS } from './bucket-routes.ts';
import { requireStore } from './store-schema.ts';

const TAG = 'Object store';
const CORS = `${BUCKETS}/:bucket/cors`;

/** Strings and lists are bounded here; what S3 refuses (methods, wildcards, 100 rules, 64 KiB) the store refuses, with S3's words. */
const text = z.string().max(4096);
export const corsRuleJson = z.strictObject({
  id: z.string().max(255).optional(),
  allowed: z.strictObject({
    origins: z.array(text).min(1).max(1000),
    methods: z.array(z.string().max(16)).min(1).max(1000).describe('GET, PUT, POST, DELETE, HEAD'),
    headers: z.array(text).max(1000).optional().describe('Request headers a preflight may ask for; one * wildcard each'),
  }),
  exposeHeaders: z.array(text).max(1000).optional(),
  maxAgeSeconds: z
    .number()
    .int()
    .min(0)
    .max(2 ** 31 - 1)
    .optional(),
});
export const corsBody = z.strictObject({ rules: z.array(corsRuleJson).max(1000).describe('An empty list removes the rules, as DELETE does') });
export type CorsRuleJson = z.infer<typeof corsRuleJson>;

/** A rule in the platform's JSON shape as the store keeps it (the R2 routes use the same shape). */
export function corsRuleFromJson(rule: CorsRuleJson): CorsRule {
  return {
    ...(rule.id !== undefined ? { id: rule.id } : {}),
    allowedOrigins: rule.allowed.origins,
    allowedMethods: rule.allowed.methods as CorsMethod[],
    allowedHeaders: rule.allowed.headers ?? [],
    exposeHeaders: rule.exposeHeaders ?? [],
    ...(rule.maxAgeSeconds !== undefined ? { maxAgeSeconds: rule.maxAgeSeconds } : {}),
  };
}

export function corsRuleToJson(rule: CorsRule): CorsRuleJson {
  return {
    ...(rule.id !== undefined ? { id: rule.id } : {}),
    allowed: { origins: rule.allowedOrigins, methods: rule.allowedMethods, ...(rule.allowedHeaders.length > 0 ? { headers: rule.allowedHeaders } : {}) },
    ...(rule.exposeHeaders.length > 0 ? { exposeHeaders: rule.exposeHeaders } : {}),
    ...(rule.maxAgeSeconds !== undefined ? { maxAgeSeconds: rule.maxAgeSeconds } : {}),
  };
}

export const CORS_ROUTES: ApiRoute[] = [
  defineRoute({
    method: 'GET',
    path: CORS,
    operationId: 'store-bucket-cors-get',
    summary: "Get a bucket's CORS rules",
    tag: TAG,
    result: corsBody,
    async handler(ctx) {
      // No rules is an empty list (what PUT with `rules: []` leaves), not an error: the dashboard reads it on every bucket page.
      const rules = await requireStore(ctx).getBucketCors(ctx.params.bucket!);
      return successResponse({ rules: (rules ?? []).map(corsRuleToJson) });
    },
  }),
  defineRoute<z.infer<typeof corsBody>>({
    method: 'PUT',
    path: CORS,
    operationId: 'store-bucket-cors-put',
    summary: "Replace a bucket's CORS rules",
    tag: TAG,
    body: { schema: corsBody, invalid: 'API_STORE_INVALID' },
    result: corsBody,
    async handler(ctx) {
      const rules = ctx.body.rules.map(corsRuleFromJson);
      await requireStore(ctx).putBucketCors(ctx.params.bucket!, rules.length === 0 ? null : rules);
      return successResponse({ rules: rules.map(corsRuleToJson) });
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: CORS,
    operationId: 'store-bucket-cors-delete',
    summary: "Delete a bucket's CORS rules",
    tag: TAG,
    result: z.object({}),
    async handler(ctx) {
      await requireStore(ctx).putBucketCors(ctx.params.bucket!, null);
      return successResponse({});
    },
  }),
];
