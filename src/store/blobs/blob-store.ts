/**
 * BlobStore: where object bytes live, by generated id (never by key). A blob is written to a
 * temporary place, made durable, then published under its id; only after that does the metadata
 * commit make it visible. Implementations: local disk (fs-blob-store.ts); S3-compatible later.
 */

export interface BlobWriter {
  /** Appends bytes; resolves when the writer can take more. */
  write(chunk: Uint8Array): Promise<void>;
  /** Makes the blob durable and published under its id; returns the id and size. */
  commit(): Promise<{ blobId: string; size: number }>;
  /** Throws the bytes away (idempotent). */
  abort(): Promise<void>;
}

export interface BlobStore {
  /** Directory of published blobs (`<dir>/<blobId>`), for servers that stream files directly. */
  readonly dir: string;
  createWriter(): Promise<BlobWriter>;
  /** Streams `length` bytes from `offset`. */
  read(blobId: string, offset: number, length: number): AsyncIterable<Uint8Array>;
  delete(blobIds: readonly string[]): Promise<void>;
  /** Every published blob id (for the startup sweep). */
  list(): Promise<string[]>;
  /** Removes leftovers of writes that never committed. */
  clearTemporary(): Promise<number>;
}
