/**
 * A script's settings: `script-settings` (the script-level ones: logpush, tags, tail_consumers,
 * observability; what `wrangler deploy` syncs after a versioned upload) and `settings` (those plus
 * the deployed version's compatibility and bindings, the SDK's `scriptAndVersionSettings`). A
 * `PATCH .../settings` that changes `compatibility_date`, `compatibility_flags`, `bindings` or
 * `annotations` makes a new version, the deployed one's modules with them, tried in workerd and
 * deployed at once, as on the platform; the script-level ones change in place. Bodies are JSON, a
 * multipart `settings` part (JSON), or the SDK's bracketed multipart fields (`settings[logpush]`).
 */
import { z } from 'zod';
import type { ScriptRecord, VersionMetadata } from '../../db/scripts/script-records.ts';
import { accountStore } from '../../store/engine/account-store.ts';
import { successResponse } from '../envelope.ts';
import { ApiError } from '../errors.ts';
import { defineRoute, type ApiRoute, type RouteContext } from '../route.ts';
import { checkCompatibilityDate, resolveBindings, versionEtag } from './script-upload.ts';
import { scriptSettingsOf } from './script-settings.ts';
import { fromBrackets } from './upload-form.ts';
import { storeVersion } from './version-writes.ts';
import { bindingsJson, requireScript, SCRIPT, type WorkersDeps } from './workers-common.ts';

const TAG = 'Workers';
const anyResult = z.unknown();
const SCRIPT_LEVEL = ['logpush', 'tags', 'tail_consumers', 'observability', 'placement', 'limits', 'usage_model'];
const VERSIONED = ['compatibility_date', 'compatibility_flags', 'bindings', 'annotations'];

const versionedSchema = z.object({
  compatibility_date: z.string().max(32).optional(),
  compatibility_flags: z.array(z.string().max(128)).max(64).optional(),
  bindings: z
    .array(z.looseObject({ type: z.string(), name: z.string() }))
    .max(256)
    .optional(),
  annotations: z.looseObject({ 'workers/message': z.string().max(1024).optional(), 'workers/tag': z.string().max(256).optional() }).optional(),
});

function invalid(message: string): ApiError {
  return new ApiError('API_WORKER_INVALID', { message });
}

/** A settings PATCH's object: JSON, or multipart with a `settings` part or `settings[...]` fields. */
async function readSettings(request: Request, maxBytes: number): Promise<Record<string, unknown>> {
  const declared = Number(request.headers.get('content-length') ?? 0);
  if (declared > maxBytes) throw new ApiError('API_BODY_TOO_LARGE', { message: `Request body is too large: at most ${maxBytes} bytes are accepted` });
  const type = request.headers.get('content-type') ?? '';
  let value: unknown;
  try {
    if (/^multipart\/form-data/i.test(type)) {
      const form = await request.formData();
      const part = form.get('settings');
      if (part !== null) {
        value = JSON.parse(typeof part === 'string' ? part : await part.text());
      } else {
        const fields: Array<[string, string]> = [];
        for (const [field, entry] of form.entries())
          if (field.startsWith('settings[') && typeof entry === 'string') fields.push([field.slice('settings'.length), entry]);
        value = fromBrackets(fields);
      }
    } else {
      const text = await request.text();
      if (text.length > maxBytes) throw new Error('too large');
      value = text === '' ? {} : JSON.parse(text);
    }
  } catch {
    throw new ApiError('API_MALFORMED_JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw invalid('The settings must be a JSON object, such as {"logpush": true}');
  return value as Record<string, unknown>;
}

/** The settings of the script as the platform answers them (`withVersion`: the deployed version's too). */
export async function settingsJson(workers: WorkersDeps, script: ScriptRecord, withVersion: boolean): Promise<Record<string, unknown>> {
  const base = { ...script.settings };
  if (!withVersion) return base;
  const version = script.deployment ? await workers.registry.getVersion(script.accountId, script.name, script.deployment.versionId) : null;
  return {
    ...base,
    bindings: version ? bindingsJson(version) : [],
    compatibility_date: version?.metadata.compatibilityDate ?? null,
    compatibility_flags: version?.metadata.compatibilityFlags ?? [],
    usage_model: 'standard',
    placement: {},
    limits: {},
  };
}

/** A new version of the deployed one with the versioned settings of `raw` changed; stored and deployed. */
async function changeVersion(ctx: RouteContext<unknown>, workers: WorkersDeps, script: ScriptRecord, raw: Record<string, unknown>): Promise<void> {
  const parsed = versionedSchema.safeParse(raw);
  if (!parsed.success) throw invalid(`settings.${parsed.error.issues[0]!.path.join('.')}: ${parsed.error.issues[0]!.message}`);
  const change = parsed.data;
  const accountId = ctx.account.id;
  const now = ctx.deps.clock.now();
  const runnable = script.deployment ? await workers.registry.runnable(accountId, script.name, script.deployment.versionId) : null;
  if (!runnable) throw new ApiError('API_WORKER_VERSION_NOT_FOUND', { message: 'The Worker has no deployed version to change: upload one first' });
  const current = runnable.version.metadata;
  if (change.compatibility_date !== undefined) checkCompatibilityDate(change.compatibility_date, now, 'settings.compatibility_date');
  const resolved =
    change.bindings === undefined
      ? { bindings: current.bindings, secrets: {} }
      : await resolveBindings(change.bindings, [], {
          accountId,
          scriptName: script.name,
          registry: workers.registry,
          store: ctx.deps.store ? accountStore(ctx.deps.store, accountId) : undefined,
          strictInherit: true,
          now,
        });
  const message = change.annotations?.['workers/message'];
  const tag = change.annotations?.['workers/tag'];
  const metadata: VersionMetadata = {
    ...current,
    compatibilityDate: change.compatibility_date ?? current.compatibilityDate,
    compatibilityFlags: change.compatibility_flags ?? current.compatibilityFlags,
    bindings: resolved.bindings,
    // Annotations are not inherited across settings updates (the SDK's own words).
    annotations: { ...(message === undefined ? {} : { message }), ...(tag === undefined ? {} : { tag }) },
  };
  await storeVersion(
    workers,
    accountId,
    script.name,
    { version: { metadata, modules: runnable.modules, etag: versionEtag(metadata, runnable.modules) }, secrets: resolved.secrets, settings: {} },
    { deploy: true, now },
  );
}

export const WORKER_SETTINGS_ROUTES: ApiRoute[] = (['script-settings', 'settings'] as const).flatMap((path) => [
  defineRoute({
    method: 'GET',
    path: `${SCRIPT}/${path}`,
    operationId: `workers-${path}-get`,
    summary: "The script's settings",
    tag: TAG,
    result: anyResult,
    async handler(ctx) {
      const { workers, script } = await requireScript(ctx);
      return successResponse(await settingsJson(workers, script, path === 'settings'));
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: `${SCRIPT}/${path}`,
    operationId: `workers-${path}-edit`,
    summary:
      path === 'settings'
        ? "Change the script's settings; compatibility_date, compatibility_flags, bindings or annotations make a new version of the deployed one, deployed at once"
        : 'Change the script-level settings (logpush, tags, tail_consumers, observability)',
    tag: TAG,
    rawBody: { contentType: 'application/json', description: 'The settings to change (multipart: a `settings` part, or `settings[...]` fields)' },
    result: anyResult,
    async handler(ctx) {
      const { workers, script } = await requireScript(ctx);
      const raw = await readSettings(ctx.request, ctx.deps.maxBodyBytes);
      const allowed = path === 'settings' ? [...SCRIPT_LEVEL, ...VERSIONED] : SCRIPT_LEVEL;
      const unknown = Object.keys(raw).filter((key) => !allowed.includes(key));
      if (unknown.length > 0) {
        throw invalid(
          `settings.${unknown[0]}: not a setting this route changes; it changes ${allowed.join(', ')}${path === 'script-settings' ? ' (the versioned ones are changed through PATCH .../settings)' : ''}`,
        );
      }
      // Everything is checked before anything is written: a bad script-level value leaves the version alone, and the reverse.
      const settings = scriptSettingsOf(raw, 'settings');
      if (VERSIONED.some((key) => raw[key] !== undefined)) await changeVersion(ctx, workers, script, raw);
      const updated =
        Object.keys(settings).length > 0
          ? await workers.registry.updateScript(ctx.account.id, script.name, { settings })
          : await workers.registry.getScript(ctx.account.id, script.name);
      if (!updated) throw new ApiError('API_WORKER_NOT_FOUND');
      return successResponse(await settingsJson(workers, updated, path === 'settings'));
    },
  }),
]);
