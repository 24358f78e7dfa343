/**
 * A script's secrets: write, list, read (name and type only, never a value) and delete one; many
 * at once (`PATCH .../secrets-bulk`, what `wrangler secret bulk` and the SDK's
 * `secrets.bulkUpdate` send); and a new version of the newest one with its secrets changed
 * (`PATCH .../workers/workers/<script>/versions/latest`, `wrangler versions secret put|delete|bulk`).
 *
 * By design: a secret is the script's, not a version's (every version lists the script's secrets
 * of its time as `secret_text` bindings). Writing one restarts the deployed version with it, at
 * once; through `versions/latest` too, whose new version is not deployed (as on the platform) but
 * whose secrets already are.
 */
import { z } from 'zod';
import { successResponse } from '../envelope.ts';
import { ApiError } from '../errors.ts';
import { defineRoute, type ApiRoute, type RouteContext } from '../route.ts';
import { ACCOUNT_WORKERS, requireScript, SCRIPT, secretsJsonResult, toVersionJson } from './workers-common.ts';

const TAG = 'Workers';
const anyResult = z.unknown();
const SECRET_NAME = z
  .string()
  .min(1)
  .max(256)
  .regex(/^[A-Za-z_$][A-Za-z0-9_$]*$/, 'must be a JavaScript identifier');
/** The platform's limit on a secret's value. */
const SECRET_TEXT = z.string().max(5 * 1024);
const MAX_SECRETS_PER_CHANGE = 128;

const secretBody = z.strictObject({ name: SECRET_NAME, text: SECRET_TEXT, type: z.literal('secret_text').default('secret_text') });
const bulkBody = z.looseObject({
  secrets: z
    .record(SECRET_NAME, z.looseObject({ name: SECRET_NAME.optional(), text: SECRET_TEXT, type: z.literal('secret_text').default('secret_text') }).nullable())
    .optional(),
});
const latestBody = z.looseObject({
  env: z.record(SECRET_NAME, z.looseObject({ type: z.literal('secret_text'), text: SECRET_TEXT }).nullable()).optional(),
  annotations: z.looseObject({ 'workers/message': z.string().max(1024).optional(), 'workers/tag': z.string().max(256).optional() }).optional(),
});

function secretName(ctx: RouteContext<unknown>): string {
  const raw = ctx.params.secret_name ?? '';
  return ctx.query.get('url_encoded') === 'true' ? decodeURIComponent(raw) : raw;
}

function secretNotFound(name: string): ApiError {
  return new ApiError('API_WORKER_SECRET_NOT_FOUND', { message: `The script has no secret named ${JSON.stringify(name.slice(0, 256))}` });
}

function changesOf(entries: Record<string, { text: string; name?: string | undefined } | null>): Record<string, string | null> {
  const names = Object.keys(entries);
  if (names.length > MAX_SECRETS_PER_CHANGE)
    throw new ApiError('API_WORKER_INVALID', { message: `At most ${MAX_SECRETS_PER_CHANGE} secrets may change at once; this request changes ${names.length}` });
  const changes: Record<string, string | null> = {};
  for (const [name, entry] of Object.entries(entries)) {
    if (entry !== null && entry.name !== undefined && entry.name !== name) {
      throw new ApiError('API_WORKER_INVALID', {
        message: `secrets.${name}.name: ${JSON.stringify(entry.name)} must be the key it is under (${JSON.stringify(name)}) or left out`,
      });
    }
    changes[name] = entry === null ? null : entry.text;
  }
  return changes;
}

export const WORKER_SECRET_ROUTES: ApiRoute[] = [
  defineRoute({
    method: 'GET',
    path: `${SCRIPT}/secrets`,
    operationId: 'workers-secrets-list',
    summary: "The names of the script's secrets (never their values)",
    tag: TAG,
    result: anyResult,
    async handler(ctx) {
      const { workers, script } = await requireScript(ctx);
      return successResponse(secretsJsonResult(await workers.registry.listSecrets(ctx.account.id, script.name)));
    },
  }),
  defineRoute<z.infer<typeof secretBody>>({
    method: 'PUT',
    path: `${SCRIPT}/secrets`,
    operationId: 'workers-secrets-put',
    summary: 'Write a secret (the deployed version gets it at once)',
    tag: TAG,
    body: { schema: secretBody, invalid: 'API_WORKER_INVALID' },
    result: anyResult,
    async handler(ctx) {
      const { workers, script } = await requireScript(ctx);
      await workers.registry.setSecret(ctx.account.id, script.name, ctx.body.name, ctx.body.text);
      return successResponse({ name: ctx.body.name, type: 'secret_text' });
    },
  }),
  defineRoute<z.infer<typeof bulkBody>>({
    method: 'PATCH',
    path: `${SCRIPT}/secrets-bulk`,
    operationId: 'workers-secrets-bulk',
    summary: 'Write (an object) and delete (null) several secrets in one change: one new version, deployed at once',
    tag: TAG,
    body: { schema: bulkBody, invalid: 'API_WORKER_INVALID', anyMediaType: true },
    result: anyResult,
    async handler(ctx) {
      const { workers, script } = await requireScript(ctx);
      const changes = changesOf(ctx.body.secrets ?? {});
      const outcome = await workers.registry.setSecrets(ctx.account.id, script.name, changes, { asVersion: 'deployed' });
      if (!outcome) throw new ApiError('API_WORKER_NOT_FOUND');
      return successResponse(Object.fromEntries(outcome.secrets.map((secret) => [secret.name, { name: secret.name, type: 'secret_text' }])));
    },
  }),
  defineRoute({
    method: 'GET',
    path: `${SCRIPT}/secrets/:secret_name`,
    operationId: 'workers-secrets-get',
    summary: "A secret's name and type (never its value)",
    tag: TAG,
    result: anyResult,
    async handler(ctx) {
      const { workers, script } = await requireScript(ctx);
      const name = secretName(ctx);
      if (!(await workers.registry.listSecrets(ctx.account.id, script.name)).some((secret) => secret.name === name)) throw secretNotFound(name);
      return successResponse({ name, type: 'secret_text' });
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: `${SCRIPT}/secrets/:secret_name`,
    operationId: 'workers-secrets-delete',
    summary: 'Delete a secret',
    tag: TAG,
    result: anyResult,
    async handler(ctx) {
      const { workers, script } = await requireScript(ctx);
      const name = secretName(ctx);
      if (!(await workers.registry.setSecret(ctx.account.id, script.name, name, null))) throw secretNotFound(name);
      return successResponse(null);
    },
  }),
  defineRoute<z.infer<typeof latestBody>>({
    method: 'PATCH',
    path: `${ACCOUNT_WORKERS}/workers/:script_name/versions/latest`,
    operationId: 'workers-versions-latest-patch',
    summary: 'A new version of the newest one with its secrets changed (env: name -> {type: secret_text, text} or null); not deployed',
    tag: TAG,
    body: { schema: latestBody, invalid: 'API_WORKER_INVALID', anyMediaType: true },
    result: anyResult,
    async handler(ctx) {
      const { workers, script } = await requireScript(ctx);
      const changes = changesOf(ctx.body.env ?? {});
      const message = ctx.body.annotations?.['workers/message'];
      const tag = ctx.body.annotations?.['workers/tag'];
      const outcome = await workers.registry.setSecrets(ctx.account.id, script.name, changes, {
        asVersion: 'latest',
        annotations: { ...(message === undefined ? {} : { message }), ...(tag === undefined ? {} : { tag }) },
      });
      // A script always keeps its newest version, so a copy is always made.
      if (!outcome?.version) throw new ApiError('API_WORKER_NOT_FOUND');
      return successResponse(toVersionJson(outcome.version, script, ctx.account));
    },
  }),
];
