/**
 * The `env` a script receives: one StoreBucket per `store_buckets` entry, on this worker's own
 * store engine (its own database connection), with the script's compatibility rules applied. The
 * bindings name buckets of the script's account only.
 */
import type { ScriptConfig } from './script-config.ts';

export interface ScriptEnv {
  env: Readonly<Record<string, unknown>>;
  /** Closes what the bindings opened. */
  close(): Promise<void>;
}

/** Builds `env`; opens the store only when the script binds a bucket. */
export async function createScriptEnv(script: ScriptConfig, dataDir: string,
  where: { accountId: string | null; blobsUrl?: string | undefined; dbUrl?: string | undefined }): Promise<ScriptEnv> {
  if (script.storeBuckets.length === 0) return { env: Object.freeze({}), close: async () => undefined };
  // Loaded only here, so a script without buckets never loads the store (or SQLite).
  const [{ createStoreBucket, listHonorsInclude }, { openStoreEngine }, { accountStore }] = await Promise.all([
    import('../store/binding/index.ts'), import('../store/engine/open-store-engine.ts'), import('../store/engine/account-store.ts'),
  ]);
  // The server opened the store first (recovery, bucket creation, background checkpoints), so
  // this connection leaves WAL checkpoints to the server's checkpointer thread.
  // With `[db] url`, a small pool of this worker's own (the server's pool lives in another thread).
  const database = where.dbUrl === undefined ? undefined
    : await (await import('../db/postgres/pg-database.ts')).PgDatabase.open({ url: withPoolSize(where.dbUrl, 2), now: Date.now() });
  const engine = await openStoreEngine({ dataDir, blobsUrl: where.blobsUrl, backgroundCheckpoints: true, ...(database ? { database } : {}) })
    .catch(async (error: unknown) => {
      await database?.close();
      throw error;
    });
  const honorsInclude = listHonorsInclude(script.compatibilityDate, script.compatibilityFlags);
  const buckets = accountStore(engine, where.accountId);
  const env: Record<string, unknown> = {};
  for (const { binding, bucketName } of script.storeBuckets) {
    env[binding] = createStoreBucket(buckets, bucketName, { listHonorsInclude: honorsInclude });
  }
  return {
    env: Object.freeze(env),
    async close() {
      await engine.close();
      await database?.close();
    },
  };
}

function withPoolSize(url: string, size: number): string {
  const parsed = new URL(url);
  parsed.searchParams.set('pool', String(size));
  return parsed.toString();
}
