/**
 * Per-bucket settings kept in memory so that the hot path costs no metadata read (CORS rules on a
 * request with an Origin, lifecycle rules on an object's GET, HEAD or PUT). An entry lives `ttlMs`
 * (another instance's change shows within that time) and is dropped at once when this instance
 * changes the setting or deletes the bucket. Names with nothing set are kept too, and at most
 * `maxNames` names: the oldest goes first, so requests naming random buckets cannot grow it.
 */
export class ReadThroughCache<T> {
  readonly #load: (name: string) => Promise<T>;
  readonly #now: () => number;
  readonly #ttlMs: number;
  readonly #maxNames: number;
  readonly #entries = new Map<string, { until: number; value: Promise<T> }>();

  constructor(options: { load: (name: string) => Promise<T>; now: () => number; ttlMs?: number; maxNames?: number }) {
    this.#load = options.load;
    this.#now = options.now;
    this.#ttlMs = options.ttlMs ?? 5_000;
    this.#maxNames = options.maxNames ?? 10_000;
  }

  get(name: string): Promise<T> {
    const now = this.#now();
    const cached = this.#entries.get(name);
    if (cached && cached.until > now) return cached.value;
    this.#entries.delete(name);
    if (this.#entries.size >= this.#maxNames) this.#entries.delete(this.#entries.keys().next().value!);
    const value = this.#load(name);
    const entry = { until: now + this.#ttlMs, value };
    this.#entries.set(name, entry);
    // A failed read is not remembered: the next request reads again.
    value.catch(() => {
      if (this.#entries.get(name) === entry) this.#entries.delete(name);
    });
    return value;
  }

  /** Forgets a name (its setting changed here, or its bucket was deleted). */
  invalidate(name: string): void {
    this.#entries.delete(name);
  }
}
