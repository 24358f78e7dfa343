/**
 * Migration 5: S3 flexible checksums on multipart uploads. An upload may be created with a
 * checksum algorithm (S3's x-amz-checksum-algorithm, COMPOSITE type); each part then keeps the
 * checksum it was verified against, and completion combines them into the object's checksum.
 */
import type { Migration } from './index.ts';

const ddl = `
  ALTER TABLE uploads ADD COLUMN checksum_algorithm TEXT;   -- crc32, crc32c, sha1 or sha256; NULL: none
  ALTER TABLE upload_parts ADD COLUMN checksum TEXT;        -- lowercase hex, in the upload's algorithm
`;

export const partChecksums: Migration = { version: 5, name: 'part-checksums', sqlite: ddl, postgres: ddl };
