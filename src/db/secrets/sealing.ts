/**
 * The steps that touch every sealed value of a database at once (sealed-rows.ts lists them), each
 * in one transaction, so a crash leaves the database as it was before the step or as it is after:
 *
 * - `ensureSealed`, at every start: a database never sealed (new, or kept by an edgeport from
 *   before migration 17) gets every clear value sealed with the start's key and its
 *   `secrets_sealing` row; a sealed one names the key it is sealed with, which must be one of the
 *   keys given (its check value opening with it), else nothing is read or written.
 * - `rotateKey` (`edgeport secrets rotate-key`): every value opened with the old key and sealed
 *   with the new one, and the row rewritten.
 *
 * On SQLite the steps run on a connection of their own with `secure_delete` on (the bytes a sealed
 * value replaces are zeroed, not left in the file's free space); `scrub` then empties the WAL
 * (a TRUNCATE checkpoint), which held the replaced pages. On PostgreSQL they run under an advisory
 * lock, so instances starting together seal once; every running instance holds the instance lock
 * shared (`holdInstanceLock`), and a rotation takes it exclusively, so it is refused while any
 * instance runs (it holds the old key) and instances that start meanwhile wait for its end.
 */
import BetterSqlite3 from 'better-sqlite3';
import { SecretBox, rowBinding, type SecretsKey } from '../../core/crypto/secret-box.ts';
import type { PgDatabase } from '../postgres/pg-database.ts';
import { drive, driveAsync, numbered, sqliteExecutor } from '../scripts/script-registry-drivers.ts';
import type { Op, Row } from '../scripts/script-registry.ts';
import { migrateSqlite } from '../sqlite/migrate.ts';
import { openSqlite, retainNative } from '../sqlite/open-sqlite.ts';
import { accessKeyBinding, logJobBinding, workerSecretBinding } from './sealed-rows.ts';

/** Serializes the sealing steps of one database's instances (advisory lock class; the second key is the schema). */
const SEALING_LOCK_CLASS = 0x7365616c; // "seal"
/** Held shared by every running instance, exclusively by a rotation. */
const INSTANCE_LOCK_CLASS = 0x696e7374; // "inst"

const CHECK_TEXT = 'edgeport secrets key check';
const CHECK_BINDING = rowBinding('secrets_sealing', 1);

/** How many values a step sealed, by table. */
export interface SealedCounts {
  accessKeys: number;
  workerSecrets: number;
  logJobs: number;
}

export type EnsureOutcome =
  /** The database was clear: every value is now sealed with `key`. */
  | { kind: 'sealed'; key: SecretsKey; counts: SealedCounts }
  /** The database is sealed with `key`, one of those given. */
  | { kind: 'verified'; key: SecretsKey }
  /** The database is sealed with the key of id `keyId`, none of those given (or its check value did not open). */
  | { kind: 'wrong-key'; keyId: string };

export type RotateOutcome = { kind: 'rotated'; counts: SealedCounts } | { kind: 'unsealed' } | { kind: 'wrong-key'; keyId: string };

/** A rotation was refused because an instance runs on the database. */
export class DatabaseInUseError extends Error {
  override name = 'DatabaseInUseError';
}

/** The database a step runs on. */
export interface SealingTarget {
  /** Runs `op` in one transaction; `exclusive`: refused (DatabaseInUseError) while an instance holds the instance lock. */
  run<T>(op: () => Op<T>, options?: { exclusive?: boolean }): Promise<T>;
  /** After a step that replaced values: removes what the database keeps of the bytes replaced, where it can (SQLite's WAL). */
  scrub(): Promise<void>;
  close(): Promise<void>;
}

function* q(sql: string, ...params: unknown[]): Op<Row[]> {
  return yield { sql, params };
}

function* sealState(): Op<{ keyId: string; checkValue: string } | null> {
  const [row] = yield* q('SELECT key_id, check_value FROM secrets_sealing WHERE id = 1');
  return row ? { keyId: String(row.key_id), checkValue: String(row.check_value) } : null;
}

/** Whether `key` opens the check value (a key id that matches by chance, or an altered row, does not). */
function opensCheck(key: SecretsKey, checkValue: string): boolean {
  try {
    return new SecretBox(key).open(checkValue, CHECK_BINDING) === CHECK_TEXT;
  } catch {
    return false;
  }
}

/** Seals every value anew with `to`, reading each through `read` (clear, or opened with the old key). */
function* resealAll(read: (stored: string, binding: string) => string, to: SecretBox, now: number): Op<SealedCounts> {
  const counts: SealedCounts = { accessKeys: 0, workerSecrets: 0, logJobs: 0 };
  for (const row of yield* q('SELECT access_key_id, secret FROM s3_access_keys')) {
    const binding = accessKeyBinding(String(row.access_key_id));
    yield* q('UPDATE s3_access_keys SET secret = ? WHERE access_key_id = ?', to.seal(read(String(row.secret), binding), binding), row.access_key_id);
    counts.accessKeys += 1;
  }
  for (const row of yield* q('SELECT account_id, script, name, value FROM worker_secrets')) {
    const binding = workerSecretBinding(String(row.account_id), String(row.script), String(row.name));
    yield* q(
      'UPDATE worker_secrets SET value = ? WHERE account_id = ? AND script = ? AND name = ?',
      to.seal(read(String(row.value), binding), binding),
      row.account_id,
      row.script,
      row.name,
    );
    counts.workerSecrets += 1;
  }
  for (const row of yield* q('SELECT id, job FROM log_jobs')) {
    const binding = logJobBinding(Number(row.id));
    const job = JSON.parse(String(row.job)) as { destinationConf: string };
    yield* q(
      'UPDATE log_jobs SET job = ? WHERE id = ?',
      JSON.stringify({ ...job, destinationConf: to.seal(read(job.destinationConf, binding), binding) }),
      row.id,
    );
    counts.logJobs += 1;
  }
  yield* q('DELETE FROM secrets_sealing');
  yield* q('INSERT INTO secrets_sealing (id, key_id, check_value, sealed) VALUES (1, ?, ?, ?)', to.keyId, to.seal(CHECK_TEXT, CHECK_BINDING), now);
  return counts;
}

/**
 * At start: seals a clear database with `keys[0]`, or finds which of `keys` a sealed one is sealed
 * with (a start after an interrupted rotation holds the old key and the new one).
 */
export async function ensureSealed(target: SealingTarget, keys: readonly SecretsKey[], now: number): Promise<EnsureOutcome> {
  if (keys.length === 0) throw new Error('ensureSealed needs a key.');
  const outcome = await target.run(function* ensureSealedOp(): Op<EnsureOutcome> {
    const state = yield* sealState();
    if (!state) return { kind: 'sealed', key: keys[0]!, counts: yield* resealAll((clear) => clear, new SecretBox(keys[0]!), now) };
    const key = keys.find((candidate) => candidate.id === state.keyId && opensCheck(candidate, state.checkValue));
    return key ? { kind: 'verified', key } : { kind: 'wrong-key', keyId: state.keyId };
  });
  if (outcome.kind === 'sealed') await target.scrub();
  return outcome;
}

/** Reseals every value of a database sealed with `from` with `to`, in one transaction. */
export async function rotateKey(target: SealingTarget, from: SecretsKey, to: SecretsKey, now: number): Promise<RotateOutcome> {
  const outcome = await target.run(
    function* rotateOp(): Op<RotateOutcome> {
      const state = yield* sealState();
      if (!state) return { kind: 'unsealed' };
      if (state.keyId !== from.id || !opensCheck(from, state.checkValue)) return { kind: 'wrong-key', keyId: state.keyId };
      const old = new SecretBox(from);
      return { kind: 'rotated', counts: yield* resealAll((sealed, binding) => old.open(sealed, binding), new SecretBox(to), now) };
    },
    { exclusive: true },
  );
  if (outcome.kind === 'rotated') await target.scrub();
  return outcome;
}

/** The id of the key a database is sealed with, or null when it is not sealed yet. */
export async function sealedKeyId(target: SealingTarget): Promise<string | null> {
  return (await target.run(sealState))?.keyId ?? null;
}

/** The id of the key the SQLite database `file` (a backup's, opened read-only) is sealed with; null when it is not sealed or predates sealing. */
export function sealedKeyIdIn(file: string): string | null {
  const db = retainNative(new BetterSqlite3(file, { readonly: true, fileMustExist: true }));
  try {
    const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'secrets_sealing'").pluck().get();
    return table === undefined ? null : ((db.prepare('SELECT key_id FROM secrets_sealing WHERE id = 1').pluck().get() as string | undefined) ?? null);
  } finally {
    db.close();
  }
}

/** The data dir's `metadata.sqlite` (migrated first), on a connection of its own, closed by close(). */
export function sqliteSealingTarget(file: string, now: number): SealingTarget {
  const db = openSqlite(file);
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA synchronous = FULL');
  db.exec('PRAGMA busy_timeout = 10000');
  db.exec('PRAGMA secure_delete = ON');
  migrateSqlite(db, now);
  const execute = sqliteExecutor(db);
  return {
    run: async (op) => db.transaction(() => drive(op(), execute)).immediate(),
    scrub: async () => {
      db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    },
    close: async () => {
      db.close();
    },
  };
}

/** The instance's PostgreSQL database (opened and closed by its owner). */
export function pgSealingTarget(database: PgDatabase): SealingTarget {
  return {
    run: (op, options = {}) =>
      database.transaction(async (client) => {
        if (options.exclusive) {
          const [row] = await database.run<{ free: boolean }>(client, 'SELECT pg_try_advisory_xact_lock($1, hashtext(current_schema())) AS free', [
            INSTANCE_LOCK_CLASS,
          ]);
          if (!row?.free) throw new DatabaseInUseError(`An edgeport instance runs on ${database.where} (schema ${database.schema}).`);
        }
        await database.run(client, 'SELECT pg_advisory_xact_lock($1, hashtext(current_schema()))', [SEALING_LOCK_CLASS]);
        return driveAsync(op(), ({ sql, params }) => database.run<Row>(client, numbered(sql), params));
      }),
    scrub: async () => {},
    close: async () => {},
  };
}

/**
 * Holds the database's instance lock shared for as long as `database` is open (a rotation is
 * refused meanwhile); waits while a rotation runs.
 */
export async function holdInstanceLock(database: PgDatabase): Promise<void> {
  await database.holdSharedLock(INSTANCE_LOCK_CLASS);
}
