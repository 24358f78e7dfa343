/**
 * PostgreSQL for tests. Every test that needs it gets a schema of its own in the `test` database
 * (EDGEPORT_TEST_PG_URL, default postgres://postgres@127.0.0.1:5432/test), dropped after the test. A test
 * that needs PostgreSQL fails, never skips, when the server cannot be reached.
 *
 * EDGEPORT_TEST_DB=postgres makes the store, API and log suites run on PostgreSQL instead of
 * SQLite (see testDbUrl); `.ci/run` runs them both ways.
 */
import { randomBytes } from 'node:crypto';
import type { TestContext } from 'node:test';
import pg from 'pg';

export const TEST_PG_URL = process.env.EDGEPORT_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** Which metadata database the parametrized suites run on. */
export const TEST_DB: 'sqlite' | 'postgres' = process.env.EDGEPORT_TEST_DB === 'postgres' ? 'postgres' : 'sqlite';

/** A URL to a fresh, empty schema of its own for this test; dropped when the test ends. */
export async function pgTestUrl(t: TestContext, options: { pool?: number } = {}): Promise<string> {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  await admin(`CREATE SCHEMA ${schema}`);
  t.after(() => admin(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));
  const url = new URL(TEST_PG_URL);
  url.searchParams.set('schema', schema);
  url.searchParams.set('pool', String(options.pool ?? 4));
  return url.toString();
}

/** Under EDGEPORT_TEST_DB=postgres, a fresh schema's URL; otherwise undefined (SQLite in the data dir). */
export async function testDbUrl(t: TestContext): Promise<string | undefined> {
  return TEST_DB === 'postgres' ? pgTestUrl(t) : undefined;
}

/** Drops `schema` of the test database, if it is there (for schemas a test named itself). */
export function dropTestSchema(schema: string): Promise<void> {
  return admin(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
}

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_PG_URL });
  try {
    await client.connect();
  } catch (error) {
    throw new Error(
      `PostgreSQL is not reachable at ${TEST_PG_URL} (${(error as Error).message}). This test needs it and does not skip: start it (pg_ctlcluster 15 main start) or set EDGEPORT_TEST_PG_URL.`,
      { cause: error },
    );
  }
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
