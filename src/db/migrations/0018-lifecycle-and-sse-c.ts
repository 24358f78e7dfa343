/**
 * Migration 18: bucket lifecycle rules and the lease that lets one instance at a time apply them;
 * full-object checksums of multipart uploads; objects and uploads encrypted with a customer's key
 * (SSE-C). Existing rows are unchanged: no rules, COMPOSITE checksums, nothing encrypted.
 */
import type { Migration } from './index.ts';

const ddl = (dialect: 'sqlite' | 'postgres') => {
  const epoch = dialect === 'sqlite' ? 'INTEGER' : 'BIGINT';
  const name = dialect === 'sqlite' ? 'TEXT' : 'TEXT COLLATE "C"';
  const withoutRowid = dialect === 'sqlite' ? ' WITHOUT ROWID' : '';
  return `
    ALTER TABLE uploads ADD COLUMN checksum_type TEXT;  -- 'FULL_OBJECT': the object gets the CRC of all its bytes; NULL: COMPOSITE
    ALTER TABLE uploads ADD COLUMN ssec TEXT;           -- JSON SseCRecord (src/store/engine/sse-c.ts) of an SSE-C upload; NULL: plain
    ALTER TABLE objects ADD COLUMN ssec TEXT;           -- the same for an object stored encrypted with a customer's key
    CREATE TABLE bucket_lifecycle (
      bucket ${name} PRIMARY KEY,      -- buckets.name: <account id>/<name>, or a bare name (no account)
      rules TEXT NOT NULL              -- JSON LifecycleRule[] (src/store/engine/lifecycle.ts)
    )${withoutRowid};
    CREATE TABLE maintenance_leases (
      name ${name} PRIMARY KEY,        -- the background job ('lifecycle')
      holder TEXT NOT NULL,            -- the instance running it
      until ${epoch} NOT NULL,         -- epoch ms the lease lasts to; another instance may take it after
      state TEXT NOT NULL DEFAULT '{}' -- the job's progress (JSON), so whoever holds it next resumes there
    )${withoutRowid};
  `;
};

export const lifecycleAndSseC: Migration = { version: 18, name: 'lifecycle-and-sse-c', sqlite: ddl('sqlite'), postgres: ddl('postgres') };
