/**
 * A script's script-level settings (`logpush`, `tags`, `tail_consumers`, `observability`) as the
 * platform takes them: in an upload's metadata, in `PATCH .../script-settings` and in `PATCH
 * .../settings` (JSON, a multipart `settings` part, or the official SDK's bracketed fields). The
 * platform's other script settings that edgeport does not provide (Smart Placement, per-script
 * limits, usage models other than `standard`) are refused by name, never accepted and ignored.
 */
import { z } from 'zod';
import type { ScriptSettings } from '../../db/scripts/script-records.ts';
import { SCRIPT_LIMIT_DEFAULTS } from '../../runtime/index.ts';
import { ApiError } from '../errors.ts';

/** A number, or its decimal text (the SDK's multipart fields carry numbers as text). */
const numberish = z.union([
  z.number(),
  z
    .string()
    .regex(/^-?\d+(\.\d+)?$/)
    .transform(Number),
]);
const booleanish = z.union([z.boolean(), z.enum(['true', 'false']).transform((value) => value === 'true')]);

export const scriptSettingsSchema = z.object({
  logpush: booleanish.optional(),
  tags: z.array(z.string().max(256)).max(8).optional(),
  tail_consumers: z
    .array(z.looseObject({ service: z.string().min(1).max(64) }))
    .max(8)
    .optional(),
  observability: z.looseObject({ enabled: booleanish.optional(), head_sampling_rate: numberish.pipe(z.number().min(0).max(1)).optional() }).optional(),
});

function invalid(message: string): ApiError {
  return new ApiError('API_WORKER_INVALID', { message });
}

/**
 * The script-level settings `raw` names (those it leaves out are absent), checked; `where` names
 * the object in messages (`metadata`, `settings`). Refuses what edgeport does not provide.
 */
export function scriptSettingsOf(raw: Record<string, unknown>, where: string): Partial<ScriptSettings> {
  refuseUnprovided(raw, where);
  const parsed = scriptSettingsSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw invalid(`${where}.${issue.path.join('.')}: ${issue.message}`);
  }
  const { logpush, tags, tail_consumers: tailConsumers, observability } = parsed.data;
  return {
    ...(logpush === undefined ? {} : { logpush }),
    ...(tags === undefined ? {} : { tags }),
    ...(tailConsumers === undefined ? {} : { tail_consumers: tailConsumers.map((consumer) => ({ service: consumer.service })) }),
    ...(observability === undefined ? {} : { observability: { ...observability, enabled: observability.enabled ?? false } }),
  };
}

function isEmpty(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === 'object' && Object.keys(value).length === 0);
}

function notProvided(message: string): ApiError {
  return new ApiError('API_NOT_PROVIDED', { message: `not entitled: edgeport does not provide ${message}` });
}

/** Settings the platform has and edgeport does not apply: refused when they ask for anything but the default. */
function refuseUnprovided(raw: Record<string, unknown>, where: string): void {
  const placement = raw.placement as { mode?: unknown } | undefined;
  if (!isEmpty(placement) && !(typeof placement === 'object' && Object.keys(placement!).length === 1 && placement!.mode === 'off')) {
    throw notProvided(`Smart Placement (${where}.placement): every script runs on this server; leave placement out`);
  }
  if (!isEmpty(raw.limits)) {
    throw notProvided(
      `per-script limits (${where}.limits): every script runs with the operator's limits (${SCRIPT_LIMIT_DEFAULTS.cpuMs} ms of CPU per stretch, ${SCRIPT_LIMIT_DEFAULTS.memoryMb} MB of memory); leave limits out`,
    );
  }
  if (raw.usage_model !== undefined && raw.usage_model !== 'standard') {
    throw notProvided(
      `the usage model ${JSON.stringify(raw.usage_model)} (${where}.usage_model): scripts run on the standard usage model; leave usage_model out or send "standard"`,
    );
  }
}
