/** The `ctx` a script's fetch receives: `waitUntil` extends the request's life, `passThroughOnException` marks it. */

export class ExecutionContext {
  readonly #track: (promise: Promise<unknown>) => void;
  #passThrough = false;

  constructor(track: (promise: Promise<unknown>) => void) {
    this.#track = track;
  }

  /** Keeps the worker counted busy until `promise` settles; a rejection is logged. */
  waitUntil(promise: unknown): void {
    this.#track(Promise.resolve(promise));
  }

  /** On an exception, the request should go on to the origin (the edge has one; `edgeport dev` does not). */
  passThroughOnException(): void {
    this.#passThrough = true;
  }

  /** Whether the script asked for pass-through (not visible to scripts). */
  static passesThrough(ctx: ExecutionContext): boolean {
    return ctx.#passThrough;
  }
}
