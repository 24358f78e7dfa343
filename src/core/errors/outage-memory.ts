/**
 * What a cache in front of the database remembers of an outage: after a read failed with a
 * backend fault, callers answer from what they last read, at once, and one read per `retryMs` goes
 * on in the background; the first that succeeds ends the outage. So a silent database costs one
 * request its deadline, not every request (the edge's zone cache and public bucket hosts).
 */
export class OutageMemory {
  readonly #now: () => number;
  readonly #retryMs: number;
  #failing = false;
  #retryAt = 0;

  constructor(now: () => number, retryMs: number) {
    this.#now = now;
    this.#retryMs = retryMs;
  }

  /** A read failed with a backend fault a moment ago, and none has succeeded since. */
  get failing(): boolean {
    return this.#failing;
  }

  failed(): void {
    this.#failing = true;
    this.#retryAt = this.#now() + this.#retryMs;
  }

  succeeded(): void {
    this.#failing = false;
  }

  /** Starts `read` in the background when a retry is due; its success ends the outage, its failure is ignored. */
  retry(read: () => Promise<unknown>): void {
    const now = this.#now();
    if (now < this.#retryAt) return;
    this.#retryAt = now + this.#retryMs;
    read().then(
      () => this.succeeded(),
      () => undefined,
    );
  }
}
