/**
 * How far behind the event loop runs, measured cheaply: a timer that should fire every `sampleMs`
 * notes how late it ran. A request arriving while the loop is that far behind waits about that
 * long before anything of it runs, which is what load shedding bounds. The estimate is the last
 * sample's lateness or, when the loop has been busy since (the timer is overdue now), how overdue
 * it is; so requests parsed right after a long blocking stretch see it before the timer runs again,
 * and one quick sample after the loop is free again clears it. It measures real time (the Clock
 * cannot block a loop); tests give it a time source and a timer they drive (LoopTiming), so what it
 * computes is checked without depending on how busy the machine is.
 */

/** How far behind the event loop runs, as the listener's load shedding reads it (EventLoopDelayMonitor, or a test's). */
export interface LoopDelay {
  /** How many ms behind the event loop runs now (0 when on time). */
  behindMs(): number;
  /** How many samples were taken: it changes each time the loop gets to run its timers. */
  readonly samples: number;
  close(): void;
}

/** Where the monitor reads the time and how it is called every `ms` (real time and setInterval unless a test gives its own). */
export interface LoopTiming {
  now(): number;
  every(ms: number, sample: () => void): { stop(): void };
}

const REAL_TIME: LoopTiming = {
  now: () => performance.now(),
  every(ms, sample) {
    const timer = setInterval(sample, ms);
    // Never what keeps the process alive.
    timer.unref();
    return { stop: () => clearInterval(timer) };
  },
};

export class EventLoopDelayMonitor implements LoopDelay {
  readonly #sampleMs: number;
  readonly #timing: LoopTiming;
  readonly #timer: { stop(): void };
  #expectedAt: number;
  #lastLagMs = 0;
  #samples = 0;

  constructor(sampleMs: number, timing: LoopTiming = REAL_TIME) {
    this.#sampleMs = sampleMs;
    this.#timing = timing;
    this.#expectedAt = timing.now() + sampleMs;
    this.#timer = timing.every(sampleMs, () => this.#sample());
  }

  /** A sampling period fine enough for shedding at `maxDelayMs`: a quarter of it, 10 to 100 ms. */
  static sampleMsFor(maxDelayMs: number): number {
    return Math.min(100, Math.max(10, Math.floor(maxDelayMs / 4)));
  }

  /** How many ms behind the event loop runs now (0 when on time). */
  behindMs(): number {
    return Math.max(this.#lastLagMs, this.#timing.now() - this.#expectedAt);
  }

  /** How many samples were taken: it changes each time the loop gets to run its timers. */
  get samples(): number {
    return this.#samples;
  }

  close(): void {
    this.#timer.stop();
  }

  #sample(): void {
    const now = this.#timing.now();
    this.#lastLagMs = Math.max(0, now - this.#expectedAt);
    this.#expectedAt = now + this.#sampleMs;
    this.#samples += 1;
  }
}
