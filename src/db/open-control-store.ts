/**
 * Opens the control plane's store: on the instance's PgDatabase when it has one (several instances
 * share it), otherwise on SQLite in the data dir's `metadata.sqlite`.
 */
import { systemClock, type Clock } from '../core/clock.ts';
import type { SecretBox } from '../core/crypto/secret-box.ts';
import type { ControlStore } from './control-store.ts';
import { PgControlStore } from './postgres/pg-control-store.ts';
import type { PgDatabase } from './postgres/pg-database.ts';
import { openSqliteControlStore } from './sqlite/sqlite-control-store.ts';

export interface OpenControlStoreOptions {
  /** The SQLite database's directory (unused with `database`). */
  dataDir: string;
  clock: Clock;
  /** SQLite only: false when a WalCheckpointer thread checkpoints the database. */
  autoCheckpoint?: boolean;
  /** PostgreSQL: the instance's database, opened (and later closed) by the caller; the store's close() leaves it open. */
  database?: PgDatabase;
  /** Seals and opens log jobs' destinations (src/db/secrets); absent, jobs can be counted and deleted but neither written nor read. */
  secrets?: SecretBox;
}

export async function openControlStore(options: OpenControlStoreOptions): Promise<ControlStore> {
  const secrets = options.secrets ? { secrets: options.secrets } : {};
  if (options.database) return PgControlStore.open({ database: options.database, clock: options.clock, ...secrets });
  return openSqliteControlStore({
    dataDir: options.dataDir,
    clock: options.clock,
    ...(options.autoCheckpoint === undefined ? {} : { autoCheckpoint: options.autoCheckpoint }),
    ...secrets,
  });
}

/** The first account of the control store in `dataDir`, if it has one (what `edgeport dev` and `edgeport/store` bind). */
export async function firstAccountIdIn(dataDir: string): Promise<string | null> {
  const control = await openControlStore({ dataDir, clock: systemClock });
  try {
    return (await control.firstAccount())?.id ?? null;
  } finally {
    await control.close();
  }
}
