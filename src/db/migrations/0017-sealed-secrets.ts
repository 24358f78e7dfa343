/**
 * Migration 17: secrets are sealed (src/core/crypto/secret-box.ts). `secrets_sealing` holds the
 * id of the key every sealed value is sealed with and a known text sealed with it, so a start with
 * another key is refused before anything is read or written. The values themselves stay in their
 * TEXT columns (`s3_access_keys.secret`, `worker_secrets.value`, and `destinationConf` inside
 * `log_jobs.job`), sealed by the first start that has a key (src/db/secrets/sealing.ts): in one
 * transaction, every clear value is sealed and this table's row written, so a database is either
 * wholly clear (no row) or wholly sealed.
 */
import type { Migration } from './index.ts';

function table(time: string): string {
  return `
    CREATE TABLE secrets_sealing (
      id INTEGER PRIMARY KEY CHECK (id = 1),  -- one row, once sealed
      key_id TEXT NOT NULL,                   -- 8 hex: the key every sealed value is sealed with
      check_value TEXT NOT NULL,              -- a known text sealed with that key
      sealed ${time} NOT NULL                 -- epoch ms of the sealing or the last key rotation
    );
  `;
}

export const sealedSecrets: Migration = { version: 17, name: 'sealed-secrets', sqlite: table('INTEGER'), postgres: table('BIGINT') };
