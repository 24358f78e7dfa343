/**
 * Which hosts serve public buckets (for the edge): `<public id>.<[r2] public_domain>` the bucket
 * whose managed URL is on, and a custom domain the bucket it is attached to (on the zone it was
 * attached on: a zone deleted and made again by another account never serves it). Lookups are
 * cached for CACHE_MS per host (a change reaches every instance within that), at most MAX_CACHED
 * hosts; a bucket deleted or made again since its domain was set serves nothing. While the
 * database cannot be read (a backend fault), a host's last lookup answers instead, at once, as the
 * edge's zone cache does: a custom domain's zone keeps being served through an outage.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { BucketDomains, PublicTarget } from '../../db/public-buckets/bucket-domains.ts';
import { backendFaultOf } from '../../core/errors/backend-fault.ts';
import { OutageMemory } from '../../core/errors/outage-memory.ts';
import { accountStore } from '../engine/account-store.ts';
import type { StoreEngine } from '../engine/store-engine.ts';
import { servePublicObject } from './public-object-server.ts';

const CACHE_MS = 1_000;
const MAX_CACHED = 10_000;

/** A host's public bucket: its account, the zone of a custom domain (null for a managed URL), and how to answer a request. */
export interface PublicBucket {
  accountId: string;
  zoneId: string | null;
  serve(req: IncomingMessage, res: ServerResponse): Promise<void>;
}

export interface PublicBucketHosts {
  /** The managed URLs' domain (null: none), which the platform keeps (edge/platform-hosts.ts). */
  readonly publicDomain: string | null;
  /** The bucket a host at or under the public domain serves, if any. */
  managed(host: string): Promise<PublicBucket | undefined>;
  /** The bucket a custom domain serves, if `host` is one. */
  custom(host: string): Promise<PublicBucket | undefined>;
}

export function publicBucketHosts(options: {
  domains: BucketDomains;
  engine: StoreEngine;
  publicDomain: string | null;
  now?: () => number;
}): PublicBucketHosts {
  const { domains, engine, publicDomain } = options;
  const now = options.now ?? Date.now;
  const cache = new Map<string, { at: number; bucket: PublicBucket | undefined }>();

  async function resolve(target: PublicTarget | null): Promise<PublicBucket | undefined> {
    if (!target) return undefined;
    const store = accountStore(engine, target.accountId);
    const info = await store.getBucket(target.bucket);
    if (!info || info.created !== target.bucketCreated) return undefined;
    return { accountId: target.accountId, zoneId: target.zoneId, serve: (req, res) => servePublicObject(store, target.bucket, req, res) };
  }

  const outage = new OutageMemory(now, CACHE_MS);

  async function fresh(key: string, lookup: () => Promise<PublicTarget | null>): Promise<PublicBucket | undefined> {
    const bucket = await resolve(await lookup());
    if (cache.size >= MAX_CACHED) cache.clear();
    cache.set(key, { at: now(), bucket });
    return bucket;
  }

  async function cached(key: string, lookup: () => Promise<PublicTarget | null>): Promise<PublicBucket | undefined> {
    const hit = cache.get(key);
    if (hit && now() - hit.at < CACHE_MS) return hit.bucket;
    // While the database fails, a host looked up before answers at once (OutageMemory).
    if (hit && outage.failing) {
      outage.retry(() => fresh(key, lookup));
      return hit.bucket;
    }
    try {
      const bucket = await fresh(key, lookup);
      outage.succeeded();
      return bucket;
    } catch (error) {
      if (backendFaultOf(error) === undefined) throw error;
      outage.failed();
      if (hit) return hit.bucket;
      throw error;
    }
  }

  return {
    publicDomain,
    managed(host) {
      if (publicDomain === null || !host.endsWith(`.${publicDomain}`)) return Promise.resolve(undefined);
      const label = host.slice(0, -publicDomain.length - 1);
      if (!/^pub-[0-9a-f]{32}$/.test(label)) return Promise.resolve(undefined);
      return cached(`m:${label}`, () => domains.managedTarget(label));
    },
    custom(host) {
      return cached(`c:${host}`, () => domains.customTarget(host));
    },
  };
}
