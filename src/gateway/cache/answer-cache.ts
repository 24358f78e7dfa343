/**
 * A bounded LRU of answers (see cache-policy.ts), as JSON text: a hit is spliced into the
 * response without parsing. Bounded by entry count and by bytes; a Map keeps insertion order, so
 * moving an entry to the end on a hit makes the first entry the least recently used. An entry
 * already among the newer half is not moved (a hot entry would otherwise be deleted and
 * re-inserted on every hit): it is nowhere near eviction. Values are JSON text by default;
 * `weigh` gives the size of other kinds of value.
 */

interface Entry<Value> {
  value: Value;
  /** Approximate memory of the entry. */
  size: number;
  /** Position in insertion order (higher is newer). */
  seq: number;
}

export class AnswerCache<Value = string> {
  readonly #entries = new Map<string, Entry<Value>>();
  readonly #maxEntries: number;
  readonly #maxBytes: number;
  readonly #weigh: (value: Value) => number;
  #bytes = 0;
  #seq = 0;

  constructor(limits: { maxEntries: number; maxBytes: number }, weigh: (value: Value) => number = (value) => String(value).length) {
    this.#maxEntries = limits.maxEntries;
    this.#maxBytes = limits.maxBytes;
    this.#weigh = weigh;
  }

  get(key: string): Value | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.seq <= this.#seq - this.#entries.size / 2) {
      this.#entries.delete(key);
      entry.seq = ++this.#seq;
      this.#entries.set(key, entry);
    }
    return entry.value;
  }

  set(key: string, value: Value): void {
    const size = this.#size(key, value);
    if (this.#maxEntries === 0 || size > this.#maxBytes) return;
    const prior = this.#entries.get(key);
    if (prior !== undefined) {
      this.#entries.delete(key);
      this.#bytes -= prior.size;
    }
    this.#entries.set(key, { value, size, seq: ++this.#seq });
    this.#bytes += size;
    while (this.#entries.size > this.#maxEntries || this.#bytes > this.#maxBytes) {
      const [oldestKey, oldest] = this.#entries.entries().next().value!;
      this.#entries.delete(oldestKey);
      this.#bytes -= oldest.size;
    }
  }

  /** Approximate memory of one entry: UTF-16 strings, two bytes a character. */
  #size(key: string, value: Value): number {
    return 2 * (key.length + this.#weigh(value));
  }

  get size(): number {
    return this.#entries.size;
  }

  get bytes(): number {
    return this.#bytes;
  }
}
