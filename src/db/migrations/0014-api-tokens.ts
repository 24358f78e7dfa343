/**
 * Migration 14: API tokens (`Authorization: Bearer`), made under `/user/tokens`. A token belongs to
 * one account; its value is kept only as a SHA-256 hash (a value carries 240 random bits, so a fast
 * hash is as safe as a slow one), unique and indexed: authentication is one lookup by that hash.
 */
import type { Migration } from './index.ts';

export const apiTokens: Migration = {
  version: 14,
  name: 'api-tokens',
  sqlite: `
    CREATE TABLE api_tokens (
      id TEXT PRIMARY KEY,              -- 32 lowercase hex characters
      account_id TEXT NOT NULL,         -- the account (its one user) that made it
      value_hash TEXT NOT NULL UNIQUE,  -- SHA-256 (base64url) of the token's value; the value itself is never kept
      token TEXT NOT NULL,              -- JSON of the rest of ApiTokenRecord (src/db/api-tokens/api-token-store.ts)
      created INTEGER NOT NULL          -- epoch ms (list order)
    ) WITHOUT ROWID;
    CREATE INDEX api_tokens_by_account ON api_tokens (account_id, created);
  `,
  postgres: `
    CREATE TABLE api_tokens (
      id TEXT PRIMARY KEY,
      account_id TEXT NOT NULL,
      value_hash TEXT NOT NULL UNIQUE,
      token TEXT NOT NULL,
      created BIGINT NOT NULL
    );
    CREATE INDEX api_tokens_by_account ON api_tokens (account_id, created);
  `,
};
