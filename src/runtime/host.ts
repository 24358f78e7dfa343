/**
 * The script host: prepares the store a script binds (recovery, buckets created on first use,
 * background maintenance), starts its worker pool, and answers node:http requests through it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../core/log.ts';
import type { ObjectEngine } from '../store/engine/object-engine.ts';
import { accountStore } from '../store/engine/account-store.ts';
import { engineBlobs } from '../store/segment-writer.ts';
import { HttpExchange, type ExchangeContext } from './http-exchange.ts';
import type { ScriptConfig } from './script-config.ts';
import { WorkerPool } from './worker-pool.ts';

export interface ScriptHostOptions {
  script: ScriptConfig;
  /** The account whose buckets the script binds (null: the buckets of no account, as `edgeport dev` before any account exists). */
  accountId: string | null;
  dataDir: string;
  /** `[blobs] url`, when blobs live outside the data dir (workers open the same blob store). */
  blobsUrl?: string | undefined;
  /** `[db] url`, when the metadata is in PostgreSQL (workers connect to it too). */
  dbUrl?: string | undefined;
  logger: Logger;
  /** Workers for the script (default 2; the thread runtime only). */
  poolSize?: number;
  /**
   * The server's already-open engine on `dataDir` (edgeport start): used, not closed, by the host.
   * Without it the host opens (and recovers) its own, as `edgeport dev` does.
   */
  engine?: ObjectEngine;
}

export interface ScriptHost {
  /** A node:http request listener that serves the script. */
  readonly handle: (req: IncomingMessage, res: ServerResponse) => void;
  /** Stops the workers (requests in flight get 503) and closes the store. */
  close(): Promise<void>;
}

/**
 * Starts a host on the script's runtime (worker threads, or workerd: src/runtime/workerd); rejects
 * with RUNTIME_SCRIPT_START_FAILED when the script cannot load.
 */
export async function startScriptHost(options: ScriptHostOptions): Promise<ScriptHost> {
  if (options.script.runtime === 'workerd') return (await import('./workerd/workerd-host.ts')).startWorkerdHost(options);
  const { script, dataDir, logger } = options;
  // The server's own engine: it alone recovers the data dir (before any worker opens it), creates
  // the buckets, and runs maintenance and WAL checkpoints; workers open their own connections.
  const ownEngine = options.engine === undefined && script.storeBuckets.length > 0;
  const engine = options.engine ?? (!ownEngine ? undefined
    : await (await import('../store/engine/open-store-engine.ts')).openStoreEngine({
      dataDir, blobsUrl: options.blobsUrl, logger, recover: true, maintenance: true, backgroundCheckpoints: true,
    }));
  let pool: WorkerPool;
  try {
    const buckets = engine && accountStore(engine, options.accountId);
    for (const { bucketName } of script.storeBuckets) await buckets!.ensureBucket(bucketName);
    pool = await WorkerPool.start({ script, accountId: options.accountId, dataDir, blobsUrl: options.blobsUrl, dbUrl: options.dbUrl, logger, ...(options.poolSize !== undefined ? { size: options.poolSize } : {}) });
  } catch (error) {
    if (ownEngine) await engine?.close();
    throw error;
  }
  const context: ExchangeContext = {
    logger, scriptName: script.name,
    blobs: engine === undefined ? undefined : engineBlobs(engine),
  };
  return {
    handle: function handleScriptRequest(req, res) {
      pool.dispatch(new HttpExchange(req, res, context));
    },
    async close() {
      await pool.close();
      if (ownEngine) await engine?.close();
    },
  };
}
