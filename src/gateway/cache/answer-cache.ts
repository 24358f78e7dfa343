/**
 * A bounded LRU of answers that cannot change (see cache-policy.ts), as JSON text: a hit is
 * spliced into the response without parsing. Bounded by entry count and by bytes; a Map keeps
 * insertion order, so re-inserting on a hit makes the oldest entry the least recently used.
 */

export class AnswerCache {
  readonly #entries = new Map<string, string>();
  readonly #maxEntries: number;
  readonly #maxBytes: number;
  #bytes = 0;

  constructor(limits: { maxEntries: number; maxBytes: number }) {
    this.#maxEntries = limits.maxEntries;
    this.#maxBytes = limits.maxBytes;
  }

  get(key: string): string | undefined {
    const value = this.#entries.get(key);
    if (value !== undefined) {
      this.#entries.delete(key);
      this.#entries.set(key, value);
    }
    return value;
  }

  set(key: string, value: string): void {
    const size = entrySize(key, value);
    if (this.#maxEntries === 0 || size > this.#maxBytes) return;
    const prior = this.#entries.get(key);
    if (prior !== undefined) {
      this.#entries.delete(key);
      this.#bytes -= entrySize(key, prior);
    }
    this.#entries.set(key, value);
    this.#bytes += size;
    while (this.#entries.size > this.#maxEntries || this.#bytes > this.#maxBytes) {
      const [oldestKey, oldestValue] = this.#entries.entries().next().value!;
      this.#entries.delete(oldestKey);
      this.#bytes -= entrySize(oldestKey, oldestValue);
    }
  }

  get size(): number {
    return this.#entries.size;
  }

  get bytes(): number {
    return this.#bytes;
  }
}

/** Approximate memory of one entry: UTF-16 strings, two bytes a character. */
function entrySize(key: string, value: string): number {
  return 2 * (key.length + value.length);
}
