/**
 * The finalized head of a network, as its backend reports it (`eth_getBlockByNumber("finalized")`),
 * refreshed in the background when older than `refreshMs` (by the injected clock). Callers never
 * wait for it: until the first answer arrives nothing counts as final, which only means fewer
 * cache entries. On the embedded chain (no reorgs) `finalized` is the newest block.
 */
import type { Clock } from '../../core/clock.ts';
import type { Logger } from '../../core/log.ts';

export class FinalityTracker {
  readonly #fetch: () => Promise<bigint | undefined>;
  readonly #clock: Clock;
  readonly #refreshMs: number;
  readonly #logger: Logger;
  #finalized = -1n;
  #fetchedAt = Number.NEGATIVE_INFINITY;
  #refreshing = false;

  constructor(options: { fetch: () => Promise<bigint | undefined>; clock: Clock; refreshMs: number; logger: Logger }) {
    this.#fetch = options.fetch;
    this.#clock = options.clock;
    this.#refreshMs = options.refreshMs;
    this.#logger = options.logger;
  }

  /** The last known finalized block number (-1n before the first answer). */
  current(): bigint {
    if (!this.#refreshing && this.#clock.now() - this.#fetchedAt >= this.#refreshMs) void this.refresh();
    return this.#finalized;
  }

  /** Asks the backend now; resolves when the answer is in. */
  async refresh(): Promise<void> {
    this.#refreshing = true;
    try {
      const finalized = await this.#fetch();
      if (finalized !== undefined && finalized > this.#finalized) this.#finalized = finalized;
    } catch (error) {
      this.#logger.debug({ err: error }, 'Finalized head refresh failed.');
    } finally {
      this.#fetchedAt = this.#clock.now();
      this.#refreshing = false;
    }
  }
}
