/**
 * Migration 8: zones keep their name reversed character by character (`shop.test` ->
 * `tset.pohs`), indexed, so that the zones under a name (`*.shop.test`, reversed `tset.pohs.*`) are
 * one range of that index: creating a zone checks that no other account holds one under it
 * (src/db/zone-names.ts). Existing zones get theirs here; the stores write it with every zone.
 */
import type { Migration } from './index.ts';

export const zoneNameReversed: Migration = {
  version: 8,
  name: 'zone-name-reversed',
  // SQLite has no reverse(): each name is rebuilt from its characters, last first (names are at
  // most 253 ASCII characters).
  sqlite: `
    ALTER TABLE zones ADD COLUMN name_reversed TEXT NOT NULL DEFAULT '';
    UPDATE zones SET name_reversed = (
      WITH RECURSIVE position(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM position WHERE i < 253)
      SELECT group_concat(substr(zones.name, i, 1), '' ORDER BY i DESC) FROM position WHERE i <= length(zones.name)
    );
    CREATE INDEX zones_by_name_reversed ON zones (name_reversed);
  `,
  postgres: `
    ALTER TABLE zones ADD COLUMN name_reversed TEXT COLLATE "C" NOT NULL DEFAULT '';
    UPDATE zones SET name_reversed = reverse(name);
    CREATE INDEX zones_by_name_reversed ON zones (name_reversed);
  `,
};
