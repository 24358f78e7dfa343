/**
 * Cooperative yielding for work done in a loop on the event loop: the loop calls `pause()` between
 * steps, and once SLICE_MS has passed since the last yield, `pause()` waits for the next
 * `setImmediate`, so sockets, timers and other requests (the edge's included) run before the loop
 * goes on. A step must itself be short: a query's steps are a bucket's count (chunked in the
 * metadata store) or one group of its answer.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';

/** How long a loop may run before it lets everything else in. */
export const SLICE_MS = 8;

export class TimeSlice {
  readonly #budgetMs: number;
  #since = performance.now();
  /** How many times the work let others in (for tests and the log). */
  yields = 0;

  constructor(budgetMs = SLICE_MS) {
    this.#budgetMs = budgetMs;
  }

  async pause(): Promise<void> {
    if (performance.now() - this.#since < this.#budgetMs) return;
    await nextTurn();
    this.yields++;
    this.#since = performance.now();
  }
}
