/**
 * Opens the store engine on a data directory: SQLite metadata (`metadata.sqlite`) and blob files
 * (`blobs/`, `tmp/`). With `recover`, first sweeps what a crash can leave behind: temporary files
 * and blob files no row references. Only one process should recover, before others open.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { systemClock, type Clock } from '../../core/clock.ts';
import { silentLogger, type Logger } from '../../core/log.ts';
import { SqliteMetadataStore } from '../../db/sqlite/sqlite-metadata-store.ts';
import { startWalCheckpointer } from '../../db/sqlite/wal-checkpointer.ts';
import { FsBlobStore } from '../blobs/fs-blob-store.ts';
import { ObjectEngine } from './object-engine.ts';

export interface OpenStoreEngineOptions {
  dataDir: string;
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
}

export async function openStoreEngine(options: OpenStoreEngineOptions): Promise<ObjectEngine> {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? silentLogger;
  mkdirSync(options.dataDir, { recursive: true });
  const blobs = await FsBlobStore.open(options.dataDir);
  const file = join(options.dataDir, 'metadata.sqlite');
  const meta = new SqliteMetadataStore({
    file, clock, reclaimGraceMs: options.reclaimGraceMs ?? 60_000, autoCheckpoint: !options.backgroundCheckpoints,
  });
  if (options.recover) {
    const temporary = await blobs.clearTemporary();
    const referenced = await meta.referencedBlobIds();
    const orphans = (await blobs.list()).filter((id) => !referenced.has(id));
    await blobs.delete(orphans);
    await meta.clearReclaimQueue();
    if (temporary + orphans.length > 0) logger.info({ temporary, orphans: orphans.length }, 'Store recovered leftover files.');
  }
  const engine = new ObjectEngine({ meta, blobs, clock, logger, ...(options.inlineMaxBytes !== undefined ? { inlineMaxBytes: options.inlineMaxBytes } : {}) });
  if (!options.maintenance) return engine;
  const checkpointer = options.backgroundCheckpoints
    ? startWalCheckpointer(file, { intervalMs: 200, onError: (message) => logger.warn({ error: message }, 'WAL checkpoint failed; it is retried.') })
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
