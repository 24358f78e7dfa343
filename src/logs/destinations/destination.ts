/**
 * Where a log job's batches go (destination_conf, docs/edge-and-logs.md). A destination
 * writes one gzip batch under a name; writing the same name again replaces it, which is what
 * makes re-delivery after a crash harmless for object destinations.
 */
export interface LogDestination {
  /** Writes one gzipped batch. Rejects with a message meant for the job's error_message. */
  write(batch: DeliveredBatch): Promise<void>;
  close?(): Promise<void>;
}

export interface DeliveredBatch {
  /** Object name relative to the destination's path, e.g. `20261123/20261123T020500Z_20261123T020530Z_ab12cd34.log.gz`. */
  name: string;
  gzipped: Buffer;
  /** Epoch ms of the batch's first record (for `{DATE}` in paths). */
  firstTime: number;
  contentType: string;
  /** Where a destination that writes temporary files (file://) notes each one, so that a restart after a crash removes it. */
  tempFiles?: TempFileNotes;
}

/** A durable note of the temporary file a delivery is writing (one at a time). */
export interface TempFileNotes {
  /** Resolves once the note is on disk, before the file is created. */
  note(path: string): Promise<void>;
  /** The file is gone (renamed into place or removed). */
  clear(): Promise<void>;
}

export class DestinationError extends Error {
  override name = 'DestinationError';
}
