/**
 * Migration 11: a completed multipart object keeps each part's checksum (in its upload's algorithm),
 * so S3's GetObjectAttributes can list the parts of an object uploaded with checksums, as S3 does.
 * Objects completed before have none, as objects of uploads without a checksum algorithm.
 */
import type { Migration } from './index.ts';

const ddl = `
  ALTER TABLE object_parts ADD COLUMN checksum TEXT;        -- lowercase hex, in the upload's algorithm; NULL: none
`;

export const objectPartChecksums: Migration = { version: 11, name: 'object-part-checksums', sqlite: ddl, postgres: ddl };
