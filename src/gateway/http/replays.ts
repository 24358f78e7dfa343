/**
 * Whole responses to single calls whose answer came from the cache, by exact body text: the same
 * body again is answered without being parsed, with bytes and headers made once. A replay of a
 * head-bound answer (eth_blockNumber, a read at `latest`) holds only while its network's head
 * stays at the epoch it was made in. A body is only marked the first time it is answered, and its
 * replay made when it comes again: clients that give every request a new id never send the same
 * body twice, and their calls should not pay for responses nobody will ask for. Bounded like the
 * answer cache (same limits).
 */
import { AnswerCache } from '../cache/answer-cache.ts';
import type { Tally } from '../metrics.ts';
import type { GatewayNetwork } from '../network.ts';

export interface Replay {
  /** The network whose endpoint received the body (a body is the same text on every network). */
  network: GatewayNetwork;
  /** The head epoch the answer holds for; undefined for a final answer. */
  epoch: number | undefined;
  /** Counts one call of its method answered from the cache. */
  calls: Tally;
  /** The response headers as writeHead takes them, flat name/value pairs, Content-Length included (never changed once made). */
  headers: string[];
  body: Buffer;
}

/** Reads of final data are small calls; larger bodies (batches, raw transactions) are not worth keeping. */
export const REPLAY_MAX_BODY = 2048;

/** A body answered once, with no replay yet. */
const SEEN = null;

export class Replays {
  readonly #cache: AnswerCache<Replay | typeof SEEN>;

  constructor(limits: { maxEntries: number; maxBytes: number }) {
    this.#cache = new AnswerCache<Replay | typeof SEEN>(limits, (replay) => (replay === SEEN ? 0 : replay.body.length));
  }

  /** The response for `body` on `network`, if one is kept and still holds. */
  get(network: GatewayNetwork, body: string): Replay | undefined {
    const replay = this.#cache.get(body);
    if (replay === undefined || replay === SEEN || replay.network !== network) return undefined;
    return replay.epoch === undefined || replay.epoch === network.head.epoch() ? replay : undefined;
  }

  /** Whether `body` was answered before (then its replay is worth making); marks it otherwise. */
  seenBefore(body: string): boolean {
    if (this.#cache.get(body) !== undefined) return true;
    this.#cache.set(body, SEEN);
    return false;
  }

  set(body: string, replay: Replay): void {
    this.#cache.set(body, replay);
  }

  get size(): number {
    return this.#cache.size;
  }
}
