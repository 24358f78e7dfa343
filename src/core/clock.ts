/**
 * Time, injected. Everything that depends on dates or expiry (multipart expiry, batch intervals,
 * network retirement) asks a Clock, so tests move time instead of sleeping.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that only moves when told to. */
export class FakeClock implements Clock {
  #now: number;
  constructor(start: number | Date = Date.UTC(2026, 0, 1)) {
    this.#now = typeof start === 'number' ? start : start.getTime();
  }
  now(): number {
    return this.#now;
  }
  advance(ms: number): void {
    this.#now += ms;
  }
  set(time: number | Date): void {
    this.#now = typeof time === 'number' ? time : time.getTime();
  }
}
