/**
 * Which queries may start: an account has at most ADMISSION_LIMITS.perAccount queries in progress
 * and spends one of its budget of ADMISSION_LIMITS.budget queries per 5-minute window on each (the
 * platform's default quota: 300 GraphQL queries over 5 minutes); the server has at most
 * ADMISSION_LIMITS.total in progress. A query is admitted before its body is read, so reading,
 * parsing and refusing it all count, and another account's queries never wait behind them. Times
 * come from the injected clock.
 */
import type { Clock } from '../../core/clock.ts';
import { GraphQLRequestError } from './graphql-errors.ts';

export interface AdmissionLimits {
  /** Queries of one account in progress at once. */
  perAccount: number;
  /** Queries in progress at once on this server. */
  total: number;
  /** Queries one account may start per window. */
  budget: number;
  windowMs: number;
}

export const ADMISSION_LIMITS: AdmissionLimits = { perAccount: 2, total: 16, budget: 300, windowMs: 5 * 60_000 };

export class GraphQLAdmission {
  readonly #clock: Clock;
  readonly #limits: AdmissionLimits;
  readonly #running = new Map<string, number>();
  /** Per account, when each query of the current window started (oldest first). */
  readonly #started = new Map<string, number[]>();
  #total = 0;

  constructor(clock: Clock, limits: AdmissionLimits = ADMISSION_LIMITS) {
    this.#clock = clock;
    this.#limits = limits;
  }

  /** Admits a query of `account`, or throws GRAPHQL_RATE_LIMITED / GRAPHQL_BUSY; call the returned function once it is over. */
  admit(account: string): () => void {
    const now = this.#clock.now();
    const started = this.#window(account, now);
    if (started.length >= this.#limits.budget) {
      const wait = Math.max(1, Math.ceil((started[0]! + this.#limits.windowMs - now) / 1000));
      throw new GraphQLRequestError(
        'GRAPHQL_RATE_LIMITED',
        `rate limiter budget depleted, try again after ${wait} seconds: an account may run ${this.#limits.budget} queries every ${this.#limits.windowMs / 60_000} minutes`,
        { retryAfter: wait },
      );
    }
    const running = this.#running.get(account) ?? 0;
    if (running >= this.#limits.perAccount) {
      throw new GraphQLRequestError(
        'GRAPHQL_RATE_LIMITED',
        `too many queries in progress for this account (at most ${this.#limits.perAccount} at once), please try again later`,
        { retryAfter: 1 },
      );
    }
    if (this.#total >= this.#limits.total)
      throw new GraphQLRequestError('GRAPHQL_BUSY', 'too many queries in progress, please try again later', { retryAfter: 1 });
    started.push(now);
    this.#started.set(account, started);
    this.#running.set(account, running + 1);
    this.#total++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#total--;
      const left = (this.#running.get(account) ?? 1) - 1;
      if (left === 0) this.#running.delete(account);
      else this.#running.set(account, left);
    };
  }

  /** The account's start times still in the window (an account with none is forgotten). */
  #window(account: string, now: number): number[] {
    const started = this.#started.get(account) ?? [];
    let expired = 0;
    while (expired < started.length && started[expired]! <= now - this.#limits.windowMs) expired++;
    if (expired > 0) started.splice(0, expired);
    if (started.length === 0) this.#started.delete(account);
    return started;
  }
}
