/**
 * ApiTokenStore: the API tokens of accounts (`Authorization: Bearer`), kept in the control store's
 * database (SQLite or PostgreSQL, the same rows). A token belongs to one account; every read and
 * write but the authentication lookup (by the hash of a presented value) is scoped by that account.
 * The token's value is never stored: only its SHA-256 hash.
 */

/** What one policy's resources name: `"*"`, or (under an account) the account's zones it covers. */
export type ApiTokenResources = Record<string, string | Record<string, string>>;

export interface ApiTokenPolicy {
  /** 32 lowercase hex characters, assigned by the server. */
  id: string;
  effect: 'allow' | 'deny';
  /** Resource names (`com.cloudflare.api.account.<id>`, `com.cloudflare.api.account.zone.<id>`, `...user.<id>`, or `*` forms). */
  resources: ApiTokenResources;
  permissionGroups: Array<{ id: string; name: string }>;
}

export type ApiTokenStatus = 'active' | 'disabled' | 'expired';

export interface ApiTokenRecord {
  /** 32 lowercase hex characters. */
  id: string;
  accountId: string;
  /** SHA-256 (base64url) of the value; a roll replaces it. */
  valueHash: string;
  name: string;
  /** As set by its owner; an `expiresOn` in the past refuses the token whatever this says. */
  status: ApiTokenStatus;
  policies: ApiTokenPolicy[];
  /** Epoch ms. */
  issuedOn: number;
  modifiedOn: number;
  /** Epoch ms on or after which the token is refused; null: never. */
  expiresOn: number | null;
  /** Epoch ms before which the token is refused; null: none. */
  notBefore: number | null;
  /**
   * `account`: an account-owned token (`/accounts/<id>/tokens`), which may hold no user
   * permission; absent: the user's (`/user/tokens`). Both authenticate alike.
   */
  owner?: 'account';
}

export interface ApiTokenStore {
  /** Stores a new token unless its account already has `maxPerAccount` (decided in the insert's transaction). */
  create(token: ApiTokenRecord, maxPerAccount: number): Promise<'created' | 'limit'>;
  /** The account's tokens, oldest first (at most the per-account limit exist). */
  list(accountId: string): Promise<ApiTokenRecord[]>;
  get(accountId: string, id: string): Promise<ApiTokenRecord | null>;
  /** The token whose value hashes to `valueHash`, of any account: authentication's one lookup. */
  findByValueHash(valueHash: string): Promise<ApiTokenRecord | null>;
  /** Null when the account has no such token. The plan must keep the id and the account. */
  update(accountId: string, id: string, plan: (current: ApiTokenRecord) => ApiTokenRecord): Promise<ApiTokenRecord | null>;
  delete(accountId: string, id: string): Promise<boolean>;
}

/** One stored row (the same columns in SQLite and PostgreSQL). */
export interface ApiTokenRow {
  id: string;
  account_id: string;
  value_hash: string;
  token: string;
  created: number | string;
}

type StoredPart = Omit<ApiTokenRecord, 'id' | 'accountId' | 'valueHash'>;

export function toApiTokenRow(token: ApiTokenRecord): ApiTokenRow {
  const { id, accountId, valueHash, ...rest } = token;
  return { id, account_id: accountId, value_hash: valueHash, token: JSON.stringify(rest satisfies StoredPart), created: token.issuedOn };
}

export function fromApiTokenRow(row: ApiTokenRow): ApiTokenRecord {
  return { ...(JSON.parse(row.token) as StoredPart), id: row.id, accountId: row.account_id, valueHash: row.value_hash };
}

/** A plan's result, checked: it may not move the token to another id or account. */
export function checkedPlan(current: ApiTokenRecord, next: ApiTokenRecord): ApiTokenRecord {
  if (next.id !== current.id || next.accountId !== current.accountId) throw new Error(`API token ${current.id} keeps its id and account.`);
  return next;
}
