/**
 * Public buckets over the platform's R2 paths (`.../r2/buckets/<bucket>/domains/...`, wrangler's
 * `r2 bucket dev-url` and `r2 bucket domain`, the SDK's `r2.buckets.domains`): the bucket's managed
 * public URL (`pub-<32 hex>.<[r2] public_domain>`, turned on and off; its id is made on first use
 * and kept), and custom domains, hosts of the account's own zones, each served by one bucket. The
 * edge serves both read-only (src/store/public); a custom domain's requests are log lines of its
 * zone.
 *
 * By design: edgeport's edge speaks plain HTTP (TLS, if any, is the operator's proxy's), so
 * `minTLS` is kept and shown, not enforced, `ciphers` are refused, and a custom domain's
 * `status.ssl` is `unknown`; `status.ownership` is `active` (the zone is the account's).
 */
import { z } from 'zod';
import type { BucketDomains, BucketRef, CustomDomain } from '../../db/public-buckets/bucket-domains.ts';
import type { ZoneRecord } from '../../db/control-store.ts';
import { isAtOrUnder, isPlatformHost } from '../../edge/platform-hosts.ts';
import { successResponse } from '../envelope.ts';
import { ApiError } from '../errors.ts';
import { defineRoute, type ApiRoute, type RouteContext } from '../route.ts';
import { accountStore } from '../../store/engine/account-store.ts';
import { R2_BUCKETS } from './r2-bucket-routes.ts';
import { r2Store, withR2Errors } from './r2-schema.ts';

const TAG = 'R2 public buckets';
const MANAGED = `${R2_BUCKETS}/:bucket/domains/managed`;
const CUSTOM = `${R2_BUCKETS}/:bucket/domains/custom`;
const anyResult = z.unknown();
const HOST = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$/;
const minTls = z.enum(['1.0', '1.1', '1.2', '1.3']);

const managedBody = z.looseObject({ enabled: z.boolean() });
const createCustomBody = z.strictObject({
  domain: z
    .string()
    .min(1)
    .max(253)
    .transform((domain) => domain.toLowerCase()),
  zoneId: z.string().min(1).max(64),
  enabled: z.boolean(),
  minTLS: minTls.optional(),
  ciphers: z.array(z.string().max(128)).max(64).optional(),
});
const updateCustomBody = z.strictObject({
  enabled: z.boolean().optional(),
  minTLS: minTls.optional(),
  ciphers: z.array(z.string().max(128)).max(64).optional(),
});

/** Cipher suites are TLS's, which edgeport's edge does not speak: refused by name. */
function refuseCiphers(ciphers: readonly string[] | undefined): void {
  if (ciphers !== undefined && ciphers.length > 0) {
    throw new ApiError('API_NOT_PROVIDED', {
      message:
        "not entitled: edgeport does not provide custom cipher suites: its edge speaks plain HTTP, and TLS (with its ciphers) is the operator's proxy's; leave ciphers out",
    });
  }
}

function requireDomains(ctx: RouteContext<unknown>): { domains: BucketDomains; publicDomain: string | null } {
  const deps = ctx.deps.publicBuckets;
  if (!deps)
    throw new ApiError('API_NOT_PROVIDED', { message: 'not entitled: edgeport does not provide public buckets on this server (it runs without an edge)' });
  return deps;
}

/** The path's bucket, the caller's (another account's answers as a missing one, 10006). */
async function bucketOf(ctx: RouteContext<unknown>): Promise<BucketRef> {
  const name = ctx.params.bucket ?? '';
  const bucket = await withR2Errors(() => r2Store(ctx).getBucket(name));
  if (!bucket) throw new ApiError('API_BUCKET_NOT_FOUND');
  return { accountId: ctx.account.id, name: bucket.name, created: bucket.created };
}

async function managedJson(ctx: RouteContext<unknown>, enabled?: boolean): Promise<Record<string, unknown>> {
  const { domains, publicDomain } = requireDomains(ctx);
  if (publicDomain === null) {
    throw new ApiError('API_NOT_PROVIDED', {
      message:
        'not entitled: edgeport does not provide managed public URLs on this server: its operator turned them off ([r2] public_domain = ""); attach a custom domain instead',
    });
  }
  const bucket = await bucketOf(ctx);
  const managed =
    enabled === undefined ? ((await domains.getManaged(bucket)) ?? (await domains.setManaged(bucket, false))) : await domains.setManaged(bucket, enabled);
  return { bucketId: managed.publicId.slice('pub-'.length), domain: `${managed.publicId}.${publicDomain}`, enabled: managed.enabled };
}

async function customJson(ctx: RouteContext<unknown>, domain: CustomDomain): Promise<Record<string, unknown>> {
  const zone = await ctx.deps.control.getZone(ctx.account.id, domain.zoneId);
  return {
    domain: domain.domain,
    enabled: domain.enabled,
    status: { ownership: zone ? 'active' : 'deactivated', ssl: 'unknown' },
    minTLS: domain.minTls,
    zoneId: domain.zoneId,
    zoneName: zone?.name ?? '',
  };
}

function domainNotFound(domain: string): ApiError {
  return new ApiError('API_BUCKET_DOMAIN_NOT_FOUND', { message: `The bucket has no custom domain ${JSON.stringify(domain.slice(0, 253))}` });
}

function invalidDomain(message: string): ApiError {
  return new ApiError('API_BUCKET_DOMAIN_INVALID', { message, pointer: '/domain' });
}

/** The custom domain, checked: a host name at or under the account's zone `zoneId`, not one of the server's hosts, not a script's custom domain. */
async function checkCustomDomain(ctx: RouteContext<unknown>, domain: string, zoneId: string): Promise<ZoneRecord> {
  if (!HOST.test(domain))
    throw invalidDomain(`'${domain.slice(0, 253)}' is not a valid value for domain because it must be a host name such as files.example.com`);
  const reserved = [ctx.deps.workers?.devDomain ?? null, ctx.deps.publicBuckets?.publicDomain ?? null].find((platform) => isPlatformHost(domain, platform));
  if (reserved) throw invalidDomain(`'${domain}' is not a valid value for domain because ${reserved} and the names under it belong to this server`);
  const zone = /^[0-9a-f]{32}$/.test(zoneId) ? await ctx.deps.control.getZone(ctx.account.id, zoneId) : null;
  if (!zone)
    throw new ApiError('API_BUCKET_DOMAIN_INVALID', {
      message: `'${zoneId.slice(0, 64)}' is not a valid value for zoneId because it is no zone of yours (GET /zones lists them)`,
      pointer: '/zoneId',
    });
  if (!isAtOrUnder(domain, zone.name))
    throw invalidDomain(`'${domain}' is not a valid value for domain because it is not ${zone.name} or a name under it, the zone given`);
  const scriptDomains = ctx.deps.workers ? await ctx.deps.workers.registry.listZoneRoutes(zone.id) : [];
  if (scriptDomains.some((route) => route.customDomain && route.pattern === `${domain}/*`)) {
    throw invalidDomain(`'${domain}' is not a valid value for domain because it is a custom domain of a script: detach it there first`);
  }
  return zone;
}

/**
 * A host attached to a bucket that no longer is (deleted, or made again since), or on a zone that
 * is no longer its account's, holds the host for nobody: it is forgotten, so the host can be
 * attached again (by that account's zone's new owner too).
 */
async function forgetStaleHolder(ctx: RouteContext<unknown>, domains: BucketDomains, domain: string): Promise<void> {
  const holder = await domains.holderOf(domain);
  if (!holder || !ctx.deps.store) return;
  const bucket = await accountStore(ctx.deps.store, holder.accountId)
    .getBucket(holder.bucket)
    .catch(() => null);
  const zone = await ctx.deps.control.getZone(holder.accountId, holder.zoneId);
  if (!bucket || bucket.created !== holder.bucketCreated || !zone) await domains.forgetStale(holder);
}

export const R2_DOMAIN_ROUTES: ApiRoute[] = [
  defineRoute({
    method: 'GET',
    path: MANAGED,
    operationId: 'r2-bucket-managed-domain-get',
    summary: "The bucket's managed public URL (pub-<id>.<public domain>) and whether it is on",
    tag: TAG,
    result: anyResult,
    async handler(ctx) {
      return successResponse(await managedJson(ctx));
    },
  }),
  defineRoute<z.infer<typeof managedBody>>({
    method: 'PUT',
    path: MANAGED,
    operationId: 'r2-bucket-managed-domain-put',
    summary: "Turn the bucket's managed public URL on or off (it serves the bucket read-only)",
    tag: TAG,
    body: { schema: managedBody, invalid: 'API_BUCKET_DOMAIN_INVALID', anyMediaType: true },
    result: anyResult,
    async handler(ctx) {
      return successResponse(await managedJson(ctx, ctx.body.enabled));
    },
  }),
  defineRoute({
    method: 'GET',
    path: CUSTOM,
    operationId: 'r2-bucket-custom-domains-list',
    summary: "The bucket's custom domains (result.domains)",
    tag: TAG,
    result: anyResult,
    async handler(ctx) {
      const { domains } = requireDomains(ctx);
      const list = await domains.listCustom(await bucketOf(ctx));
      const result = [];
      for (const domain of list) result.push(await customJson(ctx, domain));
      return successResponse({ domains: result });
    },
  }),
  defineRoute<z.infer<typeof createCustomBody>>({
    method: 'POST',
    path: CUSTOM,
    operationId: 'r2-bucket-custom-domains-create',
    summary: 'Attach a host of one of your zones to the bucket: it serves the bucket read-only',
    tag: TAG,
    body: { schema: createCustomBody, invalid: 'API_BUCKET_DOMAIN_INVALID', anyMediaType: true },
    result: anyResult,
    async handler(ctx) {
      const { domains } = requireDomains(ctx);
      const bucket = await bucketOf(ctx);
      const { domain, zoneId } = ctx.body;
      refuseCiphers(ctx.body.ciphers);
      await checkCustomDomain(ctx, domain, zoneId);
      await forgetStaleHolder(ctx, domains, domain);
      const added = await domains.addCustom(bucket, domain, zoneId, { enabled: ctx.body.enabled, minTls: ctx.body.minTLS ?? '1.0' });
      if (added === 'taken')
        throw new ApiError('API_BUCKET_DOMAIN_TAKEN', { message: `The custom domain ${domain} is already attached to a bucket: detach it there first` });
      return successResponse({ domain: added.domain, enabled: added.enabled, zoneId: added.zoneId, minTLS: added.minTls });
    },
  }),
  defineRoute({
    method: 'GET',
    path: `${CUSTOM}/:domain`,
    operationId: 'r2-bucket-custom-domains-get',
    summary: 'One custom domain of the bucket',
    tag: TAG,
    result: anyResult,
    async handler(ctx) {
      const { domains } = requireDomains(ctx);
      const name = (ctx.params.domain ?? '').toLowerCase();
      const domain = await domains.getCustom(await bucketOf(ctx), name);
      if (!domain) throw domainNotFound(name);
      return successResponse(await customJson(ctx, domain));
    },
  }),
  defineRoute<z.infer<typeof updateCustomBody>>({
    method: 'PUT',
    path: `${CUSTOM}/:domain`,
    operationId: 'r2-bucket-custom-domains-update',
    summary: 'Turn a custom domain on or off, or change its minTLS',
    tag: TAG,
    body: { schema: updateCustomBody, invalid: 'API_BUCKET_DOMAIN_INVALID', anyMediaType: true },
    result: anyResult,
    async handler(ctx) {
      const { domains } = requireDomains(ctx);
      const name = (ctx.params.domain ?? '').toLowerCase();
      refuseCiphers(ctx.body.ciphers);
      const updated = await domains.updateCustom(await bucketOf(ctx), name, {
        ...(ctx.body.enabled === undefined ? {} : { enabled: ctx.body.enabled }),
        ...(ctx.body.minTLS === undefined ? {} : { minTls: ctx.body.minTLS }),
      });
      if (!updated) throw domainNotFound(name);
      return successResponse({ domain: updated.domain, enabled: updated.enabled, minTLS: updated.minTls });
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: `${CUSTOM}/:domain`,
    operationId: 'r2-bucket-custom-domains-delete',
    summary: 'Detach a custom domain from the bucket',
    tag: TAG,
    result: anyResult,
    async handler(ctx) {
      const { domains } = requireDomains(ctx);
      const name = (ctx.params.domain ?? '').toLowerCase();
      if (!(await domains.deleteCustom(await bucketOf(ctx), name))) throw domainNotFound(name);
      return successResponse({ domain: name });
    },
  }),
];
