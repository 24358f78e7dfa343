/**
 * Zones: request schemas (POST /zones, PATCH /zones/:id, the list query), the response shape, and
 * the conversion from ZoneRecord. `origin` is an edgeport extension: where the edge proxies to.
 */
import { z } from 'zod';
import type { AccountRecord, ZoneRecord } from '../../db/control-store.ts';
import { registrableDomain } from '../../db/zone-names.ts';
import { refuse, refuseValue } from '../refinements.ts';

/** A DNS name of at least two labels: letters, digits and hyphens, 63 per label, 253 in all. */
export function isZoneName(name: string): boolean {
  if (name.length > 253 || name !== name.toLowerCase()) return false;
  const labels = name.split('.');
  if (labels.length < 2 || /^\d+$/.test(labels[labels.length - 1]!)) return false;
  return labels.every((label) => /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(label));
}

/** An origin URL: http or https, with a host, no credentials, query or fragment. */
export function originProblem(origin: string): string | null {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return 'it is not a URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'the origin must be an http:// or https:// URL';
  if (url.username || url.password) return 'the origin may not carry credentials';
  if (url.search || url.hash) return 'the origin may not have a query or fragment';
  return null;
}

const origin = z
  .string()
  .max(2048)
  .superRefine((value, ctx) => {
    const problem = originProblem(value);
    if (problem) refuseValue(ctx, [], value, problem);
  })
  .nullable()
  .describe("edgeport extension: the URL the edge proxies this zone's requests to, e.g. http://127.0.0.1:3000");

export const createZoneBody = z.strictObject({
  name: z
    .string()
    .describe('The domain name, e.g. example.com: a domain registered under a public suffix, or a subdomain of one')
    .superRefine((value, ctx) => {
      const name = value.toLowerCase();
      if (!isZoneName(name)) refuseValue(ctx, [], value, 'it is not a valid domain name (at least two labels of letters, digits and hyphens)');
      // A zone on a public suffix would hold every name registered under it (the real API's 1099).
      else if (registrableDomain(name) === null) {
        refuse(
          ctx,
          [],
          `We were unable to identify ${name} as a registered domain: ${name} is a public suffix, so a zone must be a domain registered under it, such as example.${name}`,
          'API_ZONE_PUBLIC_SUFFIX',
        );
      }
    }),
  account: z.strictObject({ id: z.string().describe('Your account id (GET /accounts)') }).optional(),
  type: z.literal('full').optional().describe('Only full zones exist in edgeport'),
  jump_start: z.boolean().optional().describe('Accepted and ignored (there are no DNS records to scan)'),
  origin: origin.optional(),
});
export type CreateZoneBody = z.infer<typeof createZoneBody>;

export const patchZoneBody = z.strictObject({
  origin: origin.optional(),
  paused: z.boolean().optional(),
  type: z.literal('full').optional(),
});
export type PatchZoneBody = z.infer<typeof patchZoneBody>;

export const listZonesQuery = z.object({
  name: z.string().min(1).optional().describe('Exact name, or contains:/starts_with:/ends_with: followed by text'),
  status: z.enum(['initializing', 'pending', 'active', 'moved']).optional(),
  'account.id': z.string().optional(),
  'account.name': z.string().optional(),
  page: z.coerce.number().int().min(1).default(1),
  per_page: z.coerce.number().int().min(5).max(50).default(20),
  order: z.enum(['name', 'status', 'account.id', 'account.name']).default('name'),
  direction: z.enum(['asc', 'desc']).default('asc'),
  match: z.enum(['any', 'all']).default('all'),
});

export const zoneResult = z.object({
  id: z.string(),
  name: z.string(),
  status: z.literal('active'),
  paused: z.boolean(),
  type: z.literal('full'),
  development_mode: z.number(),
  name_servers: z.array(z.string()),
  original_name_servers: z.null(),
  original_registrar: z.null(),
  original_dnshost: z.null(),
  created_on: z.string(),
  modified_on: z.string(),
  activated_on: z.string(),
  meta: z.object({ step: z.number(), phishing_detected: z.boolean() }),
  owner: z.object({ id: z.null(), type: z.literal('user'), email: z.string() }),
  account: z.object({ id: z.string(), name: z.string() }),
  permissions: z.array(z.string()),
  origin: z.string().nullable().describe('edgeport extension'),
});

export function toZoneJson(zone: ZoneRecord, account: AccountRecord): z.infer<typeof zoneResult> {
  const created = new Date(zone.created).toISOString();
  return {
    id: zone.id,
    name: zone.name,
    status: 'active',
    paused: zone.paused,
    type: 'full',
    development_mode: 0,
    name_servers: [],
    original_name_servers: null,
    original_registrar: null,
    original_dnshost: null,
    created_on: created,
    modified_on: new Date(zone.modified).toISOString(),
    activated_on: created,
    meta: { step: 4, phishing_detected: false },
    owner: { id: null, type: 'user', email: account.email },
    account: { id: account.id, name: account.name },
    permissions: ['#zone:read', '#zone:edit'],
    origin: zone.origin,
  };
}
