/**
 * The startup sweep: deletes what a crash leaves behind, temporary writes and published blobs no
 * metadata row references (a crash between publishing a blob and committing its row). In the data
 * dir, temporary files are kept per writing process and only those of processes that are gone are
 * deleted (the CLI also holds the data dir's lock, so no other server writes there). On a blob
 * store other instances share, their writes in progress look just like leftovers, so only what has
 * been idle for a safety age is swept, and the reclaim queue (theirs too) is kept.
 */
import type { Logger } from '../../core/log.ts';
import type { MetadataStore } from '../../db/metadata-store.ts';
import type { BlobStore } from '../blobs/blob-store.ts';

/** An hour: far longer than any write stays idle between its temporary bytes and its commit. */
export const SHARED_SWEEP_AGE_MS = 60 * 60 * 1000;

export interface RecoveryOptions {
  meta: Pick<MetadataStore, 'referencedBlobIds' | 'clearReclaimQueue'>;
  blobs: BlobStore;
  /** Other instances may be writing to `blobs` right now (any `[blobs] url`). */
  shared: boolean;
  /** Other instances use the same metadata (PostgreSQL): the reclaim queue is theirs too. */
  sharedMetadata?: boolean;
  logger: Logger;
  /** With `shared`: sweep only leftovers idle this long (default SHARED_SWEEP_AGE_MS). */
  sharedSweepAgeMs?: number;
}

export async function recoverLeftovers(options: RecoveryOptions): Promise<{ temporary: number; orphans: number }> {
  const { meta, blobs, shared, logger } = options;
  const age = shared ? { olderThanMs: options.sharedSweepAgeMs ?? SHARED_SWEEP_AGE_MS } : {};
  const temporary = await blobs.clearTemporary(age);
  // Listed before the referenced set is read: a blob published in between is then either in
  // that set, or (shared) too young to be swept, or (local) impossible, as no one else writes.
  const candidates = await blobs.list(age);
  const referenced = await meta.referencedBlobIds();
  const orphans = candidates.filter((id) => !referenced.has(id));
  await blobs.delete(orphans);
  // Locally every unreferenced blob is gone now, so queued reclamations are moot. Shared, the
  // queue also holds other instances' dereferenced blobs (and young ones survived): keep it.
  if (!shared && !options.sharedMetadata) await meta.clearReclaimQueue();
  if (temporary + orphans.length > 0) logger.info({ temporary, orphans: orphans.length, shared }, 'Store recovered leftover files.');
  return { temporary, orphans: orphans.length };
}
