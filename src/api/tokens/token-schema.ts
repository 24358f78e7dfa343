/**
 * Shapes of the API token routes (`/user/tokens`): the create/update body in the platform's
 * snake_case (name, policies, expires_on, not_before, status), the token as answered, and the
 * checks a body gets before anything is written: known permission groups, resource names of the
 * forms token-policy.ts reads, and bounds on every list.
 */
import { z } from 'zod';
import type { ApiTokenPolicy, ApiTokenRecord, ApiTokenResources } from '../../db/api-tokens/api-token-store.ts';
import { refuseValue } from '../refinements.ts';
import { permissionGroup, type PermissionGroup } from './permission-groups.ts';
import { ACCOUNT_RESOURCE, USER_RESOURCE, ZONE_RESOURCE } from './token-policy.ts';

/** Default number of tokens an account may hold (`maxTokensPerAccount` of the API service). */
export const DEFAULT_MAX_TOKENS_PER_ACCOUNT = 50;
export const MAX_POLICIES = 32;
export const MAX_GROUPS_PER_POLICY = 32;
export const MAX_RESOURCES_PER_POLICY = 64;

const HEX32 = '[0-9a-f]{32}';
const USER_KEY = new RegExp(`^com\\.cloudflare\\.api\\.user\\.${HEX32}$`);
const ACCOUNT_KEY = new RegExp(`^com\\.cloudflare\\.api\\.account\\.(${HEX32}|\\*)$`);
const ZONE_KEY = new RegExp(`^com\\.cloudflare\\.api\\.account\\.zone\\.(${HEX32}|\\*)$`);

const RESOURCE_FORMS = `com.cloudflare.api.account.<account id>, com.cloudflare.api.account.zone.<zone id>, com.cloudflare.api.user.<user id> (or * for an id)`;

/**
 * `expires_on` / `not_before`: an RFC 3339 date-time with its time zone (`Z` or `+hh:mm`), a real
 * calendar day and time of day, as the platform writes them. Not Date.parse, which takes `"1"`,
 * `"2030"`, `"March 7"` or a date without a zone (read in the server's time zone) as some instant.
 */
export const tokenDateTime = z.iso
  .datetime({
    offset: true,
    error: 'it must be an RFC 3339 date-time with a time zone, such as 2030-01-01T00:00:00Z or 2030-01-01T09:00:00+09:00',
  })
  .max(64);

const permissionGroupRef = z.object({
  id: z.string().max(64),
  name: z.string().max(256).optional(),
  meta: z.record(z.string(), z.unknown()).optional(),
});

const resources = z.record(z.string().max(256), z.union([z.literal('*'), z.record(z.string().max(256), z.literal('*'))]));

const policyBody = z
  .object({
    id: z.string().max(64).optional().describe('Ignored: the server assigns policy ids'),
    effect: z.enum(['allow', 'deny']),
    permission_groups: z.array(permissionGroupRef).min(1).max(MAX_GROUPS_PER_POLICY),
    resources,
  })
  .superRefine((policy, ctx) => {
    policy.permission_groups.forEach((group, i) => {
      if (!permissionGroup(group.id))
        refuseValue(
          ctx,
          ['permission_groups', i, 'id'],
          group.id,
          'it is not a permission group of this server: GET /user/tokens/permission_groups lists them',
        );
    });
    const entries = Object.entries(policy.resources);
    if (entries.length === 0) refuseValue(ctx, ['resources'], policy.resources, `it must name at least one resource: ${RESOURCE_FORMS}`);
    if (entries.length > MAX_RESOURCES_PER_POLICY)
      refuseValue(ctx, ['resources'], `${entries.length} resources`, `a policy may name at most ${MAX_RESOURCES_PER_POLICY}`);
    for (const [key, value] of entries) {
      const known = USER_KEY.test(key) || ACCOUNT_KEY.test(key) || ZONE_KEY.test(key);
      if (!known) refuseValue(ctx, ['resources', key], key, `a resource must be one of ${RESOURCE_FORMS}`);
      else if (typeof value === 'object') {
        if (!ACCOUNT_KEY.test(key)) refuseValue(ctx, ['resources', key], value, 'only an account resource may name zones under it');
        const zones = Object.keys(value);
        if (zones.length === 0 || zones.length > MAX_RESOURCES_PER_POLICY)
          refuseValue(ctx, ['resources', key], value, `it must name 1 to ${MAX_RESOURCES_PER_POLICY} zones`);
        for (const zone of zones)
          if (!ZONE_KEY.test(zone))
            refuseValue(
              ctx,
              ['resources', key, zone],
              zone,
              'a resource under an account must be com.cloudflare.api.account.zone.<zone id> or com.cloudflare.api.account.zone.*',
            );
      }
    }
  });

export const tokenBody = z
  .strictObject({
    name: z.string().trim().min(1).max(120),
    policies: z.array(policyBody).min(1).max(MAX_POLICIES),
    condition: z.object({}).strict().optional().describe('IP conditions are not supported: leave it out or send {}'),
    expires_on: tokenDateTime.nullable().optional(),
    not_before: tokenDateTime.nullable().optional(),
    status: z.enum(['active', 'disabled']).optional().describe('Update only'),
  })
  .superRefine((body, ctx) => {
    if (body.expires_on && body.not_before && Date.parse(body.expires_on) <= Date.parse(body.not_before)) {
      refuseValue(ctx, ['expires_on'], body.expires_on, 'it must be after not_before');
    }
  });

export type TokenBody = z.infer<typeof tokenBody>;

const policyResult = z.object({
  id: z.string(),
  effect: z.enum(['allow', 'deny']),
  resources: z.record(z.string(), z.union([z.string(), z.record(z.string(), z.string())])),
  permission_groups: z.array(z.object({ id: z.string(), name: z.string() })),
});

export const tokenResult = z.object({
  id: z.string(),
  name: z.string(),
  status: z.enum(['active', 'disabled', 'expired']),
  issued_on: z.string(),
  modified_on: z.string(),
  expires_on: z.string().optional(),
  not_before: z.string().optional(),
  policies: z.array(policyResult),
  condition: z.object({}),
  value: z.string().optional().describe('Only in the answer to the create: the value is shown once'),
});

export const permissionGroupResult = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  category: z.string(),
  is_selectable: z.boolean(),
  scopes: z.array(z.string()),
});

export const listTokensQuery = z.object({
  page: z.coerce.number().int().min(1).default(1),
  per_page: z.coerce.number().int().min(5).max(100).default(20),
  direction: z.enum(['asc', 'desc']).default('asc'),
  include_expired: z.enum(['true', 'false']).optional(),
});

export const permissionGroupsQuery = z.object({
  name: z.string().max(256).optional(),
  scope: z.string().max(256).optional(),
});

/** The body's policies as stored: server-assigned ids, group names from the catalog. */
export function toPolicies(body: TokenBody, newId: () => string): ApiTokenPolicy[] {
  return body.policies.map((policy) => ({
    id: newId(),
    effect: policy.effect,
    resources: policy.resources as ApiTokenResources,
    permissionGroups: policy.permission_groups.map((ref) => ({ id: ref.id, name: permissionGroup(ref.id)!.name })),
  }));
}

/** The accounts, zones and users a token's policies name (checked against the caller's own). */
export function namedResources(policies: readonly ApiTokenPolicy[]): { accounts: Set<string>; zones: Set<string>; users: Set<string> } {
  const accounts = new Set<string>();
  const zones = new Set<string>();
  const users = new Set<string>();
  const add = (key: string) => {
    if (key.startsWith(ZONE_RESOURCE)) zones.add(key.slice(ZONE_RESOURCE.length));
    else if (key.startsWith(ACCOUNT_RESOURCE)) accounts.add(key.slice(ACCOUNT_RESOURCE.length));
    else if (key.startsWith(USER_RESOURCE)) users.add(key.slice(USER_RESOURCE.length));
  };
  for (const policy of policies) {
    for (const [key, value] of Object.entries(policy.resources)) {
      add(key);
      if (typeof value === 'object') for (const zone of Object.keys(value)) add(zone);
    }
  }
  for (const set of [accounts, zones]) set.delete('*');
  return { accounts, zones, users };
}

function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function toTokenJson(token: ApiTokenRecord, status: ApiTokenRecord['status'], value?: string): z.infer<typeof tokenResult> {
  return {
    id: token.id,
    name: token.name,
    status,
    issued_on: iso(token.issuedOn),
    modified_on: iso(token.modifiedOn),
    ...(token.expiresOn === null ? {} : { expires_on: iso(token.expiresOn) }),
    ...(token.notBefore === null ? {} : { not_before: iso(token.notBefore) }),
    policies: token.policies.map((policy) => ({
      id: policy.id,
      effect: policy.effect,
      resources: policy.resources,
      permission_groups: policy.permissionGroups,
    })),
    condition: {},
    ...(value === undefined ? {} : { value }),
  };
}

export function toPermissionGroupJson(group: PermissionGroup): z.infer<typeof permissionGroupResult> {
  return { id: group.id, name: group.name, description: group.description, category: group.category, is_selectable: true, scopes: [group.scope] };
}

export { iso as tokenDate };
