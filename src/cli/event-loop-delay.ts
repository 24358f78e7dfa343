/**
 * How far behind the event loop runs, measured cheaply: a timer that should fire every `sampleMs`
 * notes how late it ran. A request arriving while the loop is that far behind waits about that
 * long before anything of it runs, which is what load shedding bounds. The estimate is the last
 * sample's lateness or, when the loop has been busy since (the timer is overdue now), how overdue
 * it is; so requests parsed right after a long blocking stretch see it before the timer runs again,
 * and one quick sample after the loop is free again clears it. It measures real time on purpose
 * (the Clock cannot block a loop); tests block a real loop.
 */

export class EventLoopDelayMonitor {
  readonly #sampleMs: number;
  readonly #timer: NodeJS.Timeout;
  #expectedAt: number;
  #lastLagMs = 0;
  #samples = 0;

  constructor(sampleMs: number) {
    this.#sampleMs = sampleMs;
    this.#expectedAt = performance.now() + sampleMs;
    this.#timer = setInterval(() => this.#sample(), sampleMs);
    // Never what keeps the process alive.
    this.#timer.unref();
  }

  /** A sampling period fine enough for shedding at `maxDelayMs`: a quarter of it, 10 to 100 ms. */
  static sampleMsFor(maxDelayMs: number): number {
    return Math.min(100, Math.max(10, Math.floor(maxDelayMs / 4)));
  }

  /** How many ms behind the event loop runs now (0 when on time). */
  behindMs(): number {
    return Math.max(this.#lastLagMs, performance.now() - this.#expectedAt);
  }

  /** How many samples were taken: it changes each time the loop gets to run its timers. */
  get samples(): number {
    return this.#samples;
  }

  close(): void {
    clearInterval(this.#timer);
  }

  #sample(): void {
    const now = performance.now();
    this.#lastLagMs = Math.max(0, now - this.#expectedAt);
    this.#expectedAt = now + this.#sampleMs;
    this.#samples += 1;
  }
}
