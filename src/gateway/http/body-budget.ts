/**
 * How many bytes of large request bodies the gateway holds at once (reading, parsing, running,
 * until the response is done). Reading and parsing a body of megabytes holds the event loop every
 * listener of the process shares for milliseconds per megabyte, so a flood of large bodies slows
 * every surface; past the budget a large body is refused before it is read, while small bodies
 * (every honest single call and ordinary batches) are never counted nor refused.
 */

/** Bodies up to this size are small: a batch of 100 eth_getBalance calls is about 13 KB. */
export const LARGE_BODY_BYTES = 64 * 1024;

export class BodyBudget {
  readonly #maxBytes: number;
  #inFlight = 0;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  /** Bytes of large bodies held now. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /**
   * Reserves room for a body of `bytes`: 0 when it is small (nothing to give back), the bytes
   * reserved otherwise, or undefined when the budget has no room for it. One large body is always
   * let in when none is held, so a budget below the body limit cannot refuse everything.
   */
  reserve(bytes: number): number | undefined {
    if (bytes <= LARGE_BODY_BYTES) return 0;
    if (this.#inFlight > 0 && this.#inFlight + bytes > this.#maxBytes) return undefined;
    this.#inFlight += bytes;
    return bytes;
  }

  release(bytes: number): void {
    this.#inFlight -= bytes;
  }
}
