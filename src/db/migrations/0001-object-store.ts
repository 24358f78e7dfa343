/** Migration 1: buckets, objects (inline bytes or blob references), multipart uploads, blob reclamation. */
import type { Migration } from './index.ts';

export const objectStore: Migration = {
  version: 1,
  name: 'object-store',
  sqlite: `
    CREATE TABLE buckets (
      name TEXT PRIMARY KEY,            -- bucket name, [a-z0-9-]{3,63}
      created INTEGER NOT NULL,         -- epoch ms
      storage_class TEXT NOT NULL       -- default class of new objects
    ) WITHOUT ROWID;

    CREATE TABLE objects (
      bucket TEXT NOT NULL,
      key TEXT NOT NULL,                -- compared BINARY = UTF-8 byte order, as the real store lists
      version TEXT NOT NULL,            -- random per upload
      size INTEGER NOT NULL,
      etag TEXT NOT NULL,
      uploaded INTEGER NOT NULL,        -- epoch ms
      http_metadata TEXT NOT NULL,      -- JSON of HttpMetadata
      custom_metadata TEXT NOT NULL,    -- JSON of Record<string,string>
      checksums TEXT NOT NULL,          -- JSON of lowercase hex checksums
      storage_class TEXT NOT NULL,
      has_inline INTEGER NOT NULL,      -- 1: the body is in inline_bodies (no file, no extra fsync)
      blob_id TEXT,                     -- or in one blob file
      part_count INTEGER NOT NULL,      -- or, when > 0, in object_parts rows
      PRIMARY KEY (bucket, key)
    ) WITHOUT ROWID;

    -- Kept apart from objects so listing scans small rows, not bodies.
    CREATE TABLE inline_bodies (
      version TEXT PRIMARY KEY,         -- objects.version
      bytes BLOB NOT NULL
    ) WITHOUT ROWID;

    CREATE TABLE object_parts (
      version TEXT NOT NULL,            -- objects.version of the multipart object
      idx INTEGER NOT NULL,             -- 0-based position
      blob_id TEXT NOT NULL,
      size INTEGER NOT NULL,
      PRIMARY KEY (version, idx)
    ) WITHOUT ROWID;

    CREATE TABLE uploads (
      upload_id TEXT PRIMARY KEY,
      bucket TEXT NOT NULL,
      key TEXT NOT NULL,
      created INTEGER NOT NULL,         -- epoch ms; active uploads expire 7 days later
      http_metadata TEXT NOT NULL,
      custom_metadata TEXT NOT NULL,
      storage_class TEXT NOT NULL,
      state TEXT NOT NULL               -- active | completed | aborted
    ) WITHOUT ROWID;
    CREATE INDEX uploads_by_bucket ON uploads (bucket, state, key);

    CREATE TABLE upload_parts (
      upload_id TEXT NOT NULL,
      part_number INTEGER NOT NULL,
      etag TEXT NOT NULL,               -- MD5 hex of the part
      size INTEGER NOT NULL,
      blob_id TEXT NOT NULL,
      uploaded INTEGER NOT NULL,
      PRIMARY KEY (upload_id, part_number)
    ) WITHOUT ROWID;

    CREATE TABLE blob_reclaim (
      blob_id TEXT PRIMARY KEY,         -- a blob no row references any more
      after INTEGER NOT NULL            -- delete its file once this time (epoch ms) has passed
    ) WITHOUT ROWID;
  `,
  postgres: `
    CREATE TABLE buckets (
      name TEXT COLLATE "C" PRIMARY KEY,
      created BIGINT NOT NULL,
      storage_class TEXT NOT NULL
    );

    -- Keys are BYTEA holding their UTF-8 bytes: a key may contain U+0000, which TEXT cannot hold,
    -- and BYTEA compares bytewise, which is exactly the store's list order (no collation involved).
    CREATE TABLE objects (
      bucket TEXT COLLATE "C" NOT NULL,
      key BYTEA NOT NULL,              -- UTF-8 bytes of the key
      version TEXT NOT NULL,
      size BIGINT NOT NULL,
      etag TEXT NOT NULL,
      uploaded BIGINT NOT NULL,
      http_metadata TEXT NOT NULL,
      custom_metadata TEXT NOT NULL,
      checksums TEXT NOT NULL,
      storage_class TEXT NOT NULL,
      has_inline INTEGER NOT NULL,
      blob_id TEXT,
      part_count INTEGER NOT NULL,
      PRIMARY KEY (bucket, key)
    );

    CREATE TABLE inline_bodies (
      version TEXT PRIMARY KEY,
      bytes BYTEA NOT NULL
    );

    CREATE TABLE object_parts (
      version TEXT NOT NULL,
      idx INTEGER NOT NULL,
      blob_id TEXT NOT NULL,
      size BIGINT NOT NULL,
      PRIMARY KEY (version, idx)
    );

    CREATE TABLE uploads (
      upload_id TEXT PRIMARY KEY,
      bucket TEXT COLLATE "C" NOT NULL,
      key BYTEA NOT NULL,              -- UTF-8 bytes, as objects.key
      created BIGINT NOT NULL,
      http_metadata TEXT NOT NULL,
      custom_metadata TEXT NOT NULL,
      storage_class TEXT NOT NULL,
      state TEXT NOT NULL
    );
    CREATE INDEX uploads_by_bucket ON uploads (bucket, state, key);

    CREATE TABLE upload_parts (
      upload_id TEXT NOT NULL,
      part_number INTEGER NOT NULL,
      etag TEXT NOT NULL,
      size BIGINT NOT NULL,
      blob_id TEXT NOT NULL,
      uploaded BIGINT NOT NULL,
      PRIMARY KEY (upload_id, part_number)
    );

    CREATE TABLE blob_reclaim (
      blob_id TEXT PRIMARY KEY,
      after BIGINT NOT NULL
    );
  `,
};
