/**
 * Migration 15: the script registry (src/db/scripts). Scripts an account deploys through the API,
 * their versions (metadata and module contents, bounded at upload), deployments, secrets, routes
 * per zone, the account's workers.dev-style subdomain, and one change counter every instance polls
 * to learn that what the edge serves changed.
 */
import type { Migration } from './index.ts';

function tables(time: string, text: string): string {
  return `
    CREATE TABLE worker_scripts (
      account_id TEXT NOT NULL,
      name ${text} NOT NULL,
      created ${time} NOT NULL,
      modified ${time} NOT NULL,
      settings TEXT NOT NULL,            -- JSON: logpush, tags, tail_consumers, observability
      dev_enabled INTEGER NOT NULL,      -- served on <name>.<account subdomain>.<dev domain>
      secrets_stamp ${time} NOT NULL,    -- advances with every secret written or deleted
      PRIMARY KEY (account_id, name)
    );
    CREATE TABLE worker_versions (
      id TEXT PRIMARY KEY,
      account_id TEXT NOT NULL,
      script ${text} NOT NULL,
      number INTEGER NOT NULL,
      created ${time} NOT NULL,
      metadata TEXT NOT NULL,            -- JSON: main module, compatibility, bindings, annotations
      modules TEXT NOT NULL,             -- JSON: [{name, type, content (base64)}], at most the upload limit
      etag TEXT NOT NULL
    );
    CREATE UNIQUE INDEX worker_versions_by_script ON worker_versions (account_id, script, number);
    CREATE TABLE worker_deployments (
      id TEXT PRIMARY KEY,
      account_id TEXT NOT NULL,
      script ${text} NOT NULL,
      number INTEGER NOT NULL,           -- 1, 2, ... per script: the highest serves
      created ${time} NOT NULL,
      version_id TEXT NOT NULL,
      message TEXT
    );
    CREATE UNIQUE INDEX worker_deployments_by_script ON worker_deployments (account_id, script, number);
    CREATE TABLE worker_secrets (
      account_id TEXT NOT NULL,
      script ${text} NOT NULL,
      name ${text} NOT NULL,
      type TEXT NOT NULL,
      value TEXT NOT NULL,
      PRIMARY KEY (account_id, script, name)
    );
    CREATE TABLE worker_routes (
      id TEXT PRIMARY KEY,
      zone_id TEXT NOT NULL,
      account_id TEXT NOT NULL,
      pattern ${text} NOT NULL UNIQUE,
      script ${text}
    );
    CREATE INDEX worker_routes_by_zone ON worker_routes (zone_id);
    CREATE TABLE worker_subdomains (
      account_id TEXT PRIMARY KEY,
      subdomain ${text} NOT NULL UNIQUE
    );
    CREATE TABLE worker_changes (id INTEGER PRIMARY KEY, seq ${time} NOT NULL);
    INSERT INTO worker_changes (id, seq) VALUES (1, 0);
  `;
}

export const scriptRegistry: Migration = {
  version: 15,
  name: 'script-registry',
  sqlite: tables('INTEGER', 'TEXT'),
  postgres: tables('BIGINT', 'TEXT COLLATE "C"'),
};
