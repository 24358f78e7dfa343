/**
 * `edgeport accounts create <email> [--config edgeport.toml] [--data-dir DIR]`: makes a
 * management API account in the server's database (SQLite in the data dir, or `[db] url`) and
 * prints its key, once (only its hash is stored). Safe while the server runs: the write goes
 * through SQLite's WAL, or a PostgreSQL transaction, like the server's; so it takes no data dir
 * lock (data-dir-lock.ts), and works beside a running `edgeport start`.
 */
import { createAccount } from '../api/index.ts';
import { systemClock } from '../core/clock.ts';
import { ScryptThread } from '../core/crypto/scrypt-thread.ts';
import { loadConfig } from '../config/load.ts';
import { openControlStore } from '../db/open-control-store.ts';
import { parseAccountsArgs } from './args.ts';

/** Runs `edgeport accounts <args>` (the action first); `out` receives the lines meant for stdout. */
export async function runAccounts(args: readonly string[], out: (line: string) => void = (line) => process.stdout.write(`${line}\n`)): Promise<void> {
  const { email, config: file, dataDir } = parseAccountsArgs(args);
  const config = loadConfig({ ...(file === undefined ? {} : { file }), flags: dataDir === undefined ? {} : { data_dir: dataDir } });
  // pg is loaded only when a PostgreSQL URL is configured.
  const database = config.dbUrl === undefined ? undefined
    : await (await import('../db/postgres/pg-database.ts')).PgDatabase.open({ url: config.dbUrl, now: systemClock.now() });
  try {
    const control = await openControlStore({ dataDir: config.dataDir, clock: systemClock, ...(database ? { database } : {}) });
    const scrypt = new ScryptThread();
    try {
      const { account, key } = await createAccount(control, email, { scrypt });
      out(`edgeport: created account ${account.id} for ${account.email}. Its API key is shown only this once:`);
      out(`  X-Auth-Email: ${account.email}`);
      out(`  X-Auth-Key:   ${key}`);
    } finally {
      await scrypt.close();
      await control.close();
    }
  } finally {
    await database?.close();
  }
}
