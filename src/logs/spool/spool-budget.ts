/**
 * The disk all of a server's log spools may take together (`[logs] max_total_spool_bytes`): the
 * spools live on the volume that holds the database and blobs, so the sum of their segment files is
 * bounded, not only each job's. Each spool counts what it holds on disk here, and asks before
 * taking more.
 */
export class SpoolBudget {
  readonly maxBytes: number;
  #used = 0;

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  /** An unbounded budget (tests and tools that spool without a server's limits). */
  static unbounded(): SpoolBudget {
    return new SpoolBudget(Number.POSITIVE_INFINITY);
  }

  get usedBytes(): number {
    return this.#used;
  }

  /** Takes `bytes` if they fit; false (nothing taken) when they do not. */
  take(bytes: number): boolean {
    if (this.#used + bytes > this.maxBytes) return false;
    this.#used += bytes;
    return true;
  }

  /** Counts bytes already on disk (a spool found at start), whether or not they fit. */
  add(bytes: number): void {
    this.#used += bytes;
  }

  release(bytes: number): void {
    this.#used = Math.max(0, this.#used - bytes);
  }
}
