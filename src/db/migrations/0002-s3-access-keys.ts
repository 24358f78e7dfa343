/** Migration 2: access keys of the S3-compatible API. */
import type { Migration } from './index.ts';

export const s3AccessKeys: Migration = {
  version: 2,
  name: 's3-access-keys',
  sqlite: `
    CREATE TABLE s3_access_keys (
      access_key_id TEXT PRIMARY KEY,
      secret TEXT NOT NULL,             -- SigV4 needs the secret itself to verify signatures
      created INTEGER NOT NULL,         -- epoch ms
      revoked INTEGER                   -- epoch ms, or NULL while usable
    ) WITHOUT ROWID;
  `,
  postgres: `
    CREATE TABLE s3_access_keys (
      access_key_id TEXT PRIMARY KEY,
      secret TEXT NOT NULL,
      created BIGINT NOT NULL,
      revoked BIGINT
    );
  `,
};
