/**
 * A script upload (PUT .../scripts/:name, POST .../scripts/:name/versions) made into a version:
 * the metadata checked (main module present, a compatibility date workerd supports, bindings of
 * the supported types, `r2_bucket` only to the account's own buckets, `inherit` bindings taken from
 * the current version), the module parts typed by their media type, and the whole tried in workerd
 * before anything is stored: a script that cannot start is refused with the exception it threw.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { ScriptRegistry, NewVersion } from '../../db/scripts/script-registry.ts';
import type { ModuleType, ScriptBinding, ScriptModule, ScriptSettings, VersionMetadata } from '../../db/scripts/script-records.ts';
import { compatibilityDateProblem, newerThanRuntimeProblem } from '../../runtime/compat.ts';
import { WORKERD } from '../../runtime/workerd/workerd-package.ts';
import type { StoreEngine } from '../../store/engine/store-engine.ts';
import { ApiError } from '../errors.ts';
import { scriptSettingsOf } from './script-settings.ts';
import type { UploadForm } from './upload-form.ts';

export const SUPPORTED_BINDINGS = ['r2_bucket', 'plain_text', 'secret_text', 'json'] as const;

const MODULE_TYPES: Record<string, ModuleType | 'skip'> = {
  'application/javascript+module': 'esm',
  'text/javascript+module': 'esm',
  'application/javascript': 'cjs',
  'text/javascript': 'cjs',
  'text/plain': 'text',
  'application/octet-stream': 'data',
  'application/wasm': 'wasm',
  'application/json': 'json',
  'application/source-map': 'skip',
};

const BINDING_NAME = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const RESERVED_MODULES = new Set(['edgeport-entry.js']);

const metadataSchema = z.looseObject({
  main_module: z.string().min(1).max(256).optional(),
  body_part: z.string().optional(),
  compatibility_date: z.string().optional(),
  compatibility_flags: z.array(z.string().max(128)).max(64).optional(),
  bindings: z
    .array(z.looseObject({ type: z.string(), name: z.string() }))
    .max(256)
    .optional(),
  keep_bindings: z.array(z.string()).optional(),
  annotations: z.looseObject({ 'workers/message': z.string().max(1024).optional(), 'workers/tag': z.string().max(256).optional() }).optional(),
});

function invalid(message: string): ApiError {
  return new ApiError('API_WORKER_INVALID', { message });
}

export interface PreparedUpload {
  version: NewVersion;
  /** secret_text bindings that came with a value: written as the script's secrets. */
  secrets: Record<string, string>;
  /** Script-level settings the metadata carries (logpush, observability, tags, tail_consumers). */
  settings: Partial<ScriptSettings>;
}

export interface PrepareContext {
  accountId: string;
  scriptName: string;
  registry: ScriptRegistry;
  store: StoreEngine | undefined;
  /** `bindings_inherit=strict`: an `inherit` binding the current version lacks is an error (else it is dropped). */
  strictInherit: boolean;
  now: number;
}

export async function prepareUpload(form: UploadForm, ctx: PrepareContext): Promise<PreparedUpload> {
  const parsed = metadataSchema.safeParse(form.metadata);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw invalid(`metadata.${issue.path.join('.')}: ${issue.message}`);
  }
  const meta = parsed.data;
  if (meta.main_module === undefined) {
    throw invalid(
      meta.body_part === undefined
        ? 'metadata.main_module is missing: name the module the script starts from (its part in the upload)'
        : 'Service-worker scripts (metadata.body_part) are not supported: upload an ES module and name it in metadata.main_module',
    );
  }
  const { modules, main } = uploadedModules(form, meta.main_module);
  const date = meta.compatibility_date ?? '2025-01-01';
  checkCompatibilityDate(date, ctx.now);
  const settings = scriptSettingsOf(meta, 'metadata');
  const { bindings, secrets } = await resolveBindings(meta.bindings ?? [], meta.keep_bindings ?? [], ctx);
  const annotations: VersionMetadata['annotations'] = {
    ...(meta.annotations?.['workers/message'] === undefined ? {} : { message: meta.annotations['workers/message'] }),
    ...(meta.annotations?.['workers/tag'] === undefined ? {} : { tag: meta.annotations['workers/tag'] }),
  };
  const metadata: VersionMetadata = {
    mainModule: main.name,
    compatibilityDate: date,
    compatibilityFlags: meta.compatibility_flags ?? [],
    bindings,
    annotations,
    source: 'api',
  };
  const etag = versionEtag(metadata, modules);
  return { version: { metadata, modules, etag }, secrets, settings };
}

/** The upload's modules, typed by their media type, and the main one (an ES module among them). */
export function uploadedModules(form: UploadForm, mainModule: string): { modules: ScriptModule[]; main: ScriptModule } {
  const modules: ScriptModule[] = [];
  for (const part of form.parts) {
    const type = MODULE_TYPES[part.contentType];
    if (type === undefined)
      throw invalid(
        `Module ${JSON.stringify(part.name)} has the type ${JSON.stringify(part.contentType)}, which is not a module type: use one of ${Object.keys(MODULE_TYPES).join(', ')}`,
      );
    if (type === 'skip') continue;
    if (RESERVED_MODULES.has(part.name) || part.name.length > 256)
      throw invalid(`Module name ${JSON.stringify(part.name)} is reserved or too long: rename the module`);
    if (modules.some((module) => module.name === part.name)) throw invalid(`Module ${JSON.stringify(part.name)} is uploaded twice`);
    modules.push({ name: part.name, type, content: Buffer.from(part.bytes).toString('base64') });
  }
  const main = modules.find((module) => module.name === mainModule);
  if (!main)
    throw invalid(
      `The main module ${JSON.stringify(mainModule)} is not among the uploaded parts (${modules.map((m) => JSON.stringify(m.name)).join(', ') || 'none'})`,
    );
  if (main.type !== 'esm') throw invalid(`The main module ${JSON.stringify(main.name)} must be an ES module (application/javascript+module)`);
  return { modules, main };
}

/** A version's etag: what it runs (its metadata and modules). */
export function versionEtag(metadata: VersionMetadata, modules: readonly ScriptModule[]): string {
  return createHash('sha256').update(JSON.stringify(metadata)).update(JSON.stringify(modules)).digest('hex');
}

/** Throws 10021 naming the problem when workerd cannot run a script on `date`. */
export function checkCompatibilityDate(date: string, now: number, field = 'metadata.compatibility_date'): void {
  const problem = compatibilityDateProblem(date, now) ?? newerThanRuntimeProblem(date, WORKERD.compatibilityDate, `workerd (${WORKERD.version})`);
  if (problem) throw invalid(`${field}: ${problem}`);
}

/**
 * The bindings of a new version: each checked (`inherit` taken from the deployed version), then
 * the deployed version's bindings of the `keep` types the list does not name. `secret_text`
 * bindings that came with a value are returned as secrets to write.
 */
export async function resolveBindings(
  raw: ReadonlyArray<{ type: string; name: string }>,
  keepTypes: readonly string[],
  ctx: PrepareContext,
): Promise<{ bindings: ScriptBinding[]; secrets: Record<string, string> }> {
  const current = await currentBindings(ctx);
  const keep = new Set(keepTypes);
  const bindings: ScriptBinding[] = [];
  const secrets: Record<string, string> = {};
  for (const given of raw) {
    const binding = given as Record<string, unknown> & { type: string; name: string };
    if (typeof binding.name !== 'string' || !BINDING_NAME.test(binding.name))
      throw invalid(`Binding name ${JSON.stringify(binding.name)} must be a JavaScript identifier`);
    if (bindings.some((b) => b.name === binding.name)) throw invalid(`Binding ${JSON.stringify(binding.name)} is given twice`);
    if (binding.type === 'inherit') {
      const inherited = current.find((b) => b.name === binding.name);
      if (inherited) bindings.push(inherited);
      else if (ctx.strictInherit)
        throw invalid(`Binding ${JSON.stringify(binding.name)} is to be inherited, but the current version has no binding of that name`);
      continue;
    }
    bindings.push(await checkBinding(binding, ctx, secrets));
  }
  for (const kept of current) {
    if (keep.has(kept.type) && !bindings.some((b) => b.name === kept.name)) bindings.push(kept);
  }
  return { bindings, secrets };
}

async function currentBindings(ctx: PrepareContext): Promise<ScriptBinding[]> {
  const script = await ctx.registry.getScript(ctx.accountId, ctx.scriptName);
  if (!script?.deployment) return [];
  return (await ctx.registry.getVersion(ctx.accountId, ctx.scriptName, script.deployment.versionId))?.metadata.bindings ?? [];
}

async function checkBinding(
  binding: Record<string, unknown> & { type: string; name: string },
  ctx: PrepareContext,
  secrets: Record<string, string>,
): Promise<ScriptBinding> {
  const { name } = binding;
  switch (binding.type) {
    case 'r2_bucket': {
      const bucket = binding.bucket_name;
      if (typeof bucket !== 'string') throw invalid(`Binding ${JSON.stringify(name)} (r2_bucket) needs bucket_name`);
      if (binding.jurisdiction !== undefined && binding.jurisdiction !== 'default')
        throw invalid(`Binding ${JSON.stringify(name)}: jurisdiction ${JSON.stringify(binding.jurisdiction)} is not available on this server`);
      // The account's own bucket, or none: another account's bucket of that name is not there.
      const found = ctx.store ? await ctx.store.getBucket(bucket).catch(() => null) : null;
      if (!found) {
        throw new ApiError('API_WORKER_BUCKET_NOT_FOUND', {
          message: `R2 bucket '${bucket}' not found for binding ${name}: create it first (wrangler r2 bucket create ${bucket}); a script binds only its account's buckets`,
        });
      }
      return { type: 'r2_bucket', name, bucket_name: bucket };
    }
    case 'plain_text':
      if (typeof binding.text !== 'string') throw invalid(`Binding ${JSON.stringify(name)} (plain_text) needs text, a string`);
      return { type: 'plain_text', name, text: binding.text };
    case 'json':
      if (!('json' in binding)) throw invalid(`Binding ${JSON.stringify(name)} (json) needs json, a JSON value`);
      return { type: 'json', name, json: binding.json };
    case 'secret_text':
      if (typeof binding.text === 'string') secrets[name] = binding.text;
      return { type: 'secret_text', name };
    default:
      throw invalid(
        `Binding ${JSON.stringify(name)} has type ${JSON.stringify(binding.type)}, which this server does not support: use ${SUPPORTED_BINDINGS.join(', ')}`,
      );
  }
}
