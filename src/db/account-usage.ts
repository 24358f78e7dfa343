/**
 * What an account stores, against its quotas: the `account_usage` row every write that adds or
 * frees stored bytes updates in its own transaction (migration 16). A write that would take the
 * account past a quota is refused inside that transaction with a QuotaRefusal, so nothing of it is
 * kept; the faces turn it into their error (STORE_QUOTA_EXCEEDED, API_WORKER_QUOTA).
 */
import type { AccountQuotas } from '../config/quotas.ts';

export type { AccountQuotas };

/** What an account stores now and the quotas that apply to it (0: no limit). */
export interface AccountUsage {
  objectBytes: number;
  objectCount: number;
  scriptBytes: number;
  quotas: AccountQuotas;
  /** Which quotas are the operator's for this account rather than the server's `[quotas]`. */
  own: { maxObjectBytes: boolean; maxObjects: boolean; maxScriptBytes: boolean };
}

/** The quotas the operator may set per account; null goes back to the server's. */
export type AccountQuotaOverrides = Partial<Record<'maxObjectBytes' | 'maxObjects' | 'maxScriptBytes', number | null>>;

export type QuotaName = 'maxObjectBytes' | 'maxObjects' | 'maxScriptBytes';

/** A write refused because the account would go past `quota` (of kind `name`) with `adding` more on `used`. */
export class QuotaRefusal extends Error {
  override name = 'QuotaRefusal';
  readonly quota: QuotaName;
  readonly limit: number;
  readonly used: number;
  readonly adding: number;

  constructor(quota: QuotaName, limit: number, used: number, adding: number) {
    super(`The account would store ${used + adding} against its ${quota} quota of ${limit}.`);
    this.quota = quota;
    this.limit = limit;
    this.used = used;
    this.adding = adding;
  }
}

/** The account of a stored bucket name (`<account>/<name>`); '' for a bucket of no account. */
export function accountOfBucket(stored: string): string {
  const slash = stored.indexOf('/');
  return slash < 0 ? '' : stored.slice(0, slash);
}

/** An `account_usage` row as both databases return it (PostgreSQL's BIGINTs as strings). */
export interface AccountUsageRecord {
  object_bytes: number | string;
  object_count: number | string;
  script_bytes: number | string;
  max_object_bytes: number | string | null;
  max_objects: number | string | null;
  max_script_bytes: number | string | null;
}

/** The row (or none yet: nothing stored) with the server's quotas filled in where the account has none of its own. */
export function toAccountUsage(row: AccountUsageRecord | undefined, defaults: AccountQuotas): AccountUsage {
  const own = (value: number | string | null | undefined): number | null => (value === null || value === undefined ? null : Number(value));
  const maxObjectBytes = own(row?.max_object_bytes);
  const maxObjects = own(row?.max_objects);
  const maxScriptBytes = own(row?.max_script_bytes);
  return {
    objectBytes: Number(row?.object_bytes ?? 0),
    objectCount: Number(row?.object_count ?? 0),
    scriptBytes: Number(row?.script_bytes ?? 0),
    quotas: {
      maxObjectBytes: maxObjectBytes ?? defaults.maxObjectBytes,
      maxObjects: maxObjects ?? defaults.maxObjects,
      maxScriptBytes: maxScriptBytes ?? defaults.maxScriptBytes,
      maxVersionsPerScript: defaults.maxVersionsPerScript,
    },
    own: { maxObjectBytes: maxObjectBytes !== null, maxObjects: maxObjects !== null, maxScriptBytes: maxScriptBytes !== null },
  };
}

/**
 * The refusal for a charge of `bytes` and `count` the conditional update did not apply, read from
 * the account's row as it is now (the row the update saw, as both run in one transaction).
 */
export function refusalFor(usage: AccountUsage, bytes: number, count: number): QuotaRefusal {
  const { maxObjectBytes, maxObjects } = usage.quotas;
  if (count > 0 && maxObjects > 0 && usage.objectCount + count > maxObjects) return new QuotaRefusal('maxObjects', maxObjects, usage.objectCount, count);
  return new QuotaRefusal('maxObjectBytes', maxObjectBytes, usage.objectBytes, bytes);
}
