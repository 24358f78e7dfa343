/**
 * Migration 10: bucket CORS rules (S3 PutBucketCors, the management API's bucket CORS routes). One
 * row per bucket that has rules; deleted and renamed with its bucket. `name` is the bucket's own
 * name without its account: a browser's preflight is unsigned, so it names a bucket but no
 * account, and is matched against the rules of every bucket of that name (indexed by it).
 */
import type { Migration } from './index.ts';

export const bucketCors: Migration = {
  version: 10,
  name: 'bucket-cors',
  sqlite: `
    CREATE TABLE bucket_cors (
      bucket TEXT PRIMARY KEY,          -- buckets.name: <account id>/<name>, or a bare name (no account)
      name TEXT NOT NULL,               -- the bucket's name without its account
      rules TEXT NOT NULL               -- JSON of CorsRule[] (src/store/engine/cors.ts), at most 64 KiB
    ) WITHOUT ROWID;
    CREATE INDEX bucket_cors_by_name ON bucket_cors (name);
  `,
  postgres: `
    CREATE TABLE bucket_cors (
      bucket TEXT COLLATE "C" PRIMARY KEY,
      name TEXT COLLATE "C" NOT NULL,
      rules TEXT NOT NULL
    );
    CREATE INDEX bucket_cors_by_name ON bucket_cors (name);
  `,
};
