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
 *   are dropped before use, so a gateway that was idle never answers with an old head.
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

  /** A write (a transaction sent, or a method not known to be a read) has been answered, or failed: whatever it changed is in the chain now. */
  written(): void {
    this.#move();
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
      // The first answer moves the epoch too: what was cached before it was never compared with a head.
      if (head !== this.#lastHead) this.#move();
      else this.#knownAt = Math.max(this.#knownAt, startedAt);
      this.#lastHead = head;
    } catch (error) {
      this.#logger.debug({ err: error }, 'Head check failed.');
    } finally {
      this.#checking = false;
    }
  }
}
