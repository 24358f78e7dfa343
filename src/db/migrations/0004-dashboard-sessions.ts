/** Migration 4: dashboard sessions, shared by every instance on one database (a sign-in works on all of them). */
import type { Migration } from './index.ts';

export const dashboardSessions: Migration = {
  version: 4,
  name: 'dashboard-sessions',
  sqlite: `
    CREATE TABLE dashboard_sessions (
      id TEXT PRIMARY KEY,              -- SHA-256 of the cookie's token (the token itself is never kept)
      account_id TEXT NOT NULL,
      key_hash TEXT NOT NULL,           -- the account's key hash at sign-in: a new key ends the session
      csrf_token TEXT NOT NULL,
      created INTEGER NOT NULL,         -- epoch ms
      expires INTEGER NOT NULL          -- epoch ms
    ) WITHOUT ROWID;
    CREATE INDEX dashboard_sessions_by_expiry ON dashboard_sessions (expires);
    CREATE INDEX dashboard_sessions_by_created ON dashboard_sessions (created);
  `,
  postgres: `
    CREATE TABLE dashboard_sessions (
      id TEXT PRIMARY KEY,
      account_id TEXT NOT NULL,
      key_hash TEXT NOT NULL,
      csrf_token TEXT NOT NULL,
      created BIGINT NOT NULL,
      expires BIGINT NOT NULL
    );
    CREATE INDEX dashboard_sessions_by_expiry ON dashboard_sessions (expires);
    CREATE INDEX dashboard_sessions_by_created ON dashboard_sessions (created);
  `,
};
