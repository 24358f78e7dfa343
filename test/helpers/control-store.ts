/**
 * The control store for a test, on the database the suites run on: SQLite in the data dir, or
 * under EDGEPORT_TEST_DB=postgres a PgControlStore on a PgDatabase (the test's own, or one it
 * shares with the store engine, as one edgeport instance does).
 */
import type { TestContext } from 'node:test';
import type { Clock } from '../../src/core/clock.ts';
import type { ControlStore } from '../../src/db/control-store.ts';
import { openControlStore } from '../../src/db/open-control-store.ts';
import { PgDatabase } from '../../src/db/postgres/pg-database.ts';
import { TEST_DB, pgTestUrl } from './postgres.ts';
import { TEST_SECRETS } from './secrets.ts';

export interface TestControlStoreOptions {
  dataDir: string;
  clock: Clock;
  /** PostgreSQL only: an open database to use (not closed here), e.g. the store engine's. */
  database?: PgDatabase | undefined;
  /** PostgreSQL only, without `database`: the schema to open (from testDbUrl), when something else in the test uses it too. */
  dbUrl?: string | undefined;
}

/**
 * Under EDGEPORT_TEST_DB=postgres, a PgDatabase on a fresh schema (or `dbUrl`), closed after the
 * test; otherwise undefined. After-hooks run in the order they were added: a test whose teardown
 * still uses the database (a log pipeline's close) adds that teardown before calling this.
 */
export async function openTestDatabase(t: TestContext, options: { clock: Clock; dbUrl?: string | undefined }): Promise<PgDatabase | undefined> {
  if (TEST_DB !== 'postgres') return undefined;
  const database = await PgDatabase.open({ url: options.dbUrl ?? (await pgTestUrl(t)), now: options.clock.now() });
  t.after(() => database.close());
  return database;
}

/** Opens the store, closed after the test (with its database when the database is its own). */
export async function openTestControlStore(t: TestContext, options: TestControlStoreOptions): Promise<ControlStore> {
  const database = options.database ?? (await openTestDatabase(t, options));
  const control = await openControlStore({ dataDir: options.dataDir, clock: options.clock, secrets: TEST_SECRETS, ...(database ? { database } : {}) });
  t.after(() => control.close());
  return control;
}
