/**
 * Failed attempts per key (a client address, an e-mail, an access key id) as token buckets: a key
 * holds `max` attempts, spends one per attempt, and regains them at `max` per window by the
 * injected clock. So a key may fail `max` times at once, then once every window / max. Memory is
 * fixed: at most `maxKeys` keys are tracked, the least recently used dropped first (a key whose
 * bucket has refilled is the same as an untracked one and is dropped when next seen).
 */
import type { Clock } from '../clock.ts';

/** Refill is fractional: a bucket this close to a whole attempt has it (no off-by-a-rounding waits). */
const WHOLE = 1 - 1e-9;

interface Bucket {
  tokens: number;
  at: number;
}

export class FailureCounter {
  readonly #max: number;
  readonly #perMs: number;
  readonly #maxKeys: number;
  readonly #clock: Clock;
  /** In order of last use (a Map keeps insertion order: a used key is moved to the end). */
  readonly #buckets = new Map<string, Bucket>();

  constructor(options: { max: number; windowMs: number; maxKeys: number }, clock: Clock) {
    this.#max = options.max;
    this.#perMs = options.max / options.windowMs;
    this.#maxKeys = options.maxKeys;
    this.#clock = clock;
  }

  /** Keys tracked now (at most `maxKeys`). */
  get size(): number {
    return this.#buckets.size;
  }

  /**
   * 0 when `key` may make an attempt now, else the milliseconds until it may. `credit`: attempts
   * taken that are counted as given back (those still being checked, when the caller asks whether
   * failures alone hold the key).
   */
  waitMs(key: string, credit = 0): number {
    const bucket = this.#current(key);
    if (bucket === undefined) return 0;
    const tokens = bucket.tokens + credit;
    if (tokens >= WHOLE) return 0;
    return Math.ceil((1 - tokens) / this.#perMs - 1e-6);
  }

  /** Spends one attempt of `key` (check waitMs first; an empty bucket stays at 0). */
  take(key: string): void {
    const bucket = this.#current(key);
    if (bucket !== undefined) {
      bucket.tokens = Math.max(0, bucket.tokens - 1);
      return;
    }
    if (this.#buckets.size >= this.#maxKeys) this.#buckets.delete(this.#buckets.keys().next().value!);
    this.#buckets.set(key, { tokens: this.#max - 1, at: this.#clock.now() });
  }

  /** Gives back an attempt taken for a check that then succeeded (or never ran). */
  refund(key: string): void {
    const bucket = this.#current(key);
    if (bucket === undefined) return;
    bucket.tokens += 1;
    if (bucket.tokens >= this.#max - 1e-9) this.#buckets.delete(key);
  }

  /** The key's bucket refilled up to now and moved to most recently used; undefined when untracked or full. */
  #current(key: string): Bucket | undefined {
    const bucket = this.#buckets.get(key);
    if (bucket === undefined) return undefined;
    const now = this.#clock.now();
    bucket.tokens = Math.min(this.#max, bucket.tokens + Math.max(0, now - bucket.at) * this.#perMs);
    bucket.at = now;
    this.#buckets.delete(key);
    if (bucket.tokens >= this.#max - 1e-9) return undefined;
    this.#buckets.set(key, bucket);
    return bucket;
  }
}
