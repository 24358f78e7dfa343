/**
 * Migration 6: SQLite keeps inline bodies in a rowid table. As a WITHOUT ROWID table they lived in
 * an index b-tree, where a row larger than about 1 KB spills to overflow pages and every key
 * comparison on the way down reads the whole spilled row: a lookup read several neighbouring bodies
 * whole (measured here: a GET of one of 5,000 inline 32 KiB objects 212 us, of 1 KiB ones 39 us).
 * In a rowid table the version's own small index finds the row, and only that row's bytes are read.
 * PostgreSQL already stores large values out of line: nothing changes there.
 */
import type { Migration } from './index.ts';

export const inlineBodiesRowid: Migration = {
  version: 6,
  name: 'inline-bodies-rowid',
  sqlite: `
    CREATE TABLE inline_bodies_by_rowid (
      version TEXT PRIMARY KEY,         -- objects.version
      bytes BLOB NOT NULL
    );
    INSERT INTO inline_bodies_by_rowid (version, bytes) SELECT version, bytes FROM inline_bodies;
    DROP TABLE inline_bodies;
    ALTER TABLE inline_bodies_by_rowid RENAME TO inline_bodies;
  `,
  postgres: 'SELECT 1',
};
