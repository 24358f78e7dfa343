/**
 * Opens the store engine on a data directory: SQLite metadata (`metadata.sqlite`) and blob files
 * (`blobs/`, `tmp/`), or the blob store of `blobsUrl`. With `recover`, first sweeps what a crash can
 * leave behind: temporary files and blob files no row references (recovery.ts). On the local data
 * dir only one process should recover, before others open; a shared blob store is swept safely.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { systemClock, type Clock } from '../../core/clock.ts';
import type { SecretBox } from '../../core/crypto/secret-box.ts';
import { silentLogger, type Logger } from '../../core/log.ts';
import type { AccountQuotas } from '../../config/quotas.ts';
import type { MetadataStore } from '../../db/metadata-store.ts';
import type { PgDatabase } from '../../db/postgres/pg-database.ts';
import { PgMetadataStore } from '../../db/postgres/pg-metadata-store.ts';
import { SqliteMetadataStore } from '../../db/sqlite/sqlite-metadata-store.ts';
import { startWalCheckpointer, walRestartLogger } from '../../db/sqlite/wal-checkpointer.ts';
import { openBlobStore } from '../blobs/open-blob-store.ts';
import { startFailure } from '../blobs/start-failure.ts';
import { ObjectEngine } from './object-engine.ts';
import { recoverLeftovers } from './recovery.ts';

export interface OpenStoreEngineOptions {
  dataDir: string;
  /**
   * `[blobs] url`: `file:///shared/dir` or `s3://bucket/prefix?...` (open-blob-store.ts). Absent:
   * blob files in `dataDir`. With a URL the blob store counts as shared by several instances.
   */
  blobsUrl?: string | undefined;
  /** Each call's deadline on an `s3://` blob store (`[blobs] timeout_ms`; default 10 s). */
  blobsTimeoutMs?: number;
  /** On a shared blob store, recovery sweeps only leftovers idle this long (default 1 hour). */
  sharedSweepAgeMs?: number;
  clock?: Clock;
  logger?: Logger;
  /** Sweep temporary files and orphaned blobs before opening (single process only). */
  recover?: boolean;
  /** Reclaim dereferenced blobs and expire multipart uploads in the background. */
  maintenance?: boolean;
  inlineMaxBytes?: number;
  /** How long a dereferenced blob stays on disk, so reads that already began can finish. */
  reclaimGraceMs?: number;
  /**
   * Checkpoint the SQLite WAL from a dedicated thread (started with `maintenance`); every
   * connection opened with this flag leaves checkpoints to that thread. Servers set it; a lone
   * engine (tests, scripts) can leave it off and let SQLite checkpoint during commits.
   */
  backgroundCheckpoints?: boolean;
  /**
   * Keep the metadata in this PostgreSQL database (shared by several instances) instead of SQLite
   * in the data dir. The engine uses it but does not close it.
   */
  database?: PgDatabase;
  /** The server's quotas (`[quotas]`), for accounts with none of their own; default: DEFAULTS.quotas. */
  quotas?: AccountQuotas;
  /** Seals and opens the S3 secret keys in the metadata (src/db/secrets); absent, they can be neither stored nor read. */
  secrets?: SecretBox;
}

export async function openStoreEngine(options: OpenStoreEngineOptions): Promise<ObjectEngine> {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? silentLogger;
  mkdirSync(options.dataDir, { recursive: true });
  const { store: blobs, shared: sharedBlobs } = await openBlobStore({
    url: options.blobsUrl,
    dataDir: options.dataDir,
    timeoutMs: options.blobsTimeoutMs,
    logger,
  });
  const file = join(options.dataDir, 'metadata.sqlite');
  const reclaimGraceMs = options.reclaimGraceMs ?? 60_000;
  const quotas = options.quotas === undefined ? {} : { quotas: options.quotas };
  const meta: MetadataStore = options.database
    ? new PgMetadataStore({ database: options.database, clock, reclaimGraceMs, ...quotas, ...(options.secrets ? { secrets: options.secrets } : {}) })
    : new SqliteMetadataStore({
        file,
        clock,
        reclaimGraceMs,
        autoCheckpoint: !options.backgroundCheckpoints,
        ...quotas,
        ...(options.secrets ? { secrets: options.secrets } : {}),
      });
  if (options.recover) {
    try {
      await recoverLeftovers({
        meta,
        blobs,
        shared: sharedBlobs,
        sharedMetadata: options.database !== undefined,
        logger,
        ...(options.sharedSweepAgeMs !== undefined ? { sharedSweepAgeMs: options.sharedSweepAgeMs } : {}),
      });
    } catch (error) {
      await blobs.close().catch(() => undefined);
      // A remote store's failure names the store, the call and its answer, for the operator.
      const where = (blobs as { where?: unknown }).where;
      throw typeof where === 'string' && (error as { details?: { blobStore?: unknown } }).details?.blobStore === 's3'
        ? startFailure(where, error, 'swept of what a crash left at start')
        : error;
    }
  }
  const engine = new ObjectEngine({ meta, blobs, clock, logger, ...(options.inlineMaxBytes !== undefined ? { inlineMaxBytes: options.inlineMaxBytes } : {}) });
  if (!options.maintenance) return engine;
  const checkpointer =
    options.backgroundCheckpoints && !options.database
      ? startWalCheckpointer(file, {
          intervalMs: 200,
          onError: (message) => logger.warn({ error: message }, 'WAL checkpoint failed; it is retried.'),
          onRestart: walRestartLogger(logger),
        })
      : null;
  const timer = setInterval(() => {
    Promise.all([engine.reclaimBlobs(), engine.expireUploads()]).catch((error: unknown) => {
      logger.warn({ err: error }, 'Store maintenance failed; it is retried.');
    });
  }, 10_000);
  timer.unref();
  const close = engine.close.bind(engine);
  engine.close = async () => {
    clearInterval(timer);
    await close();
    await checkpointer?.stop();
  };
  return engine;
}
