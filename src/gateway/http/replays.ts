/**
 * Whole responses to single calls whose answer came from the cache, by body text: the same body
 * again is answered without being parsed, with bytes and headers made once. Most clients number
 * their requests, so a body whose top-level id is a plain number or string is keyed without it
 * (`replayKey`) and its replay holds the response around the id, which is spliced in per request:
 * the hundredth eth_blockNumber of a counting client is a replay, not a parse. A replay of a
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
  /** The response headers as writeHead takes them, flat name/value pairs (never changed once made); Content-Length included unless `tail` is set. */
  headers: string[];
  /** The whole response; or, with `tail`, the response up to its id. */
  body: Buffer;
  /** The response after its id, in a replay made for any id (its key has no id). */
  tail: Buffer | undefined;
}

/** Where a body's replay is kept: `key`, and `id`, the id's text cut out of it ('' when the key is the whole body). */
export interface ReplayKey {
  key: string;
  id: string;
}

/** Stands for the id in a key: a raw control character, which no valid body holds, so no body's own text is such a key. */
const ID_HOLE = '\u0000';
const ID_MEMBER = '"id":';
/** Integer ids up to 15 digits are exact in a double, so the response echoes them as sent. */
const MAX_ID_DIGITS = 15;
const MAX_ID_STRING = 64;

/**
 * The key of `body`: without its id when the id is the first member before any nesting and is an
 * integer without sign or leading zero, or a string of printable ASCII without escapes (the
 * response's JSON.stringify(id) is then the id's own text); the whole body otherwise (an id after
 * params, a duplicate "id", spaces, escapes). Only bodies that parsed get replays, and a key with
 * the hole refilled by such an id is a valid body with the same meaning, so a replay found by key
 * answers this body exactly.
 */
export function replayKey(body: string): ReplayKey {
  const at = body.indexOf(ID_MEMBER);
  if (at < 1 || body.charCodeAt(0) !== 0x7b || !plainPrefix(body, at)) return { key: body, id: '' };
  const start = at + ID_MEMBER.length;
  const end = idEnd(body, start);
  if (end === -1) return { key: body, id: '' };
  const next = body.charCodeAt(end);
  if ((next !== 0x2c && next !== 0x7d) || body.includes('"id"', end)) return { key: body, id: '' };
  return { key: body.slice(0, start) + ID_HOLE + body.slice(end), id: body.slice(start, end) };
}

/** The text before `"id":` opens one object, holds no nesting or escapes, and ends a member (so the quote opens a key). */
function plainPrefix(body: string, at: number): boolean {
  const before = body.charCodeAt(at - 1);
  if (before !== 0x2c && before !== 0x7b) return false;
  let quotes = 0;
  for (let i = 1; i < at; i++) {
    const c = body.charCodeAt(i);
    if (c === 0x7b || c === 0x5b || c === 0x5c) return false;
    if (c === 0x22) quotes++;
  }
  return quotes % 2 === 0;
}

/** The end of a plain id starting at `start`, or -1. */
function idEnd(body: string, start: number): number {
  const first = body.charCodeAt(start);
  if (first === 0x30) return start + 1;
  if (first >= 0x31 && first <= 0x39) {
    let i = start + 1;
    while (i < body.length && body.charCodeAt(i) >= 0x30 && body.charCodeAt(i) <= 0x39) i++;
    return i - start <= MAX_ID_DIGITS ? i : -1;
  }
  if (first !== 0x22) return -1;
  for (let i = start + 1; i < body.length && i - start <= MAX_ID_STRING; i++) {
    const c = body.charCodeAt(i);
    if (c === 0x22) return i + 1;
    if (c < 0x20 || c > 0x7e || c === 0x5c) return -1;
  }
  return -1;
}

/** Reads of final data are small calls; larger bodies (batches, raw transactions) are not worth keeping. */
export const REPLAY_MAX_BODY = 2048;

/** A body answered once, with no replay yet. */
const SEEN = null;

export class Replays {
  readonly #cache: AnswerCache<Replay | typeof SEEN>;

  constructor(limits: { maxEntries: number; maxBytes: number }) {
    this.#cache = new AnswerCache<Replay | typeof SEEN>(limits, (replay) => (replay === SEEN ? 0 : replay.body.length + (replay.tail?.length ?? 0)));
  }

  /** The response for the body of `key` on `network`, if one is kept and still holds. */
  get(network: GatewayNetwork, key: string): Replay | undefined {
    const replay = this.#cache.get(key);
    if (replay === undefined || replay === SEEN || replay.network !== network) return undefined;
    return replay.epoch === undefined || replay.epoch === network.head.epoch() ? replay : undefined;
  }

  /** Whether a body of `key` was answered before (then its replay is worth making); marks it otherwise. */
  seenBefore(key: string): boolean {
    if (this.#cache.get(key) !== undefined) return true;
    this.#cache.set(key, SEEN);
    return false;
  }

  set(key: string, replay: Replay): void {
    this.#cache.set(key, replay);
  }

  get size(): number {
    return this.#cache.size;
  }
}
