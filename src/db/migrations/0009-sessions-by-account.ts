/**
 * Migration 9: dashboard sessions are capped per account (the newest N of each account are kept),
 * no longer for the whole server, where one account signing in over and over signed every other
 * account out. The cap's query walks one account's sessions, newest first: it needs this index; the
 * index by creation time served only the server-wide cap.
 */
import type { Migration } from './index.ts';

export const sessionsByAccount: Migration = {
  version: 9,
  name: 'sessions-by-account',
  sqlite: `
    CREATE INDEX dashboard_sessions_by_account ON dashboard_sessions (account_id, created);
    DROP INDEX dashboard_sessions_by_created;
  `,
  postgres: `
    CREATE INDEX dashboard_sessions_by_account ON dashboard_sessions (account_id, created);
    DROP INDEX dashboard_sessions_by_created;
  `,
};
