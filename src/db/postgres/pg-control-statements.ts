/**
 * Every SQL statement of the PostgreSQL control store (pg-control-store.ts); the rows' shapes are in
 * ../control-rows.ts. Ids, names and keys order byte-wise ("C"), as on SQLite.
 */
import { CUSTOM_FIELDS_PHASE } from '../control-rows.ts';
import type { ZoneQuery } from '../control-store.ts';

/** Serializes job creation per zone across instances, so the plan's job count is exact (two-key advisory lock space). */
const JOB_LOCK_CLASS = 0x6a6f6273; // "jobs"

type NameOp = NonNullable<ZoneQuery['name']>['op'];

const ZONE_ORDER: Record<ZoneQuery['order'], string> = { name: 'name', created: 'created' };
const ZONE_DIRECTION: Record<ZoneQuery['direction'], string> = { asc: 'ASC', desc: 'DESC' };
/**
 * `$2` is the name filter's value ('' without a filter: PostgreSQL wants every parameter used). An
 * empty ends_with matches nothing, as on SQLite.
 */
const NAME_MATCH: Record<NameOp | 'none', string> = {
  none: "$2::text = ''",
  equal: 'name = $2::text',
  contains: 'strpos(name, $2::text) > 0',
  starts_with: 'left(name, length($2::text)) = $2::text',
  ends_with: "$2::text <> '' AND right(name, length($2::text)) = $2::text",
};
const RULESET_COLUMNS = 'id, zone_id, name, description, kind, phase, version, last_updated, rules';

export const SQL = {
  insertAccount: 'INSERT INTO accounts (id, email, name, key_hash, created) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING RETURNING id',
  getAccount: 'SELECT * FROM accounts WHERE id = $1',
  accountByEmail: 'SELECT * FROM accounts WHERE lower(email) = lower($1)',
  setKeyHash: 'UPDATE accounts SET key_hash = $1 WHERE id = $2',
  countAccounts: 'SELECT count(*)::int AS n FROM accounts',
  firstAccount: 'SELECT * FROM accounts ORDER BY created, id COLLATE "C" LIMIT 1',

  insertZone: 'INSERT INTO zones (id, account_id, name, origin, paused, created, modified) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING',
  getZone: 'SELECT * FROM zones WHERE id = $1 AND account_id = $2',
  lockZone: 'SELECT * FROM zones WHERE id = $1 AND account_id = $2 FOR UPDATE',
  zoneByName: 'SELECT * FROM zones WHERE name = $1',
  listZones: (op: NameOp | 'none', order: ZoneQuery['order'], direction: ZoneQuery['direction']) => `SELECT * FROM zones
    WHERE account_id = $1 AND ${NAME_MATCH[op]} ORDER BY ${ZONE_ORDER[order]} ${ZONE_DIRECTION[direction]}, id COLLATE "C" LIMIT $3 OFFSET $4`,
  countZones: (op: NameOp | 'none') => `SELECT count(*)::int AS n FROM zones WHERE account_id = $1 AND ${NAME_MATCH[op]}`,
  updateZone: 'UPDATE zones SET name = $1, origin = $2, paused = $3, modified = $4 WHERE id = $5',
  deleteZone: 'DELETE FROM zones WHERE id = $1',
  deleteZoneRulesets: 'DELETE FROM rulesets WHERE zone_id = $1',
  deleteZoneJobs: 'DELETE FROM log_jobs WHERE zone_id = $1',
  deleteZoneChallenges: 'DELETE FROM ownership_challenges WHERE zone_id = $1',

  listRulesets: `SELECT ${RULESET_COLUMNS} FROM rulesets WHERE zone_id = $1 ORDER BY id COLLATE "C"`,
  getRuleset: `SELECT ${RULESET_COLUMNS} FROM rulesets WHERE id = $1 AND zone_id = $2`,
  lockRuleset: `SELECT ${RULESET_COLUMNS} FROM rulesets WHERE id = $1 AND zone_id = $2 FOR UPDATE`,
  getEntrypoint: `SELECT ${RULESET_COLUMNS} FROM rulesets WHERE zone_id = $1 AND phase = $2 AND kind = 'zone'`,
  lockEntrypoint: `SELECT ${RULESET_COLUMNS} FROM rulesets WHERE zone_id = $1 AND phase = $2 AND kind = 'zone' FOR UPDATE`,
  customFields: `SELECT custom_fields FROM rulesets WHERE zone_id = $1 AND phase = '${CUSTOM_FIELDS_PHASE}' AND kind = 'zone'`,
  insertRuleset: `INSERT INTO rulesets (id, zone_id, name, description, kind, phase, version, last_updated, rules, custom_fields)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
  /** A zone ruleset whose phase is taken inserts nothing (the partial unique index rulesets_zone_phase decides, across instances). */
  insertZoneRuleset: `INSERT INTO rulesets (id, zone_id, name, description, kind, phase, version, last_updated, rules, custom_fields)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (zone_id, phase) WHERE kind = 'zone' DO NOTHING`,
  updateRuleset: 'UPDATE rulesets SET name = $1, description = $2, version = $3, last_updated = $4, rules = $5, custom_fields = $6 WHERE id = $7',
  deleteRuleset: 'DELETE FROM rulesets WHERE id = $1 AND zone_id = $2',

  listJobs: 'SELECT id, job FROM log_jobs WHERE zone_id = $1 ORDER BY id',
  listEnabledJobs: 'SELECT id, job FROM log_jobs WHERE zone_id = $1 AND enabled = 1 ORDER BY id',
  lockZoneJobs: `SELECT pg_advisory_xact_lock(${JOB_LOCK_CLASS}, hashtext($1))`,
  countJobs: 'SELECT count(*)::int AS n FROM log_jobs WHERE zone_id = $1',
  getJob: 'SELECT id, job FROM log_jobs WHERE id = $1 AND zone_id = $2',
  lockJob: 'SELECT id, job FROM log_jobs WHERE id = $1 AND zone_id = $2 FOR UPDATE',
  lockJobById: 'SELECT id, job FROM log_jobs WHERE id = $1 FOR UPDATE',
  insertJob: 'INSERT INTO log_jobs (zone_id, enabled, job) VALUES ($1, $2, $3) RETURNING id',
  updateJob: 'UPDATE log_jobs SET enabled = $1, job = $2 WHERE id = $3',
  deleteJob: 'DELETE FROM log_jobs WHERE id = $1 AND zone_id = $2',

  putChallenge: `INSERT INTO ownership_challenges (zone_id, destination_conf, token_hash, expires) VALUES ($1, $2, $3, $4)
    ON CONFLICT (zone_id, destination_conf) DO UPDATE SET token_hash = excluded.token_hash, expires = excluded.expires`,
  getChallenge: 'SELECT token_hash, expires FROM ownership_challenges WHERE zone_id = $1 AND destination_conf = $2',
  dropExpiredChallenges: 'DELETE FROM ownership_challenges WHERE expires <= $1',

  insertSession: 'INSERT INTO dashboard_sessions (id, account_id, key_hash, csrf_token, created, expires) VALUES ($1, $2, $3, $4, $5, $6)',
  getSession: 'SELECT id, account_id, key_hash, csrf_token, created, expires FROM dashboard_sessions WHERE id = $1',
  deleteSession: 'DELETE FROM dashboard_sessions WHERE id = $1',
  dropExpiredSessions: 'DELETE FROM dashboard_sessions WHERE expires <= $1',
  // The account's own sessions beyond the new one and the newest `keep - 1` others (never another account's).
  dropOldestSessions: `DELETE FROM dashboard_sessions WHERE id IN
    (SELECT id FROM dashboard_sessions WHERE account_id = $1 AND id <> $2 ORDER BY created DESC, id COLLATE "C" OFFSET $3)`,

  putKeyOwner: `INSERT INTO s3_access_key_owners (access_key_id, account_id) VALUES ($1, $2)
    ON CONFLICT (access_key_id) DO UPDATE SET account_id = excluded.account_id`,
  keyOwner: 'SELECT account_id FROM s3_access_key_owners WHERE access_key_id = $1',
  ownedKeys: 'SELECT access_key_id FROM s3_access_key_owners WHERE account_id = $1 ORDER BY access_key_id COLLATE "C"',
} as const;
