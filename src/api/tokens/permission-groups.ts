/**
 * The permission groups an API token's policies grant, with the platform's own ids and names (its
 * published list of token permissions), and what each lets a token do on this server: read, or
 * edit (which includes read), one service, on the resources of the group's scope.
 *
 * By design: only the groups naming something this server has are offered; a policy naming another
 * group id is refused (it would grant nothing). Custom log fields (the http_log_custom_fields
 * rulesets) count as Logs, with log jobs.
 */

/** What a route touches, as token permissions see it. */
export type TokenService = 'zones' | 'logs' | 'store' | 'scripts' | 'workers_routes' | 'account' | 'account_tokens' | 'tokens' | 'user';
export type TokenAccess = 'read' | 'edit';
export type GroupScope = 'com.cloudflare.api.user' | 'com.cloudflare.api.account' | 'com.cloudflare.api.account.zone';

export interface PermissionGroup {
  id: string;
  name: string;
  description: string;
  scope: GroupScope;
  service: TokenService;
  access: TokenAccess;
  category: 'account_and_billing' | 'dns_and_zones' | 'developer_platform' | 'analytics_and_logs';
}

const USER = 'com.cloudflare.api.user';
const ACCOUNT = 'com.cloudflare.api.account';
const ZONE = 'com.cloudflare.api.account.zone';

export const PERMISSION_GROUPS: readonly PermissionGroup[] = [
  {
    id: '0cc3a61731504c89b99ec1be78b77aa0',
    name: 'API Tokens Read',
    description: "Grants read access to user's API Tokens",
    scope: USER,
    service: 'tokens',
    access: 'read',
    category: 'account_and_billing',
  },
  {
    id: '686d18d5ac6c441c867cbf6771e58a0a',
    name: 'API Tokens Write',
    description: "Grants write access to user's API Tokens",
    scope: USER,
    service: 'tokens',
    access: 'edit',
    category: 'account_and_billing',
  },
  {
    id: '8acbe5bb0d54464ab867149d7f7cf8ac',
    name: 'User Details Read',
    description: 'Grants read access to user details',
    scope: USER,
    service: 'user',
    access: 'read',
    category: 'account_and_billing',
  },
  {
    id: 'c1fde68c7bcc44588cbb6ddbc16d6480',
    name: 'Account Settings Read',
    description: 'Grants read access to Account resources, account membership, and account level features',
    scope: ACCOUNT,
    service: 'account',
    access: 'read',
    category: 'account_and_billing',
  },
  {
    id: '1af1fa2adc104452b74a9a3364202f20',
    name: 'Account Settings Write',
    description: 'Grants write access to Account resources, account membership, and account level features',
    scope: ACCOUNT,
    service: 'account',
    access: 'edit',
    category: 'account_and_billing',
  },
  {
    id: 'eb56a6953c034b9d97dd838155666f06',
    name: 'Account API Tokens Read',
    description: 'Grants read access to account API Tokens',
    scope: ACCOUNT,
    service: 'account_tokens',
    access: 'read',
    category: 'account_and_billing',
  },
  {
    id: '5bc3f8b21c554832afc660159ab75fa4',
    name: 'Account API Tokens Write',
    description: 'Grants write access to account API Tokens',
    scope: ACCOUNT,
    service: 'account_tokens',
    access: 'edit',
    category: 'account_and_billing',
  },
  {
    id: 'b4992e1108244f5d8bfbd5744320c2e1',
    name: 'Workers R2 Storage Read',
    description: 'Grants read access to R2 buckets and objects',
    scope: ACCOUNT,
    service: 'store',
    access: 'read',
    category: 'developer_platform',
  },
  {
    id: 'bf7481a1826f439697cb59a20b22293e',
    name: 'Workers R2 Storage Write',
    description: 'Grants write access to R2 buckets and objects',
    scope: ACCOUNT,
    service: 'store',
    access: 'edit',
    category: 'developer_platform',
  },
  {
    id: '1a71c399035b4950a1bd1466bbe4f420',
    name: 'Workers Scripts Read',
    description: 'Grants read access to Cloudflare Workers scripts',
    scope: ACCOUNT,
    service: 'scripts',
    access: 'read',
    category: 'developer_platform',
  },
  {
    id: 'e086da7e2179491d91ee5f35b3ca210a',
    name: 'Workers Scripts Write',
    description: 'Grants write access to Cloudflare Workers scripts',
    scope: ACCOUNT,
    service: 'scripts',
    access: 'edit',
    category: 'developer_platform',
  },
  {
    id: 'c8fed203ed3043cba015a93ad1616f1f',
    name: 'Zone Read',
    description: 'Grants read access to zone management',
    scope: ZONE,
    service: 'zones',
    access: 'read',
    category: 'dns_and_zones',
  },
  {
    id: 'e6d2666161e84845a636613608cee8d5',
    name: 'Zone Write',
    description: 'Grants write access to zone management',
    scope: ZONE,
    service: 'zones',
    access: 'edit',
    category: 'dns_and_zones',
  },
  {
    id: 'c4a30cd58c5d42619c86a3c36c441e2d',
    name: 'Logs Read',
    description: 'Grants read access to logs and logpush jobs',
    scope: ZONE,
    service: 'logs',
    access: 'read',
    category: 'analytics_and_logs',
  },
  {
    id: '3e0b5820118e47f3922f7c989e673882',
    name: 'Logs Write',
    description: 'Grants write access to logpush jobs',
    scope: ZONE,
    service: 'logs',
    access: 'edit',
    category: 'analytics_and_logs',
  },
  {
    id: '2072033d694d415a936eaeb94e6405b8',
    name: 'Workers Routes Read',
    description: 'Grants read access to Cloudflare Workers routes',
    scope: ZONE,
    service: 'workers_routes',
    access: 'read',
    category: 'developer_platform',
  },
  {
    id: '28f4b596e7d643029c524985477ae49a',
    name: 'Workers Routes Write',
    description: 'Grants write access to Cloudflare Workers routes',
    scope: ZONE,
    service: 'workers_routes',
    access: 'edit',
    category: 'developer_platform',
  },
];

const BY_ID = new Map(PERMISSION_GROUPS.map((group) => [group.id, group]));

export function permissionGroup(id: string): PermissionGroup | undefined {
  return BY_ID.get(id);
}
