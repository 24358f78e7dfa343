/**
 * When a network's head may have moved, as an epoch number. Answers that depend on the head
 * (eth_blockNumber, reads at `latest`) are cached under the epoch they were fetched in and used
 * only while it lasts. The epoch moves:
 * - when a write this gateway passes on has been answered (a transaction hash): nothing fetched
 *   before that, while the write ran or earlier, is used after it; and reads share an in-flight
 *   call only within one epoch, so none started before joins one after. On the embedded chain
 *   these are the only moves: the gateway mines every block there.
 * - on upstreams, when the head the node reports changes: it is asked every `refreshMs` (by the
 *   injected clock) while calls come in, and answers not confirmed current for twice that long
 *   are dropped before use, so a gateway that was idle never answers with an old head. Every
 *   eth_blockNumber answer fetched from the node counts as a report too.
 *
 * A node may answer a transaction's hash a moment before its block is visible (Anvil mines in the
 * background: 6 sends in 200 answered before their block, measured directly). So after a write on
 * an upstream, head-bound answers are not kept (every read asks the node, as if there were no
 * gateway) until the node reports a head other than the one before the write, or twice
 * `refreshMs` has passed (on a network whose blocks come every few seconds).
 */
import type { Clock } from '../../core/clock.ts';
import type { Logger } from '../../core/log.ts';

export interface ChainHeadOptions {
  clock: Clock;
  logger: Logger;
  /**
   * Upstreams: how often the head is asked, and the node's newest block number (JSON text) when
   * asked. Undefined on the embedded chain, whose head only moves by this gateway's writes.
   */
  watch?: { refreshMs: number; fetchHead: () => Promise<string | undefined> };
}

export class ChainHead {
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #watch: ChainHeadOptions['watch'];
  #epoch = 0;
  /** Clock time as of which the answers of the current epoch are known to be current. */
  #knownAt: number;
  #lastHead: string | undefined;
  #checkStartedAt = Number.NEGATIVE_INFINITY;
  #checking = false;
  /** Set after a write on an upstream, until the node reports a new head. */
  #settling: { since: number; headBefore: string | undefined } | undefined;

  constructor(options: ChainHeadOptions) {
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#watch = options.watch;
    this.#knownAt = options.clock.now();
  }

  /**
   * The epoch to read or cache under now. On upstreams this also asks the node for its head once
   * the last answer is `refreshMs` old, and moves the epoch when nothing has confirmed it for twice that.
   */
  epoch(): number {
    const watch = this.#watch;
    if (watch !== undefined) {
      const now = this.#clock.now();
      if (now - this.#knownAt >= watch.refreshMs) {
        if (now - this.#knownAt >= 2 * watch.refreshMs) this.#move();
        if (!this.#checking && now - this.#checkStartedAt >= watch.refreshMs) void this.#check(watch.fetchHead);
      }
    }
    return this.#epoch;
  }

  /** The epoch as it is, without asking anything: whether an answer fetched under an epoch may be kept. */
  get current(): number {
    return this.#epoch;
  }

  /** Whether head-bound answers fetched now may be kept (not while an upstream write settles). */
  caching(): boolean {
    const settling = this.#settling;
    if (settling !== undefined && this.#clock.now() - settling.since >= 2 * this.#watch!.refreshMs) this.#settling = undefined;
    return this.#settling === undefined;
  }

  /** A write (a transaction sent, or a method not known to be a read) has been answered, or failed: whatever it changed is in the chain now. */
  written(): void {
    this.#move();
    if (this.#watch !== undefined) this.#settling = { since: this.#clock.now(), headBefore: this.#lastHead };
  }

  /** The node's newest block number (JSON text), as an eth_blockNumber answer just fetched from it says. */
  observe(head: string): void {
    if (this.#watch === undefined) return;
    // The first head seen moves the epoch too: nothing kept before it was compared with one.
    if (head !== this.#lastHead) {
      this.#move();
      this.#lastHead = head;
    }
    if (this.#settling !== undefined && this.#settling.headBefore !== undefined && head !== this.#settling.headBefore) this.#settling = undefined;
  }

  #move(): void {
    this.#epoch++;
    this.#knownAt = this.#clock.now();
  }

  async #check(fetchHead: () => Promise<string | undefined>): Promise<void> {
    const startedAt = this.#clock.now();
    this.#checking = true;
    this.#checkStartedAt = startedAt;
    try {
      const head = await fetchHead();
      if (head === undefined) return;
      if (head === this.#lastHead) this.#knownAt = Math.max(this.#knownAt, startedAt);
      this.observe(head);
    } catch (error) {
      this.#logger.debug({ err: error }, 'Head check failed.');
    } finally {
      this.#checking = false;
    }
  }
}
