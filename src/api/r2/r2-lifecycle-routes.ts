/**
 * An R2 bucket's lifecycle rules over the platform's paths, `/accounts/:account_id/r2/buckets/:bucket/lifecycle`:
 * read and replace (the SDK's `r2.buckets.lifecycle`, wrangler's `r2 bucket lifecycle list|add|remove|set`,
 * which read the rules, change the list and send it back whole). R2's JSON shape: `conditions.prefix`,
 * `deleteObjectsTransition` and `storageClassTransitions` on an `Age` (`maxAge` in seconds) or a
 * `Date`, `abortMultipartUploadsTransition` on an `Age`. The same rules S3's
 * Put/GetBucketLifecycleConfiguration and the dashboard's bucket page set; validation is the store's.
 *
 * By design: a bucket without rules reads as `{ rules: [] }`. R2 shows its built-in rule (uploads
 * aborted after 7 days) there; edgeport aborts uploads after 7 days whatever the rules say, so it
 * is not listed as a rule that could be removed.
 */
import { z } from 'zod';
import type { LifecycleCondition, LifecycleRule } from '../../store/engine/lifecycle.ts';
import { successResponse } from '../envelope.ts';
import { defineRoute, type ApiRoute } from '../route.ts';
import { R2_BUCKETS } from './r2-bucket-routes.ts';
import { r2Store, withR2Errors } from './r2-schema.ts';

const TAG = 'R2';
const LIFECYCLE = `${R2_BUCKETS}/:bucket/lifecycle`;

const ageCondition = z.strictObject({
  type: z.literal('Age'),
  maxAge: z
    .number()
    .int()
    .min(1)
    .max(2 ** 46)
    .describe('Seconds since the upload'),
});
const dateCondition = z.strictObject({
  type: z.literal('Date'),
  date: z
    .string()
    .max(64)
    .refine((text) => !Number.isNaN(Date.parse(text)), 'must be an ISO 8601 date'),
});
const condition = z.discriminatedUnion('type', [ageCondition, dateCondition]);

export const r2LifecycleRule = z.strictObject({
  id: z.string().min(1).max(255),
  enabled: z.boolean(),
  conditions: z.strictObject({ prefix: z.string().max(1024).optional().describe('Objects whose key starts with it; absent or "": all') }),
  deleteObjectsTransition: z.strictObject({ condition }).optional(),
  storageClassTransitions: z
    .array(z.strictObject({ condition, storageClass: z.literal('InfrequentAccess') }))
    .max(1)
    .optional(),
  abortMultipartUploadsTransition: z.strictObject({ condition: ageCondition }).optional(),
});
export const r2LifecycleBody = z.strictObject({ rules: z.array(r2LifecycleRule).max(1000).describe('An empty list removes every rule') });
export type R2LifecycleRuleJson = z.infer<typeof r2LifecycleRule>;

function conditionFromJson(json: z.infer<typeof condition>): LifecycleCondition {
  return json.type === 'Age' ? { afterSeconds: json.maxAge } : { date: Date.parse(json.date) };
}

function conditionToJson(value: LifecycleCondition): z.infer<typeof condition> {
  return 'afterSeconds' in value ? { type: 'Age', maxAge: value.afterSeconds } : { type: 'Date', date: new Date(value.date).toISOString() };
}

export function lifecycleRuleFromJson(json: R2LifecycleRuleJson): LifecycleRule {
  const rule: LifecycleRule = { id: json.id, enabled: json.enabled, prefix: json.conditions.prefix ?? '' };
  if (json.deleteObjectsTransition) rule.expiration = conditionFromJson(json.deleteObjectsTransition.condition);
  const [transition] = json.storageClassTransitions ?? [];
  if (transition) rule.transition = conditionFromJson(transition.condition);
  if (json.abortMultipartUploadsTransition) rule.abortUploadsAfterSeconds = json.abortMultipartUploadsTransition.condition.maxAge;
  return rule;
}

export function lifecycleRuleToJson(rule: LifecycleRule): R2LifecycleRuleJson {
  return {
    id: rule.id,
    enabled: rule.enabled,
    conditions: { prefix: rule.prefix },
    ...(rule.expiration ? { deleteObjectsTransition: { condition: conditionToJson(rule.expiration) } } : {}),
    ...(rule.transition ? { storageClassTransitions: [{ condition: conditionToJson(rule.transition), storageClass: 'InfrequentAccess' as const }] } : {}),
    ...(rule.abortUploadsAfterSeconds !== undefined
      ? { abortMultipartUploadsTransition: { condition: { type: 'Age' as const, maxAge: rule.abortUploadsAfterSeconds } } }
      : {}),
  };
}

export const R2_LIFECYCLE_ROUTES: ApiRoute[] = [
  defineRoute({
    method: 'GET',
    path: LIFECYCLE,
    operationId: 'r2-bucket-lifecycle-get',
    summary: "Get an R2 bucket's lifecycle rules (an empty list when it has none)",
    tag: TAG,
    result: r2LifecycleBody,
    async handler(ctx) {
      const store = r2Store(ctx);
      const rules = await withR2Errors(() => store.getBucketLifecycle(ctx.params.bucket!));
      return successResponse({ rules: (rules ?? []).map(lifecycleRuleToJson) });
    },
  }),
  defineRoute<z.infer<typeof r2LifecycleBody>>({
    method: 'PUT',
    path: LIFECYCLE,
    operationId: 'r2-bucket-lifecycle-put',
    summary: "Replace an R2 bucket's lifecycle rules (any Content-Type)",
    tag: TAG,
    body: { schema: r2LifecycleBody, invalid: 'API_STORE_INVALID', anyMediaType: true },
    result: z.object({}),
    async handler(ctx) {
      const store = r2Store(ctx);
      const rules = ctx.body.rules.map(lifecycleRuleFromJson);
      await withR2Errors(() => store.putBucketLifecycle(ctx.params.bucket!, rules.length === 0 ? null : rules));
      return successResponse({});
    },
  }),
];
