/**
 * A bounded queue of jobs that shares its places and its turns fairly between clients (client
 * addresses, see clientKey), so a client flooding it delays itself and not the others. Each client
 * has a usage: the jobs it has asked for (run, queued or refused alike), decaying by half every
 * `halfLifeMs` (injected clock). Refused jobs count: a refusal costs the asker its priority, so
 * a client retrying at once whatever it is told goes behind everyone who asks less. (Counting only
 * the jobs run was not enough: with the hashes slowed down on a busy machine, 64 flooding
 * addresses were as unserved, "new", as an honest one, and kept every place.)
 *
 * A client's standing is its usage less its jobs still waiting (the asks already served or
 * refused): a job waiting does not lower its own client's turn, so a client that asked once and
 * waits is level with one asking for the first time, and keeps its place against it.
 *
 * - Turns: the next job is the oldest of the waiting client with the lowest standing. A client
 *   that has not asked lately goes next, whatever others keep queued.
 * - Places: with the queue full, a new job takes the place of the newest job of the client that
 *   holds the most places (then: has the highest standing), when that client is worse off by that
 *   measure than the newcomer would be; otherwise the new job is refused. So a few flooding
 *   clients cannot hold every place against a client with nothing queued.
 *
 * Memory is fixed: `capacity` jobs and the usage of at most `maxClients` clients (the least
 * recently used dropped first; a usage that has decayed to nothing is dropped when next seen).
 */
import type { Clock } from '../clock.ts';

/** A usage below this is the same as none. */
const NEGLIGIBLE = 0.01;

export type Offer<T> = { admitted: true; evicted?: T } | { admitted: false };

interface Waiting<T> {
  item: T;
  seq: number;
}

interface Usage {
  value: number;
  at: number;
}

export class FairQueue<T> {
  readonly #capacity: number;
  readonly #halfLifeMs: number;
  readonly #maxClients: number;
  readonly #clock: Clock;
  /** client -> its waiting jobs, oldest first (only clients with at least one). */
  readonly #waiting = new Map<string, Array<Waiting<T>>>();
  /** client -> usage, in order of last use. */
  readonly #usage = new Map<string, Usage>();
  #size = 0;
  #seq = 0;

  constructor(options: { capacity: number; halfLifeMs: number; maxClients: number }, clock: Clock) {
    this.#capacity = options.capacity;
    this.#halfLifeMs = options.halfLifeMs;
    this.#maxClients = options.maxClients;
    this.#clock = clock;
  }

  /** Jobs waiting. */
  get size(): number {
    return this.#size;
  }

  /** Clients whose usage is remembered (at most `maxClients`). */
  get trackedClients(): number {
    return this.#usage.size;
  }

  /**
   * Queues `item` for `client`, possibly in the place of another client's job (returned as
   * `evicted`), or refuses it; either way the client is charged one use.
   */
  offer(client: string, item: T): Offer<T> {
    const standing = this.#standing(client);
    this.charge(client);
    let evicted: T | undefined;
    if (this.#size >= this.#capacity) {
      const worst = this.#worstHolder();
      const mine = (this.#waiting.get(client)?.length ?? 0) + 1;
      if (worst === undefined || !this.#worse(worst.places, worst.standing, mine, standing)) return { admitted: false };
      const jobs = this.#waiting.get(worst.client)!;
      evicted = jobs.pop()!.item;
      if (jobs.length === 0) this.#waiting.delete(worst.client);
      this.#size--;
    }
    const jobs = this.#waiting.get(client);
    const entry = { item, seq: this.#seq++ };
    if (jobs) jobs.push(entry);
    else this.#waiting.set(client, [entry]);
    this.#size++;
    return evicted === undefined ? { admitted: true } : { admitted: true, evicted };
  }

  /** The next job to run (see the header); undefined when none waits. */
  take(): T | undefined {
    let chosen: string | undefined;
    let chosenStanding = Infinity;
    let chosenSeq = Infinity;
    for (const [client, jobs] of this.#waiting) {
      const standing = this.#standing(client);
      const seq = jobs[0]!.seq;
      if (standing < chosenStanding - NEGLIGIBLE || (Math.abs(standing - chosenStanding) <= NEGLIGIBLE && seq < chosenSeq)) {
        chosen = client;
        chosenStanding = standing;
        chosenSeq = seq;
      }
    }
    if (chosen === undefined) return undefined;
    const jobs = this.#waiting.get(chosen)!;
    const { item } = jobs.shift()!;
    if (jobs.length === 0) this.#waiting.delete(chosen);
    this.#size--;
    return item;
  }

  /** Counts one use by `client` (a job run at once, without an offer, is charged here by the caller). */
  charge(client: string): void {
    const value = this.usageOf(client) + 1;
    this.#usage.delete(client);
    if (this.#usage.size >= this.#maxClients) this.#usage.delete(this.#usage.keys().next().value!);
    this.#usage.set(client, { value, at: this.#clock.now() });
  }

  /** The client's usage now (decayed). */
  usageOf(client: string): number {
    const usage = this.#usage.get(client);
    if (usage === undefined) return 0;
    const now = this.#clock.now();
    const value = usage.value * 2 ** (-Math.max(0, now - usage.at) / this.#halfLifeMs);
    if (value < NEGLIGIBLE) {
      this.#usage.delete(client);
      return 0;
    }
    return value;
  }

  /** Removes and returns every waiting job. */
  drain(): T[] {
    const all = [...this.#waiting.values()]
      .flat()
      .sort((a, b) => a.seq - b.seq)
      .map((entry) => entry.item);
    this.#waiting.clear();
    this.#size = 0;
    return all;
  }

  /** The client's usage less its jobs waiting (see the header); never below 0 (usage decays, waiting jobs do not). */
  #standing(client: string): number {
    return Math.max(0, this.usageOf(client) - (this.#waiting.get(client)?.length ?? 0));
  }

  /** The client holding the most places (ties: the highest standing). */
  #worstHolder(): { client: string; places: number; standing: number } | undefined {
    let worst: { client: string; places: number; standing: number } | undefined;
    for (const [client, jobs] of this.#waiting) {
      const standing = this.#standing(client);
      if (worst === undefined || this.#worse(jobs.length, standing, worst.places, worst.standing)) worst = { client, places: jobs.length, standing };
    }
    return worst;
  }

  /** Whether (places a, standing a) is strictly worse off than (places b, standing b). */
  #worse(placesA: number, standingA: number, placesB: number, standingB: number): boolean {
    return placesA > placesB || (placesA === placesB && standingA > standingB + NEGLIGIBLE);
  }
}
