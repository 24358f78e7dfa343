/**
 * A bounded LRU of answers that cannot change (see cache-policy.ts), as JSON text: a hit is
 * spliced into the response without parsing. Bounded by entry count and by bytes; a Map keeps
 * insertion order, so re-inserting on a hit makes the oldest entry the least recently used.
 * Values are JSON text by default; `weigh` gives the size of other kinds of value.
 */

export class AnswerCache<Value = string> {
  readonly #entries = new Map<string, Value>();
  readonly #maxEntries: number;
  readonly #maxBytes: number;
  readonly #weigh: (value: Value) => number;
  #bytes = 0;

  constructor(limits: { maxEntries: number; maxBytes: number }, weigh: (value: Value) => number = (value) => String(value).length) {
    this.#maxEntries = limits.maxEntries;
    this.#maxBytes = limits.maxBytes;
    this.#weigh = weigh;
  }

  get(key: string): Value | undefined {
    const value = this.#entries.get(key);
    if (value !== undefined) {
      this.#entries.delete(key);
      this.#entries.set(key, value);
    }
    return value;
  }

  set(key: string, value: Value): void {
    const size = this.#size(key, value);
    if (this.#maxEntries === 0 || size > this.#maxBytes) return;
    const prior = this.#entries.get(key);
    if (prior !== undefined) {
      this.#entries.delete(key);
      this.#bytes -= this.#size(key, prior);
    }
    this.#entries.set(key, value);
    this.#bytes += size;
    while (this.#entries.size > this.#maxEntries || this.#bytes > this.#maxBytes) {
      const [oldestKey, oldestValue] = this.#entries.entries().next().value!;
      this.#entries.delete(oldestKey);
      this.#bytes -= this.#size(oldestKey, oldestValue);
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
