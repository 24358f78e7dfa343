/**
 * BucketDomains: where buckets are public (migration 19). A bucket's managed domain is
 * `<public id>.<[r2] public_domain>` (the public id made once, 'pub-' and 32 hex digits, when it is
 * first turned on; turning it off keeps the id, so turning it on again gives the same address). A
 * custom domain is a host of one of the account's zones, served by one bucket only. Each names the
 * bucket by its stored name (`<account>/<name>`) and its creation time: a bucket deleted and made
 * again under the name is another bucket, public by none of the old one's settings (its rows are
 * replaced by the first write and never served meanwhile). Written once for SQLite and PostgreSQL,
 * as the script registry (its drivers run these operations in one transaction).
 */
import { randomBytes } from 'node:crypto';
import type { Clock } from '../../core/clock.ts';
import type { Op, Query, RegistryDriver, Row } from '../scripts/script-registry.ts';

/** A bucket as these rows name it. */
export interface BucketRef {
  accountId: string;
  /** The name the account knows it by. */
  name: string;
  /** Its creation (epoch ms), which tells it from a bucket made again under the name. */
  created: number;
}

export interface ManagedDomain {
  publicId: string;
  enabled: boolean;
}

export type MinTls = '1.0' | '1.1' | '1.2' | '1.3';

export interface CustomDomain {
  domain: string;
  accountId: string;
  bucket: string;
  bucketCreated: number;
  zoneId: string;
  enabled: boolean;
  minTls: MinTls;
  created: number;
}

/** What a host serves (the edge's lookup): the bucket, and for a custom domain the zone whose log jobs get its requests. */
export interface PublicTarget {
  accountId: string;
  bucket: string;
  bucketCreated: number;
  zoneId: string | null;
}

function* q(sql: string, ...params: unknown[]): Op<Row[]> {
  return yield { sql, params } satisfies Query;
}

function stored(bucket: BucketRef): string {
  return `${bucket.accountId}/${bucket.name}`;
}

function toCustom(row: Row): CustomDomain {
  const bucket = String(row.bucket);
  return {
    domain: String(row.domain),
    accountId: String(row.account_id),
    bucket: bucket.slice(bucket.indexOf('/') + 1),
    bucketCreated: Number(row.bucket_created),
    zoneId: String(row.zone_id),
    enabled: Number(row.enabled) === 1,
    minTls: String(row.min_tls) as MinTls,
    created: Number(row.created),
  };
}

export class BucketDomains {
  readonly #driver: RegistryDriver;
  readonly #clock: Clock;

  constructor(driver: RegistryDriver, clock: Clock) {
    this.#driver = driver;
    this.#clock = clock;
  }

  close(): Promise<void> {
    return this.#driver.close();
  }

  /** The bucket's managed domain, or null when it was never turned on (for this bucket). */
  getManaged(bucket: BucketRef): Promise<ManagedDomain | null> {
    return this.#driver.run(function* getManagedOp() {
      const [row] = yield* q('SELECT public_id, enabled FROM bucket_managed_domains WHERE bucket = ? AND bucket_created = ?', stored(bucket), bucket.created);
      return row ? { publicId: String(row.public_id), enabled: Number(row.enabled) === 1 } : null;
    });
  }

  /** Turns the bucket's managed domain on or off; its public id is made the first time. */
  setManaged(bucket: BucketRef, enabled: boolean): Promise<ManagedDomain> {
    const fresh = `pub-${randomBytes(16).toString('hex')}`;
    return this.#driver.run(function* setManagedOp() {
      const [row] = yield* q('SELECT public_id, bucket_created FROM bucket_managed_domains WHERE bucket = ?', stored(bucket));
      // A row of an earlier bucket of the name is replaced, its public id with it.
      const publicId = row && Number(row.bucket_created) === bucket.created ? String(row.public_id) : fresh;
      yield* q('DELETE FROM bucket_managed_domains WHERE bucket = ?', stored(bucket));
      yield* q(
        'INSERT INTO bucket_managed_domains (bucket, account_id, bucket_created, public_id, enabled) VALUES (?, ?, ?, ?, ?)',
        stored(bucket),
        bucket.accountId,
        bucket.created,
        publicId,
        enabled ? 1 : 0,
      );
      return { publicId, enabled };
    });
  }

  /** The bucket's custom domains. */
  listCustom(bucket: BucketRef): Promise<CustomDomain[]> {
    return this.#driver.run(function* listCustomOp() {
      return (yield* q('SELECT * FROM bucket_custom_domains WHERE bucket = ? AND bucket_created = ? ORDER BY domain', stored(bucket), bucket.created)).map(
        toCustom,
      );
    });
  }

  getCustom(bucket: BucketRef, domain: string): Promise<CustomDomain | null> {
    return this.#driver.run(function* getCustomOp() {
      const [row] = yield* q(
        'SELECT * FROM bucket_custom_domains WHERE domain = ? AND bucket = ? AND bucket_created = ?',
        domain,
        stored(bucket),
        bucket.created,
      );
      return row ? toCustom(row) : null;
    });
  }

  /**
   * Attaches `domain` (on the account's zone `zoneId`) to the bucket; 'taken' when another bucket
   * (of any account) has it. A row left by an earlier bucket of this account's name is replaced.
   */
  addCustom(bucket: BucketRef, domain: string, zoneId: string, options: { enabled: boolean; minTls: MinTls }): Promise<CustomDomain | 'taken'> {
    const now = this.#clock.now();
    return this.#driver.run(function* addCustomOp(): Op<CustomDomain | 'taken'> {
      const [row] = yield* q('SELECT bucket, bucket_created FROM bucket_custom_domains WHERE domain = ?', domain);
      if (row && !(String(row.bucket) === stored(bucket) && Number(row.bucket_created) !== bucket.created)) return 'taken';
      yield* q('DELETE FROM bucket_custom_domains WHERE domain = ?', domain);
      yield* q(
        `INSERT INTO bucket_custom_domains (domain, account_id, bucket, bucket_created, zone_id, enabled, min_tls, created)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        domain,
        bucket.accountId,
        stored(bucket),
        bucket.created,
        zoneId,
        options.enabled ? 1 : 0,
        options.minTls,
        now,
      );
      return {
        domain,
        accountId: bucket.accountId,
        bucket: bucket.name,
        bucketCreated: bucket.created,
        zoneId,
        enabled: options.enabled,
        minTls: options.minTls,
        created: now,
      };
    });
  }

  /** Changes a custom domain of the bucket; null when the bucket has no such domain. */
  updateCustom(bucket: BucketRef, domain: string, change: { enabled?: boolean; minTls?: MinTls }): Promise<CustomDomain | null> {
    return this.#driver.run(function* updateCustomOp() {
      const [row] = yield* q(
        'SELECT * FROM bucket_custom_domains WHERE domain = ? AND bucket = ? AND bucket_created = ?',
        domain,
        stored(bucket),
        bucket.created,
      );
      if (!row) return null;
      const current = toCustom(row);
      const next = { ...current, enabled: change.enabled ?? current.enabled, minTls: change.minTls ?? current.minTls };
      yield* q('UPDATE bucket_custom_domains SET enabled = ?, min_tls = ? WHERE domain = ?', next.enabled ? 1 : 0, next.minTls, domain);
      return next;
    });
  }

  /** Detaches a custom domain from the bucket; false when the bucket has no such domain. */
  deleteCustom(bucket: BucketRef, domain: string): Promise<boolean> {
    return this.#driver.run(function* deleteCustomOp() {
      const [row] = yield* q(
        'SELECT domain FROM bucket_custom_domains WHERE domain = ? AND bucket = ? AND bucket_created = ?',
        domain,
        stored(bucket),
        bucket.created,
      );
      if (!row) return false;
      yield* q('DELETE FROM bucket_custom_domains WHERE domain = ?', domain);
      return true;
    });
  }

  /** Whichever bucket holds `domain` (any account's), for the caller to tell a live holder from a stale one. */
  holderOf(domain: string): Promise<CustomDomain | null> {
    return this.#driver.run(function* holderOp() {
      const [row] = yield* q('SELECT * FROM bucket_custom_domains WHERE domain = ?', domain);
      return row ? toCustom(row) : null;
    });
  }

  /** Forgets `domain` if `holder` still holds it (a holder whose bucket or zone is gone); false when the row changed since. */
  forgetStale(holder: CustomDomain): Promise<boolean> {
    return this.#driver.run(function* forgetOp() {
      const [row] = yield* q('SELECT bucket, bucket_created, zone_id FROM bucket_custom_domains WHERE domain = ?', holder.domain);
      if (
        !row ||
        String(row.bucket) !== `${holder.accountId}/${holder.bucket}` ||
        Number(row.bucket_created) !== holder.bucketCreated ||
        String(row.zone_id) !== holder.zoneId
      )
        return false;
      yield* q('DELETE FROM bucket_custom_domains WHERE domain = ?', holder.domain);
      return true;
    });
  }

  /** What the managed domain `publicId` serves when it is on. */
  managedTarget(publicId: string): Promise<PublicTarget | null> {
    return this.#driver.run(function* managedTargetOp() {
      const [row] = yield* q('SELECT bucket, account_id, bucket_created FROM bucket_managed_domains WHERE public_id = ? AND enabled = 1', publicId);
      if (!row) return null;
      const bucket = String(row.bucket);
      return { accountId: String(row.account_id), bucket: bucket.slice(bucket.indexOf('/') + 1), bucketCreated: Number(row.bucket_created), zoneId: null };
    });
  }

  /** What the custom domain `host` serves when it is on. */
  customTarget(host: string): Promise<PublicTarget | null> {
    return this.#driver.run(function* customTargetOp() {
      const [row] = yield* q('SELECT * FROM bucket_custom_domains WHERE domain = ? AND enabled = 1', host);
      if (!row) return null;
      const domain = toCustom(row);
      return { accountId: domain.accountId, bucket: domain.bucket, bucketCreated: domain.bucketCreated, zoneId: domain.zoneId };
    });
  }
}
