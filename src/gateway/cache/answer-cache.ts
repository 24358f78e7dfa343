/**
 * A bounded, approximately least-recently-used map of answers (see cache-policy.ts), as JSON text
 * by default: a hit is spliced into the response without parsing. Two generations (hashlru): new
 * entries go into the current one; when it holds half the limits (entries or bytes), it becomes the
 * old one and the previous old one is dropped whole. A hit in the old generation moves the entry
 * to the current one, so what is used survives and what is not goes within two generations.
 * Nothing is evicted one by one: a Map that loses its first entries on every insertion makes
 * finding the next first entry slower and slower (the deleted slots stay until the table is
 * rebuilt), which cost more than the rest of a cached call when the cache was full.
 * `weigh` gives the size of a value that is not text.
 */

interface Generation<Value> {
  entries: Map<string, { value: Value; size: number }>;
  bytes: number;
}

export class AnswerCache<Value = string> {
  readonly #maxEntries: number;
  readonly #maxBytes: number;
  readonly #weigh: (value: Value) => number;
  #current: Generation<Value> = { entries: new Map(), bytes: 0 };
  #old: Generation<Value> = { entries: new Map(), bytes: 0 };

  constructor(limits: { maxEntries: number; maxBytes: number }, weigh: (value: Value) => number = (value) => String(value).length) {
    this.#maxEntries = limits.maxEntries;
    this.#maxBytes = limits.maxBytes;
    this.#weigh = weigh;
  }

  get(key: string): Value | undefined {
    const entry = this.#current.entries.get(key);
    if (entry !== undefined) return entry.value;
    const old = this.#old.entries.get(key);
    if (old === undefined) return undefined;
    this.#old.entries.delete(key);
    this.#old.bytes -= old.size;
    this.#insert(key, old);
    return old.value;
  }

  set(key: string, value: Value): void {
    const size = 2 * (key.length + this.#weigh(value));
    if (this.#maxEntries === 0 || size > this.#maxBytes) return;
    for (const generation of [this.#current, this.#old]) {
      const prior = generation.entries.get(key);
      if (prior !== undefined) {
        generation.entries.delete(key);
        generation.bytes -= prior.size;
      }
    }
    this.#insert(key, { value, size });
  }

  #insert(key: string, entry: { value: Value; size: number }): void {
    let current = this.#current;
    if (current.entries.size > 0 && (2 * (current.entries.size + 1) > this.#maxEntries || 2 * (current.bytes + entry.size) > this.#maxBytes)) {
      this.#old = current;
      current = { entries: new Map(), bytes: 0 };
      this.#current = current;
    }
    // One entry larger than half the bytes: the old generation goes too if both would not fit.
    if (this.#old.bytes + current.bytes + entry.size > this.#maxBytes || this.#old.entries.size + current.entries.size + 1 > this.#maxEntries) {
      this.#old = { entries: new Map(), bytes: 0 };
    }
    current.entries.set(key, entry);
    current.bytes += entry.size;
  }

  /** Entries held (both generations). */
  get size(): number {
    return this.#current.entries.size + this.#old.entries.size;
  }

  /** Approximate memory of the entries held: UTF-16 strings, two bytes a character. */
  get bytes(): number {
    return this.#current.bytes + this.#old.bytes;
  }
}
