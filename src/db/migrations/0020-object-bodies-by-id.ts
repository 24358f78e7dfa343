/**
 * Migration 20: SQLite keeps the inline bodies it stores from now on in `object_bodies`, a rowid
 * table found by its row id, which the object's row holds (`objects.body_id`). Rows are appended
 * in commit order; a body keyed by its object's random version (`inline_bodies`) went into a random
 * leaf of that key's index, one more page a put wrote to the WAL and a checkpoint to the database
 * (measured: 16 pages per commit of four 1 KiB puts, 11 this way). The bodies stored before stay
 * where they are, found by version (`body_id` NULL), until their object is replaced or deleted:
 * nothing is copied. PostgreSQL stores large values out of line: nothing changes there.
 */
import type { Migration } from './index.ts';

export const objectBodiesById: Migration = {
  version: 20,
  name: 'object-bodies-by-id',
  sqlite: `
    CREATE TABLE object_bodies (
      id INTEGER PRIMARY KEY,
      bytes BLOB NOT NULL
    );
    ALTER TABLE objects ADD COLUMN body_id INTEGER;  -- its object_bodies row, for an inline body stored since migration 20
  `,
  postgres: 'SELECT 1',
};
