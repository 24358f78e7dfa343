/**
 * Every SQL statement of the PostgreSQL control store (pg-control-store.ts); the rows' shapes are in
 * ../control-rows.ts. Ids, names and keys order byte-wise ("C"), as on SQLite.
 */
import { CUSTOM_FIELDS_PHASE } from '../control-rows.ts';
import type { ZoneQuery } from '../control-store.ts';

/** Serializes job creation per zone across instances, so the plan's job count is exact (two-key advisory lock space). */
const JOB_LOCK_CLASS = 0x6a6f6273; // "jobs"
/** Serializes zone creation per name family (the last two labels, zone-names.ts) across instances. */
const ZONE_NAME_LOCK_CLASS = 0x7a6f6e65; // "zone"
/** Serializes file:// challenge claims across instances (overlapping locations cannot share one row lock). */
const CHALLENGE_LOCK_CLASS = 0x6f776e73; // "owns"

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
const RULESET_COLUMNS = 'id, zone_id, name, description, kind, phase, version, last_updated, rules, history';

export const SQL = {
  insertAccount: 'INSERT INTO accounts (id, email, name, key_hash, created) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING RETURNING id',
  getAccount: 'SELECT * FROM accounts WHERE id = $1',
  accountByEmail: 'SELECT * FROM accounts WHERE lower(email) = lower($1)',
  setKeyHash: 'UPDATE accounts SET key_hash = $1 WHERE id = $2',
  otherAccountByEmail: 'SELECT 1 FROM accounts WHERE lower(email) = lower($1) AND id <> $2',
  // A name still the one made from the old e-mail (createAccount's "<e-mail>'s Account") follows the new e-mail; a name of one's own stays.
  setSignIn:
    "UPDATE accounts SET name = CASE WHEN name = email || '''s Account' THEN $1 || '''s Account' ELSE name END, email = $1, key_hash = $2 WHERE id = $3",
  countAccounts: 'SELECT count(*)::int AS n FROM accounts',
  listAccounts: 'SELECT * FROM accounts ORDER BY created, id COLLATE "C"',
  deleteAccount: 'DELETE FROM accounts WHERE id = $1',
  deleteAccountSessions: 'DELETE FROM dashboard_sessions WHERE account_id = $1',
  deleteAccountTokens: 'DELETE FROM api_tokens WHERE account_id = $1',
  firstAccount: 'SELECT * FROM accounts ORDER BY created, id COLLATE "C" LIMIT 1',

  insertZone: `INSERT INTO zones (id, account_id, name, name_reversed, origin, paused, created, modified) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
    ON CONFLICT DO NOTHING`,
  lockZoneFamily: `SELECT pg_advisory_xact_lock(${ZONE_NAME_LOCK_CLASS}, hashtext($1))`,
  /** The nearest of the names `$1` (a zone's ancestors) held by an account other than `$2`. */
  otherAccountsZoneAbove: 'SELECT name FROM zones WHERE name = ANY($1::text[]) AND account_id <> $2 ORDER BY length(name) DESC LIMIT 1',
  otherAccountsZoneUnder: 'SELECT name FROM zones WHERE name_reversed > $1 AND name_reversed < $2 AND account_id <> $3 LIMIT 1',
  getZone: 'SELECT * FROM zones WHERE id = $1 AND account_id = $2',
  lockZone: 'SELECT * FROM zones WHERE id = $1 AND account_id = $2 FOR UPDATE',
  zoneByName: 'SELECT * FROM zones WHERE name = $1',
  zoneAccount: 'SELECT account_id FROM zones WHERE id = $1',
  listZones: (op: NameOp | 'none', order: ZoneQuery['order'], direction: ZoneQuery['direction']) => `SELECT * FROM zones
    WHERE account_id = $1 AND ${NAME_MATCH[op]} ORDER BY ${ZONE_ORDER[order]} ${ZONE_DIRECTION[direction]}, id COLLATE "C" LIMIT $3 OFFSET $4`,
  countZones: (op: NameOp | 'none') => `SELECT count(*)::int AS n FROM zones WHERE account_id = $1 AND ${NAME_MATCH[op]}`,
  updateZone: 'UPDATE zones SET origin = $1, paused = $2, modified = $3 WHERE id = $4',
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
  insertRuleset: `INSERT INTO rulesets (id, zone_id, name, description, kind, phase, version, last_updated, rules, custom_fields, history)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
  /** A zone ruleset whose phase is taken inserts nothing (the partial unique index rulesets_zone_phase decides, across instances). */
  insertZoneRuleset: `INSERT INTO rulesets (id, zone_id, name, description, kind, phase, version, last_updated, rules, custom_fields, history)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT (zone_id, phase) WHERE kind = 'zone' DO NOTHING`,
  updateRuleset: 'UPDATE rulesets SET name = $1, description = $2, version = $3, last_updated = $4, rules = $5, custom_fields = $6, history = $7 WHERE id = $8',
  deleteRuleset: 'DELETE FROM rulesets WHERE id = $1 AND zone_id = $2',

  listJobs: 'SELECT id, job FROM log_jobs WHERE zone_id = $1 ORDER BY id',
  listEnabledJobs: 'SELECT id, job FROM log_jobs WHERE zone_id = $1 AND enabled = 1 ORDER BY id',
  lockZoneJobs: `SELECT pg_advisory_xact_lock(${JOB_LOCK_CLASS}, hashtext($1))`,
  countJobs: 'SELECT count(*)::int AS n FROM log_jobs WHERE zone_id = $1',
  getJob: 'SELECT id, job FROM log_jobs WHERE id = $1 AND zone_id = $2',
  lockJob: 'SELECT id, job FROM log_jobs WHERE id = $1 AND zone_id = $2 FOR UPDATE',
  lockJobById: 'SELECT id, job FROM log_jobs WHERE id = $1 FOR UPDATE',
  insertJob: 'INSERT INTO log_jobs (zone_id, enabled, job, held_location) VALUES ($1, $2, $3, $4) RETURNING id',
  updateJob: 'UPDATE log_jobs SET enabled = $1, job = $2, held_location = $4 WHERE id = $3',
  deleteJob: 'DELETE FROM log_jobs WHERE id = $1 AND zone_id = $2',

  putChallenge: `INSERT INTO ownership_challenges (zone_id, destination_conf, token_hash, expires) VALUES ($1, $2, $3, $4)
    ON CONFLICT (zone_id, destination_conf) DO UPDATE SET token_hash = excluded.token_hash, expires = excluded.expires`,
  getChallenge: 'SELECT token_hash, expires FROM ownership_challenges WHERE zone_id = $1 AND destination_conf = $2',
  dropExpiredChallenges: 'DELETE FROM ownership_challenges WHERE expires <= $1',
  lockChallengeClaims: `SELECT pg_advisory_xact_lock(${CHALLENGE_LOCK_CLASS}, 0)`,
  /** $1 location, $2 account, $3 now. */
  otherAccountsHold: `SELECT 1 AS taken FROM ownership_challenges c JOIN zones z ON z.id = c.zone_id
    WHERE z.account_id <> $2 AND c.expires > $3 AND substr(c.destination_conf, 1, 7) = 'file://' AND (c.destination_conf = $1::text
      OR substr($1::text, 1, length(rtrim(c.destination_conf, '/')) + 1) = rtrim(c.destination_conf, '/') || '/'
      OR substr(c.destination_conf, 1, length(rtrim($1::text, '/')) + 1) = rtrim($1::text, '/') || '/')
    UNION ALL SELECT 1 AS taken FROM log_jobs j JOIN zones z ON z.id = j.zone_id
    WHERE z.account_id <> $2 AND j.held_location IS NOT NULL AND (j.held_location = $1::text
      OR substr($1::text, 1, length(rtrim(j.held_location, '/')) + 1) = rtrim(j.held_location, '/') || '/'
      OR substr(j.held_location, 1, length(rtrim($1::text, '/')) + 1) = rtrim($1::text, '/') || '/')
    LIMIT 1`,

  insertSession: 'INSERT INTO dashboard_sessions (id, account_id, key_hash, csrf_token, created, expires) VALUES ($1, $2, $3, $4, $5, $6)',
  getSession: 'SELECT id, account_id, key_hash, csrf_token, created, expires FROM dashboard_sessions WHERE id = $1',
  deleteSession: 'DELETE FROM dashboard_sessions WHERE id = $1',
  dropExpiredSessions: 'DELETE FROM dashboard_sessions WHERE expires <= $1',
  // The account's own sessions beyond the new one and the newest `keep - 1` others (never another account's).
  dropOldestSessions: `DELETE FROM dashboard_sessions WHERE id IN
    (SELECT id FROM dashboard_sessions WHERE account_id = $1 AND id <> $2 ORDER BY created DESC, id COLLATE "C" OFFSET $3)`,
} as const;
