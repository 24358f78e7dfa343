/**
 * Per-client rate limit: a token bucket per client IP, refilled at `requestsPerSecond` up to
 * `burst`, by the injected clock. Every batch member takes a token, so a batch is no way around
 * the limit. Refused requests take nothing, so a client that retries at once (ethers reads
 * `Retry-After` as milliseconds) does not dig itself deeper.
 */
import type { Clock } from '../core/clock.ts';

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/** Past this many clients, full buckets (idle clients) are dropped; they would start full anyway. */
const SWEEP_THRESHOLD = 10_000;

export class RateLimiter {
  readonly #perMs: number;
  readonly #burst: number;
  readonly #clock: Clock;
  readonly #buckets = new Map<string, Bucket>();

  constructor(options: { requestsPerSecond: number; burst: number }, clock: Clock) {
    this.#perMs = options.requestsPerSecond / 1000;
    this.#burst = options.burst;
    this.#clock = clock;
  }

  /** Clients with a bucket. */
  get clients(): number {
    return this.#buckets.size;
  }

  get enabled(): boolean {
    return this.#perMs > 0;
  }

  /**
   * Takes `count` tokens for `client`. Returns 0 when granted, else the milliseconds until enough
   * tokens will be there. A request larger than the bucket (a batch of more members than `burst`)
   * needs a full bucket and still takes a token per member: the bucket goes into debt, which the
   * client's next requests wait out.
   */
  take(client: string, count: number): number {
    if (!this.enabled) return 0;
    const now = this.#clock.now();
    const need = Math.min(count, this.#burst);
    let bucket = this.#buckets.get(client);
    if (bucket === undefined) {
      if (this.#buckets.size >= SWEEP_THRESHOLD) this.#sweep(now);
      bucket = { tokens: this.#burst, updatedAt: now };
      this.#buckets.set(client, bucket);
    } else {
      bucket.tokens = Math.min(this.#burst, bucket.tokens + (now - bucket.updatedAt) * this.#perMs);
      bucket.updatedAt = now;
    }
    if (bucket.tokens >= need) {
      bucket.tokens -= count;
      return 0;
    }
    return Math.ceil((need - bucket.tokens) / this.#perMs);
  }

  #sweep(now: number): void {
    for (const [client, bucket] of this.#buckets) {
      if (bucket.tokens + (now - bucket.updatedAt) * this.#perMs >= this.#burst) this.#buckets.delete(client);
    }
  }
}
