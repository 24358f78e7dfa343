/**
 * Readiness of a blob store: a tiny blob written, committed and deleted, which proves more than a
 * bucket that answers (a full or read-only store answers a HEAD, and refuses every write). A probe
 * left behind by a crash between its commit and its delete is an unreferenced blob, which the next
 * start's sweep removes.
 */
import type { BlobStore } from './blob-store.ts';

const PROBE = new TextEncoder().encode('edgeport readiness probe\n');

/** Resolves when the store took a write and a delete; throws the store's failure otherwise. */
export async function probeBlobStore(blobs: BlobStore): Promise<void> {
  const writer = await blobs.createWriter({ size: PROBE.byteLength });
  let blobId: string;
  try {
    await writer.write(PROBE);
    ({ blobId } = await writer.commit());
  } catch (error) {
    await writer.abort().catch(() => undefined);
    throw error;
  }
  await blobs.delete([blobId]);
}
