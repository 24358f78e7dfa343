/**
 * Migration 19: a script route may be a custom domain (`custom_domain`: the route
 * `<hostname>/*` made by attaching the hostname, which the Workers domains routes list); a ruleset keeps its earlier versions (`history`: JSON, newest first, bounded by
 * the API: src/api/rulesets/ruleset-service.ts), which the versions routes read; and buckets may
 * be public (src/db/public-buckets): on the server's managed domain (`<public id>.<[r2]
 * public_domain>`, turned on and off per bucket) and on custom domains of the account's zones.
 * Both name the bucket by its stored key (`<account>/<name>`) and its creation time, so a bucket
 * deleted and made again is never public by a setting the old one had.
 */
import type { Migration } from './index.ts';

function ddl(time: string): string {
  return `
    ALTER TABLE rulesets ADD COLUMN history TEXT NOT NULL DEFAULT '[]';  -- earlier versions, newest first
    ALTER TABLE worker_routes ADD COLUMN custom_domain INTEGER NOT NULL DEFAULT 0;  -- 1: a custom domain's route
    CREATE TABLE bucket_managed_domains (
      bucket TEXT PRIMARY KEY,              -- '<account>/<name>', as the object store keeps it
      account_id TEXT NOT NULL,
      bucket_created ${time} NOT NULL,      -- the bucket's creation (epoch ms): another bucket of the name is not this one
      public_id TEXT NOT NULL UNIQUE,       -- 'pub-' + 32 hex: the host's first label
      enabled INTEGER NOT NULL              -- 1: served at <public_id>.<public domain>
    );
    CREATE TABLE bucket_custom_domains (
      domain TEXT PRIMARY KEY,              -- the host, lower case: served by one bucket only
      account_id TEXT NOT NULL,
      bucket TEXT NOT NULL,                 -- '<account>/<name>'
      bucket_created ${time} NOT NULL,
      zone_id TEXT NOT NULL,                -- the account's zone the host is on: its log jobs get the requests
      enabled INTEGER NOT NULL,
      min_tls TEXT NOT NULL,
      created ${time} NOT NULL
    );
    CREATE INDEX bucket_custom_domains_by_bucket ON bucket_custom_domains (bucket);
  `;
}

export const rulesetHistoryPublicBuckets: Migration = {
  version: 19,
  name: 'ruleset-history-domains-public-buckets',
  sqlite: ddl('INTEGER'),
  postgres: ddl('BIGINT'),
};
