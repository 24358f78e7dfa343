/**
 * Migration 12: a completed multipart upload remembers what it made, so CompleteMultipartUpload sent
 * again (a client retrying after a lost answer) answers the same success while that object is still
 * the key's current one. Finished uploads (completed or aborted) are forgotten a while after they
 * finish (ObjectEngine.expireUploads); before this, their rows were kept forever.
 */
import type { Migration } from './index.ts';

const ddl = (epoch: string) => `
  ALTER TABLE uploads ADD COLUMN finished ${epoch};           -- epoch ms it completed or was aborted; NULL while active (or finished before this)
  ALTER TABLE uploads ADD COLUMN completed_version TEXT;       -- the object version a completion made
  ALTER TABLE uploads ADD COLUMN completed_parts TEXT;         -- JSON [[part number, etag], ...] the completion named
  CREATE INDEX uploads_by_finished ON uploads (finished);
`;

export const completedUploads: Migration = { version: 12, name: 'completed-uploads', sqlite: ddl('INTEGER'), postgres: ddl('BIGINT') };
