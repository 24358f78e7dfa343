/**
 * S3 access keys: created (random id and secret, or given), looked up for every signed request
 * (with a one-second cache, so a revocation takes effect within a second), listed and revoked.
 * The first start creates one from EDGEPORT_S3_ACCESS_KEY_ID / EDGEPORT_S3_SECRET_ACCESS_KEY, or
 * generates one and returns it to be printed once.
 */
import { randomBytes } from 'node:crypto';
import type { Clock } from '../../core/clock.ts';
import type { AccessKeyRow, MetadataStore } from '../../db/metadata-store.ts';

const CACHE_MS = 1000;

export interface NewAccessKey {
  accessKeyId: string;
  secretAccessKey: string;
}

export class AccessKeys {
  readonly #meta: MetadataStore;
  readonly #clock: Clock;
  readonly #cache = new Map<string, { secret: string | undefined; until: number }>();

  constructor(meta: MetadataStore, clock: Clock) {
    this.#meta = meta;
    this.#clock = clock;
  }

  /** The secret of a usable key, or undefined. */
  async secretFor(accessKeyId: string): Promise<string | undefined> {
    const now = this.#clock.now();
    const hit = this.#cache.get(accessKeyId);
    if (hit && hit.until > now) return hit.secret;
    const secret = await this.#meta.accessKeySecret(accessKeyId);
    if (this.#cache.size > 10_000) this.#cache.clear();
    this.#cache.set(accessKeyId, { secret, until: now + CACHE_MS });
    return secret;
  }

  async create(given?: NewAccessKey): Promise<NewAccessKey> {
    const key = given ?? {
      accessKeyId: `EP${randomBytes(9).toString('hex').toUpperCase()}`,
      secretAccessKey: randomBytes(30).toString('base64url'),
    };
    if (!/^[A-Za-z0-9]{8,128}$/.test(key.accessKeyId)) throw new Error('An access key id must be 8-128 letters and digits.');
    if (key.secretAccessKey.length < 16) throw new Error('A secret access key must be at least 16 characters.');
    await this.#meta.putAccessKey({ accessKeyId: key.accessKeyId, secret: key.secretAccessKey, created: this.#clock.now(), revoked: null });
    this.#cache.delete(key.accessKeyId);
    return key;
  }

  async list(): Promise<Array<Omit<AccessKeyRow, 'secret'>>> {
    return (await this.#meta.listAccessKeys()).map(({ accessKeyId, created, revoked }) => ({ accessKeyId, created, revoked }));
  }

  async revoke(accessKeyId: string): Promise<boolean> {
    const found = await this.#meta.revokeAccessKey(accessKeyId, this.#clock.now());
    this.#cache.delete(accessKeyId);
    return found;
  }

  /**
   * The bootstrap key: from the environment when both variables are set (kept in sync with them),
   * else generated when no key exists yet. Returns a key only when it was just generated.
   */
  async ensureBootstrap(env: NodeJS.ProcessEnv): Promise<NewAccessKey | undefined> {
    const id = env.EDGEPORT_S3_ACCESS_KEY_ID;
    const secret = env.EDGEPORT_S3_SECRET_ACCESS_KEY;
    if (id && secret) {
      if ((await this.#meta.accessKeySecret(id)) !== secret) await this.create({ accessKeyId: id, secretAccessKey: secret });
      return undefined;
    }
    if ((await this.#meta.listAccessKeys()).length > 0) return undefined;
    return this.create();
  }
}
