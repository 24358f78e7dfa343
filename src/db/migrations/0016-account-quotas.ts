/**
 * Migration 16: what each account stores, kept up to date by every write (src/db/account-usage.ts),
 * so a quota is checked with one row instead of a scan: the bytes and count of its objects (the
 * parts of its open multipart uploads count as bytes), the bytes of its scripts' kept versions,
 * and the quotas the operator set for it (NULL: the server's `[quotas]`). A version now carries its
 * module bytes. Filled here from what is already stored.
 */
import type { Migration } from './index.ts';

/** The account of a stored bucket name (`<account>/<name>`), or '' for a bucket of no account. */
const ACCOUNT_OF_BUCKET = {
  sqlite: (column: string) => `CASE WHEN instr(${column}, '/') > 0 THEN substr(${column}, 1, instr(${column}, '/') - 1) ELSE '' END`,
  postgres: (column: string) => `CASE WHEN strpos(${column}, '/') > 0 THEN split_part(${column}, '/', 1) ELSE '' END`,
};

/** The decoded size of each module's base64 content, summed over a version's `modules` JSON. */
const MODULE_BYTES = {
  sqlite: `(SELECT coalesce(sum(length(c) / 4 * 3 - (CASE WHEN c LIKE '%==' THEN 2 WHEN c LIKE '%=' THEN 1 ELSE 0 END)), 0)
    FROM (SELECT json_extract(m.value, '$.content') AS c FROM json_each(worker_versions.modules) m))`,
  postgres: `(SELECT coalesce(sum(length(decode(m ->> 'content', 'base64'))), 0) FROM jsonb_array_elements(worker_versions.modules::jsonb) m)`,
};

function ddl(dialect: 'sqlite' | 'postgres', amount: string): string {
  const account = ACCOUNT_OF_BUCKET[dialect];
  return `
    CREATE TABLE account_usage (
      account_id TEXT PRIMARY KEY,                       -- '' for the buckets of no account
      object_bytes ${amount} NOT NULL DEFAULT 0,          -- objects' bodies and open uploads' parts
      object_count ${amount} NOT NULL DEFAULT 0,
      script_bytes ${amount} NOT NULL DEFAULT 0,          -- modules of every kept script version
      max_object_bytes ${amount},                         -- the operator's quotas for this account; NULL: [quotas]'s, 0: none
      max_objects ${amount},
      max_script_bytes ${amount}
    );
    ALTER TABLE worker_versions ADD COLUMN bytes ${amount} NOT NULL DEFAULT 0;  -- its modules' decoded bytes
    UPDATE worker_versions SET bytes = ${MODULE_BYTES[dialect]};
    INSERT INTO account_usage (account_id, object_bytes, object_count)
      SELECT ${account('bucket')}, sum(size), count(*) FROM objects WHERE true GROUP BY 1
      ON CONFLICT (account_id) DO UPDATE SET object_bytes = excluded.object_bytes, object_count = excluded.object_count;
    INSERT INTO account_usage (account_id, object_bytes)
      SELECT ${account('u.bucket')}, sum(p.size) FROM upload_parts p JOIN uploads u ON u.upload_id = p.upload_id WHERE u.state = 'active' GROUP BY 1
      ON CONFLICT (account_id) DO UPDATE SET object_bytes = account_usage.object_bytes + excluded.object_bytes;
    INSERT INTO account_usage (account_id, script_bytes)
      SELECT account_id, sum(bytes) FROM worker_versions WHERE true GROUP BY account_id
      ON CONFLICT (account_id) DO UPDATE SET script_bytes = excluded.script_bytes;
  `;
}

export const accountQuotas: Migration = { version: 16, name: 'account-quotas', sqlite: ddl('sqlite', 'INTEGER'), postgres: ddl('postgres', 'BIGINT') };
