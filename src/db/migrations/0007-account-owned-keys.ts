/**
 * Migration 7: S3 access keys belong to an account and may be limited. The owner moves from the
 * control plane's `s3_access_key_owners` into the key's own row, so a signed request finds its key,
 * owner and limits in one read. Keys without an owner (the bootstrap key of earlier versions) are
 * adopted by the first account at start, as are buckets stored under a bare name
 * (MetadataStore.adoptAccessKeys / adoptBuckets): the first account owns what was made before.
 */
import type { Migration } from './index.ts';

const ddl = `
  ALTER TABLE s3_access_keys ADD COLUMN account_id TEXT;     -- the owner; NULL until the first account adopts the key
  ALTER TABLE s3_access_keys ADD COLUMN permission TEXT NOT NULL DEFAULT 'admin_read_write';
                                                             -- admin_read_write | admin_read_only | object_read_write | object_read_only
  ALTER TABLE s3_access_keys ADD COLUMN buckets TEXT;        -- JSON array of the account's bucket names it is limited to; NULL: every bucket
  UPDATE s3_access_keys SET account_id =
    (SELECT o.account_id FROM s3_access_key_owners o WHERE o.access_key_id = s3_access_keys.access_key_id);
  DROP TABLE s3_access_key_owners;
  CREATE INDEX s3_access_keys_by_account ON s3_access_keys (account_id, created);
`;

export const accountOwnedKeys: Migration = { version: 7, name: 'account-owned-keys', sqlite: ddl, postgres: ddl };
