/** Migration 3: the management API's control plane: accounts, zones, rulesets, log jobs, challenges. */
import type { Migration } from './index.ts';

export const controlPlane: Migration = {
  version: 3,
  name: 'control-plane',
  sqlite: `
    CREATE TABLE accounts (
      id TEXT PRIMARY KEY,              -- 32 hex
      email TEXT NOT NULL UNIQUE COLLATE NOCASE,
      name TEXT NOT NULL,
      key_hash TEXT NOT NULL,           -- scrypt of the API key (never the key)
      created INTEGER NOT NULL          -- epoch ms
    ) WITHOUT ROWID;

    CREATE TABLE zones (
      id TEXT PRIMARY KEY,              -- 32 hex
      account_id TEXT NOT NULL,
      name TEXT NOT NULL UNIQUE,        -- lowercase host name; the edge routes by it
      origin TEXT,                      -- URL the edge proxies to, or NULL
      paused INTEGER NOT NULL,
      created INTEGER NOT NULL,
      modified INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX zones_by_account ON zones (account_id, name);

    CREATE TABLE rulesets (
      id TEXT PRIMARY KEY,              -- 32 hex
      zone_id TEXT NOT NULL,
      name TEXT NOT NULL,
      description TEXT NOT NULL,
      kind TEXT NOT NULL,               -- 'zone': the phase's entry point
      phase TEXT NOT NULL,
      version INTEGER NOT NULL,         -- shown as a string of digits; +1 on every write
      last_updated INTEGER NOT NULL,    -- epoch ms
      rules TEXT NOT NULL,              -- JSON array of RuleRecord, replaced wholesale
      custom_fields TEXT                -- JSON CustomFieldNames of the enabled rules, for the edge
    ) WITHOUT ROWID;
    -- One zone-level ruleset per phase per zone, as on the real API.
    CREATE UNIQUE INDEX rulesets_zone_phase ON rulesets (zone_id, phase) WHERE kind = 'zone';

    CREATE TABLE log_jobs (
      id INTEGER PRIMARY KEY AUTOINCREMENT,  -- AUTOINCREMENT: a deleted job's id is never reused
      zone_id TEXT NOT NULL,
      enabled INTEGER NOT NULL,
      job TEXT NOT NULL                 -- JSON LogJobRecord without id
    );
    CREATE INDEX log_jobs_by_zone ON log_jobs (zone_id, enabled);

    CREATE TABLE ownership_challenges (
      zone_id TEXT NOT NULL,
      destination_conf TEXT NOT NULL,
      token_hash TEXT NOT NULL,         -- SHA-256 hex of the token
      expires INTEGER NOT NULL,         -- epoch ms
      PRIMARY KEY (zone_id, destination_conf)
    ) WITHOUT ROWID;

    CREATE TABLE s3_access_key_owners (
      access_key_id TEXT PRIMARY KEY,   -- s3_access_keys.access_key_id
      account_id TEXT NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX s3_access_key_owners_by_account ON s3_access_key_owners (account_id);
  `,
  postgres: `
    CREATE TABLE accounts (
      id TEXT PRIMARY KEY,
      email TEXT NOT NULL,
      name TEXT NOT NULL,
      key_hash TEXT NOT NULL,
      created BIGINT NOT NULL
    );
    CREATE UNIQUE INDEX accounts_email ON accounts (lower(email));

    CREATE TABLE zones (
      id TEXT PRIMARY KEY,
      account_id TEXT NOT NULL,
      name TEXT COLLATE "C" NOT NULL UNIQUE,
      origin TEXT,
      paused INTEGER NOT NULL,
      created BIGINT NOT NULL,
      modified BIGINT NOT NULL
    );
    CREATE INDEX zones_by_account ON zones (account_id, name);

    CREATE TABLE rulesets (
      id TEXT PRIMARY KEY,
      zone_id TEXT NOT NULL,
      name TEXT NOT NULL,
      description TEXT NOT NULL,
      kind TEXT NOT NULL,
      phase TEXT NOT NULL,
      version BIGINT NOT NULL,
      last_updated BIGINT NOT NULL,
      rules TEXT NOT NULL,
      custom_fields TEXT
    );
    CREATE UNIQUE INDEX rulesets_zone_phase ON rulesets (zone_id, phase) WHERE kind = 'zone';

    CREATE TABLE log_jobs (
      id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,  -- never reused, like AUTOINCREMENT
      zone_id TEXT NOT NULL,
      enabled INTEGER NOT NULL,
      job TEXT NOT NULL
    );
    CREATE INDEX log_jobs_by_zone ON log_jobs (zone_id, enabled);

    CREATE TABLE ownership_challenges (
      zone_id TEXT NOT NULL,
      destination_conf TEXT NOT NULL,
      token_hash TEXT NOT NULL,
      expires BIGINT NOT NULL,
      PRIMARY KEY (zone_id, destination_conf)
    );

    CREATE TABLE s3_access_key_owners (
      access_key_id TEXT PRIMARY KEY,
      account_id TEXT NOT NULL
    );
    CREATE INDEX s3_access_key_owners_by_account ON s3_access_key_owners (account_id);
  `,
};
