/**
 * BlobStore: where object bytes live, by generated id (never by key). A blob is written to a
 * temporary place, made durable, then published under its id; only after that does the metadata
 * commit make it visible. Implementations: local disk (fs-blob-store.ts) and any S3-compatible
 * object store (s3-blob-store.ts); open-blob-store.ts picks one from `[blobs] url`.
 */

export interface BlobWriter {
  /** Appends bytes; resolves when the writer can take more. The caller may reuse `chunk` after. */
  write(chunk: Uint8Array): Promise<void>;
  /** Makes the blob durable and published under its id; returns the id and size. */
  commit(): Promise<{ blobId: string; size: number }>;
  /** Throws the bytes away (idempotent). */
  abort(): Promise<void>;
}

/** Limits a sweep to leftovers at least this old, so another instance's writes in progress survive. */
export interface SweepOptions {
  /**
   * Only what was last written at least this many milliseconds ago (by the storage's own
   * timestamps: file mtime, S3 LastModified). Absent: everything.
   */
  olderThanMs?: number;
}

export interface BlobStore {
  /**
   * Directory of published blobs (`<dir>/<blobId>`) when they are files on this machine, for
   * servers that stream files directly; absent for remote stores, whose bytes come from `read`.
   */
  readonly dir?: string | undefined;
  /** A writer for a new blob; `size`, when known, is the length the blob will have (a hint to lay it out). */
  createWriter(options?: { size?: number | undefined }): Promise<BlobWriter>;
  /** Streams `length` bytes from `offset`. */
  read(blobId: string, offset: number, length: number): AsyncIterable<Uint8Array>;
  delete(blobIds: readonly string[]): Promise<void>;
  /** Published blob ids (for the startup sweep). */
  list(options?: SweepOptions): Promise<string[]>;
  /**
   * Removes leftovers of writes that never committed; returns how many. With `olderThanMs`, only
   * those idle that long (a store other instances share). Without: on local disk, those of
   * processes that are gone (never a running process's write); on S3, all of them.
   */
  clearTemporary(options?: SweepOptions): Promise<number>;
  /** Resolves when the store can be reached (its directory is there and writable, its bucket answers), else throws saying why. */
  checkReachable(): Promise<void>;
  /** Releases connections (a no-op on disk). */
  close(): Promise<void>;
}
