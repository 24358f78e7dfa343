/**
 * How the script registry's operations (script-registry.ts) run: on SQLite, synchronously inside
 * the WriteQueue's group commit on a connection of its own to the data dir's database; on
 * PostgreSQL, in one transaction of the instance's PgDatabase (`?` placeholders become `$n`).
 */
import { join } from 'node:path';
import type { Database, Statement } from 'better-sqlite3';
import type { AccountQuotas } from '../../config/quotas.ts';
import type { Clock } from '../../core/clock.ts';
import type { SecretBox } from '../../core/crypto/secret-box.ts';
import type { PgDatabase } from '../postgres/pg-database.ts';
import { openSqliteConnection } from '../sqlite/open-sqlite.ts';
import { ScriptRegistry, type Op, type Query, type RegistryDriver, type Row } from './script-registry.ts';

/** Runs `op` to its end, answering each query it yields with `execute`'s rows. */
export function drive<T>(op: Op<T>, execute: (query: Query) => Row[]): T {
  let step = op.next();
  while (!step.done) step = op.next(execute(step.value));
  return step.value;
}

export async function driveAsync<T>(op: Op<T>, execute: (query: Query) => Promise<Row[]>): Promise<T> {
  let step = op.next();
  while (!step.done) step = op.next(await execute(step.value));
  return step.value;
}

/**
 * Runs the registry's queries on `db`: each text prepared once and kept (open-sqlite.ts: statements
 * are never freed); a reader answers its rows, a writer none.
 */
export function sqliteExecutor(db: Database): (query: Query) => Row[] {
  const statements = new Map<string, Statement>();
  return ({ sql, params }) => {
    let statement = statements.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      statements.set(sql, statement);
    }
    if (statement.reader) return statement.all(...params) as Row[];
    statement.run(...params);
    return [];
  };
}

export function sqliteRegistryDriver(file: string, now: number): RegistryDriver {
  const { db, writes } = openSqliteConnection(file, { autoCheckpoint: true, now });
  const execute = sqliteExecutor(db);
  return {
    run: (op) => writes.run(() => drive(op(), execute)),
    close: async () => {
      await writes.run(() => undefined);
      db.close();
      await writes.close();
    },
  };
}

const placeholders = new Map<string, string>();

/** `sql` with its `?` placeholders numbered for PostgreSQL (`$1`, `$2`, ...). */
export function numbered(sql: string): string {
  let text = placeholders.get(sql);
  if (text === undefined) {
    let n = 0;
    text = sql.replace(/\?/g, () => `$${++n}`);
    placeholders.set(sql, text);
  }
  return text;
}

export function pgRegistryDriver(database: PgDatabase): RegistryDriver {
  return {
    run: (op) => database.transaction((client) => driveAsync(op(), ({ sql, params }) => database.run<Row>(client, numbered(sql), params))),
    // The database belongs to the instance.
    close: async () => {},
  };
}

/**
 * The registry on the instance's PostgreSQL database when it has one, else in the data dir's
 * `metadata.sqlite`; `quotas`: the server's `[quotas]` (default: DEFAULTS.quotas); `secrets`
 * seals and opens the scripts' secrets.
 */
export function openScriptRegistry(options: {
  dataDir: string;
  clock: Clock;
  database?: PgDatabase;
  quotas?: AccountQuotas;
  secrets?: SecretBox;
}): ScriptRegistry {
  const driver = openRegistryDriver(options);
  return new ScriptRegistry(driver, options.clock, {
    ...(options.quotas ? { quotas: options.quotas } : {}),
    ...(options.secrets ? { secrets: options.secrets } : {}),
  });
}

/** A driver on the instance's PostgreSQL database when it has one, else on the data dir's `metadata.sqlite` (a connection of its own). */
export function openRegistryDriver(options: { dataDir: string; clock: Clock; database?: PgDatabase }): RegistryDriver {
  return options.database ? pgRegistryDriver(options.database) : sqliteRegistryDriver(join(options.dataDir, 'metadata.sqlite'), options.clock.now());
}
