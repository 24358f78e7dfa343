/**
 * Migration 13: a file:// log job holds its directory against other accounts for as long as the job
 * exists, not only while the ownership challenge that proved write access is unexpired (7 days):
 * `held_location` is the `file://<real directory>` the job writes below, compared by
 * claimOwnershipChallenge. Jobs made before it get the location their destination_conf names (its
 * part before `{DATE}`, `file://localhost` dropped); symbolic links in it stay unresolved until the
 * job's destination is next changed.
 */
import type { Migration } from './index.ts';

/** The backfill: `conf` is an SQL expression for the job's destination_conf; `at(text, find)` finds a substring (1-based, 0 if absent). */
function backfill(conf: string, at: (text: string, find: string) => string): string {
  const local = `CASE WHEN ${conf} LIKE 'file://localhost/%' THEN 'file://' || substr(${conf}, 17) ELSE ${conf} END`;
  const fixed = `CASE WHEN ${at(local, "'{DATE}'")} > 0 THEN substr(${local}, 1, ${at(local, "'{DATE}'")} - 1) ELSE ${local} END`;
  return `UPDATE log_jobs SET held_location = CASE WHEN rtrim(${fixed}, '/') = 'file:' THEN 'file:///' ELSE rtrim(${fixed}, '/') END
    WHERE ${conf} LIKE 'file://%';`;
}

export const logJobLocations: Migration = {
  version: 13,
  name: 'log-job-locations',
  sqlite: `
    ALTER TABLE log_jobs ADD COLUMN held_location TEXT;  -- file://<real dir> a file:// job holds; NULL for other schemes
    CREATE INDEX log_jobs_by_held_location ON log_jobs (held_location) WHERE held_location IS NOT NULL;
    ${backfill("json_extract(job, '$.destinationConf')", (text, find) => `instr(${text}, ${find})`)}
  `,
  postgres: `
    ALTER TABLE log_jobs ADD COLUMN held_location TEXT;
    CREATE INDEX log_jobs_by_held_location ON log_jobs (held_location) WHERE held_location IS NOT NULL;
    ${backfill("(job::json->>'destinationConf')", (text, find) => `strpos(${text}, ${find})`)}
  `,
};
