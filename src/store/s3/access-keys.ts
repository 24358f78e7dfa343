/**
 * S3 access keys: each belongs to one account and reaches only its buckets, optionally limited to
 * named buckets and to reading (key-grant.ts). Created (random id and secret, or given), looked up
 * for every signed request (with a one-second cache, so a revocation takes effect within a
 * second; the secret is stored sealed and opened by the lookup, since verifying a signature needs
 * it in clear), listed and revoked by their account. The first start gives the first account a key from
 * EDGEPORT_S3_ACCESS_KEY_ID / EDGEPORT_S3_SECRET_ACCESS_KEY, or generates one and returns it to be
 * printed once.
 */
import { randomBytes } from 'node:crypto';
import type { Clock } from '../../core/clock.ts';
import type { AccessKeyPermission, ListedAccessKeyRow, MetadataStore } from '../../db/metadata-store.ts';
import type { S3AccessKey } from './key-grant.ts';

const CACHE_MS = 1000;
const CACHE_MAX = 10_000;

export interface NewAccessKey {
  accessKeyId: string;
  secretAccessKey: string;
}

export interface AccessKeyOptions {
  /** Default `admin_read_write`: everything in the account. */
  permission?: AccessKeyPermission;
  /** Limits an `object_*` key to these buckets of the account; null or absent: all of them. */
  buckets?: readonly string[] | null;
  /** The id and secret to use instead of random ones (the bootstrap key from the environment). */
  given?: NewAccessKey;
}

export type ListedAccessKey = ListedAccessKeyRow;

export class AccessKeys {
  readonly #meta: MetadataStore;
  readonly #clock: Clock;
  readonly #cache = new Map<string, { key: S3AccessKey | undefined; until: number }>();

  constructor(meta: MetadataStore, clock: Clock) {
    this.#meta = meta;
    this.#clock = clock;
  }

  /** A usable key of an account (not revoked), or undefined. */
  async keyFor(accessKeyId: string): Promise<S3AccessKey | undefined> {
    const now = this.#clock.now();
    const hit = this.#cache.get(accessKeyId);
    if (hit && hit.until > now) return hit.key;
    const row = await this.#meta.accessKey(accessKeyId);
    // A key of no account waits for the first account to adopt it (at start): until then it reaches nothing.
    const key = row && row.accountId !== null
      ? { secret: row.secret, accountId: row.accountId, permission: row.permission, buckets: row.buckets }
      : undefined;
    if (this.#cache.size >= CACHE_MAX) this.#cache.clear();
    this.#cache.set(accessKeyId, { key, until: now + CACHE_MS });
    return key;
  }

  /** Makes a key for the account. The caller has checked the permission and bucket names. */
  async create(accountId: string, options: AccessKeyOptions = {}): Promise<NewAccessKey & { created: number }> {
    const key = options.given ?? {
      accessKeyId: `EP${randomBytes(9).toString('hex').toUpperCase()}`,
      secretAccessKey: randomBytes(30).toString('base64url'),
    };
    if (!/^[A-Za-z0-9]{8,128}$/.test(key.accessKeyId)) throw new Error('An access key id must be 8-128 letters and digits.');
    if (key.secretAccessKey.length < 16) throw new Error('A secret access key must be at least 16 characters.');
    const created = this.#clock.now();
    await this.#meta.putAccessKey({
      accessKeyId: key.accessKeyId, secret: key.secretAccessKey, accountId, permission: options.permission ?? 'admin_read_write',
      buckets: options.buckets ? [...options.buckets] : null, created, revoked: null,
    });
    this.#cache.delete(key.accessKeyId);
    return { ...key, created };
  }

  /** The account's keys, revoked ones included (never their secrets). */
  async list(accountId: string): Promise<ListedAccessKey[]> {
    return this.#meta.listAccessKeys(accountId);
  }

  /** false when the account has no such key. */
  async revoke(accountId: string, accessKeyId: string): Promise<boolean> {
    const found = await this.#meta.revokeAccessKey(accountId, accessKeyId, this.#clock.now());
    this.#cache.delete(accessKeyId);
    return found;
  }

  /**
   * The bootstrap key of the first account: from the environment when both variables are set (kept
   * in line with them), else generated when no key exists yet. Returns a key only when it was just
   * generated.
   */
  async ensureBootstrap(env: NodeJS.ProcessEnv, accountId: string): Promise<NewAccessKey | undefined> {
    const id = env.EDGEPORT_S3_ACCESS_KEY_ID;
    const secret = env.EDGEPORT_S3_SECRET_ACCESS_KEY;
    if (id && secret) {
      const current = await this.#meta.accessKey(id);
      if (current?.secret !== secret || current.accountId !== accountId) await this.create(accountId, { given: { accessKeyId: id, secretAccessKey: secret } });
      return undefined;
    }
    if ((await this.#meta.listAccessKeys()).length > 0) return undefined;
    const { accessKeyId, secretAccessKey } = await this.create(accountId);
    return { accessKeyId, secretAccessKey };
  }
}
