/**
 * The failed-credential limits of one service, consulted before any credential is verified: per
 * client address and per identity (an e-mail, an S3 access key id), failed attempts are counted
 * (FailureCounter); past the limit an attempt is refused at once with how long to wait.
 *
 * An attempt takes its place in both counts before verification and gives it back when the
 * credentials verify, so concurrent guesses cannot all slip in before the first failure is counted.
 * Except from a trusted address (below): its attempts are counted only when they fail, so a client
 * that proved its credentials can have any number of requests being verified at once (a hundred
 * parallel uploads waited on their secret lookups and the 21st got SlowDown).
 *
 * A place held by a check still under way is no failure: when only such places fill a count, an
 * attempt is not refused but waits (admitWhenDecided) until one of them is decided, then asks
 * again. So a client that is not trusted yet (every client, right after a start) sending many
 * requests at once with correct credentials is never refused with 429 for its own checks, or for
 * those of others at its address that have not failed (seen: 6 of 2,078 GETs with a correct S3
 * key answered 429 after a restart, where an address had some failures and the first key lookups
 * waited on PostgreSQL; 43 of 64 concurrent management API requests with the correct key, whose
 * scrypt check takes 50 ms). Only failures refuse (429); checks that stay undecided for
 * `decideWithinMs` (10 s: say twenty uploads whose signature is checked when their body ends) make
 * the caller answer busy (503, Retry-After), never 429.
 *
 * So that failing on a victim's identity does not lock the victim out: a client address from which
 * an identity verified within `trustMs` is exempt from that identity's count (its own address count
 * still applies). Callers also let pairs they have already verified (a cache) through without
 * asking, and sessions are never checked here. What remains possible: while an attacker keeps an
 * identity at its limit, that identity cannot sign in from an address it has not used lately.
 *
 * Where a check costs next to nothing (an S3 signature, an HMAC of microseconds), the caller
 * passes `limitIdentity: false`: only the address is limited, so a valid signature passes from any
 * address however many others fail on its key id (the identity count would refuse the genuine
 * key's new clients, e.g. every consumer of a presigned URL, and protect nothing the address count
 * does not: refusing without checking is what makes a limit stop guesses).
 */
import type { Clock } from '../clock.ts';
import { clientKey } from './client-address.ts';
import { FailureCounter } from './failure-counter.ts';

export interface FailureLimits {
  /** The window the two maxima are per. */
  windowMs: number;
  /** Failures per client address (see clientKey). */
  maxPerAddress: number;
  /** Failures per identity, from any address. */
  maxPerIdentity: number;
}

/** The outcome of one credential check that was let through. Only the first call counts. */
export interface CredentialAttempt {
  /** The credentials verified: the attempt is given back, and the identity trusts this address. */
  succeeded(): void;
  /** They did not: the attempt stays counted. */
  failed(): void;
  /** No verdict (the server was busy, the client went away): the attempt is given back. */
  abandoned(): void;
}

/**
 * `scope` of a refusal: `address` or `identity`, whose failures refuse it (429, retry after
 * `retryAfterMs`); `pending`, whose places are all held by checks still under way (admit says so
 * at once, admitWhenDecided after waiting `decideWithinMs` for them): the caller answers busy (503).
 */
export type Admission = { admitted: true; attempt: CredentialAttempt } | { admitted: false; retryAfterMs: number; scope: 'address' | 'identity' | 'pending' };

/** Keys each table tracks at most (the least recently used go first); also the most attempts waiting for checks under way. */
export const TRACKED_KEYS_MAX = 10_000;
/** How long an address stays exempt from an identity's count after the identity verified from it. */
export const TRUSTED_ADDRESS_MS = 24 * 3600 * 1000;
/** How long an attempt waits for the checks under way that hold every place of its address or identity. */
export const DECIDE_WITHIN_MS = 10_000;
/** The Retry-After of a `pending` refusal. */
const PENDING_RETRY_MS = 1_000;

export class CredentialGuard {
  readonly #byAddress: FailureCounter;
  readonly #byIdentity: FailureCounter;
  /** `identity \n client` -> trusted until (epoch ms), in order of last use. */
  readonly #trusted = new Map<string, number>();
  readonly #clock: Clock;
  readonly #maxKeys: number;
  readonly #trustMs: number;
  readonly #limitIdentity: boolean;
  readonly #decideWithinMs: number;
  /** Untrusted attempts under way (each holds a place), by `a\n<client>` and `i\n<identity>`. */
  readonly #pending = new Map<string, number>();
  /** Attempts waiting for one of those to be decided, by the same keys. */
  readonly #waiting = new Map<string, Set<() => void>>();
  #waitingCount = 0;

  constructor(limits: FailureLimits, clock: Clock, options: { maxKeys?: number; trustMs?: number; limitIdentity?: boolean; decideWithinMs?: number } = {}) {
    this.#maxKeys = options.maxKeys ?? TRACKED_KEYS_MAX;
    this.#trustMs = options.trustMs ?? TRUSTED_ADDRESS_MS;
    this.#limitIdentity = options.limitIdentity ?? true;
    this.#decideWithinMs = options.decideWithinMs ?? DECIDE_WITHIN_MS;
    this.#clock = clock;
    this.#byAddress = new FailureCounter({ max: limits.maxPerAddress, windowMs: limits.windowMs, maxKeys: this.#maxKeys }, clock);
    this.#byIdentity = new FailureCounter({ max: limits.maxPerIdentity, windowMs: limits.windowMs, maxKeys: this.#maxKeys }, clock);
  }

  /** Entries held now, per table (each at most the `maxKeys` it was given). */
  get tracked(): { addresses: number; identities: number; trusted: number } {
    return { addresses: this.#byAddress.size, identities: this.#byIdentity.size, trusted: this.#trusted.size };
  }

  /** Attempts under way holding a place, and attempts waiting for them (both 0 when idle). */
  get underWay(): { pending: number; waiting: number } {
    let pending = 0;
    for (const [key, count] of this.#pending) if (key.startsWith('a\n')) pending += count;
    return { pending, waiting: this.#waitingCount };
  }

  /**
   * Lets a credential check of `identity` from the socket address `address` run, counting it, or
   * refuses it: with the milliseconds until failures would let it through, or (`pending`) because
   * checks still under way hold every place it could take.
   */
  admit(address: string | undefined, identity: string): Admission {
    const client = clientKey(address);
    const trusted = this.#isTrusted(identity, client);
    const limitIdentity = !trusted && this.#limitIdentity;
    const addressWait = this.#byAddress.waitMs(client);
    const identityWait = limitIdentity ? this.#byIdentity.waitMs(identity) : 0;
    if (addressWait > 0 || identityWait > 0) {
      // Counting the checks under way as given back: do failures alone hold a count?
      const addressFailed = addressWait > 0 && this.#byAddress.waitMs(client, this.#pending.get(`a\n${client}`) ?? 0) > 0;
      const identityFailed = identityWait > 0 && this.#byIdentity.waitMs(identity, this.#pending.get(`i\n${identity}`) ?? 0) > 0;
      if (!addressFailed && !identityFailed) return { admitted: false, retryAfterMs: PENDING_RETRY_MS, scope: 'pending' };
      return { admitted: false, retryAfterMs: Math.max(addressWait, identityWait), scope: addressFailed ? 'address' : 'identity' };
    }
    if (!trusted) {
      this.#byAddress.take(client);
      if (this.#limitIdentity) this.#byIdentity.take(identity);
      this.#adjustPending(client, identity, 1);
    }
    return { admitted: true, attempt: new Attempt(this, client, identity, trusted) };
  }

  /**
   * admit, but when checks still under way hold every place (`pending`), waits until one of them
   * is decided and asks again, for at most `decideWithinMs`: refused only by failures, or
   * `pending` after that long.
   */
  async admitWhenDecided(address: string | undefined, identity: string): Promise<Admission> {
    let admission = this.admit(address, identity);
    if (admission.admitted || admission.scope !== 'pending') return admission;
    const keys = [`a\n${clientKey(address)}`, `i\n${identity}`];
    const deadline = performance.now() + this.#decideWithinMs;
    for (;;) {
      const left = deadline - performance.now();
      if (left <= 0 || this.#waitingCount >= this.#maxKeys) return admission;
      await this.#nextDecision(keys, left);
      admission = this.admit(address, identity);
      if (admission.admitted || admission.scope !== 'pending') return admission;
    }
  }

  /** An untrusted attempt that verified, or never got a verdict: its places in the counts are given back. */
  giveBack(client: string, identity: string): void {
    this.#byAddress.refund(client);
    if (this.#limitIdentity) this.#byIdentity.refund(identity);
    this.decided(client, identity);
  }

  /** An untrusted attempt got its verdict (its place is given back or stays a failure): attempts waiting on its keys ask again. */
  decided(client: string, identity: string): void {
    this.#adjustPending(client, identity, -1);
    for (const key of [`a\n${client}`, `i\n${identity}`]) {
      const waiting = this.#waiting.get(key);
      if (waiting) for (const wake of [...waiting]) wake();
    }
  }

  #adjustPending(client: string, identity: string, by: 1 | -1): void {
    for (const key of [`a\n${client}`, `i\n${identity}`]) {
      const count = (this.#pending.get(key) ?? 0) + by;
      if (count > 0) this.#pending.set(key, count);
      else this.#pending.delete(key);
    }
  }

  /** Resolves when an attempt on one of `keys` is decided, or after `ms`. */
  #nextDecision(keys: readonly string[], ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.#waitingCount++;
      const wake = () => {
        clearTimeout(timer);
        this.#waitingCount--;
        for (const key of keys) {
          const waiting = this.#waiting.get(key);
          waiting?.delete(wake);
          if (waiting?.size === 0) this.#waiting.delete(key);
        }
        resolve();
      };
      // Not unref'd: an attempt waiting here is a request in flight, which keeps the process up anyway.
      const timer = setTimeout(wake, ms);
      for (const key of keys) {
        let waiting = this.#waiting.get(key);
        if (!waiting) this.#waiting.set(key, (waiting = new Set()));
        waiting.add(wake);
      }
    });
  }

  /** A trusted attempt (which took no place while checked) failed: it counts against the address now. */
  countFailure(client: string): void {
    this.#byAddress.take(client);
  }

  #isTrusted(identity: string, client: string): boolean {
    const key = `${identity}\n${client}`;
    const until = this.#trusted.get(key);
    if (until === undefined) return false;
    if (until > this.#clock.now()) return true;
    this.#trusted.delete(key);
    return false;
  }

  /** The address is trusted for the identity from now on (an entry more than half its time from expiry is left as it is). */
  trust(identity: string, client: string): void {
    const key = `${identity}\n${client}`;
    const until = this.#trusted.get(key);
    const now = this.#clock.now();
    if (until !== undefined && until - now > this.#trustMs / 2) return;
    this.#trusted.delete(key);
    if (this.#trusted.size >= this.#maxKeys) this.#trusted.delete(this.#trusted.keys().next().value!);
    this.#trusted.set(key, now + this.#trustMs);
  }
}

/** One admitted attempt (a class, not closures: it is made for every signed S3 request). */
class Attempt implements CredentialAttempt {
  readonly #guard: CredentialGuard;
  readonly #client: string;
  readonly #identity: string;
  readonly #trusted: boolean;
  #settled = false;

  constructor(guard: CredentialGuard, client: string, identity: string, trusted: boolean) {
    this.#guard = guard;
    this.#client = client;
    this.#identity = identity;
    this.#trusted = trusted;
  }

  succeeded(): void {
    if (this.#settled) return;
    this.#settled = true;
    if (!this.#trusted) this.#guard.giveBack(this.#client, this.#identity);
    this.#guard.trust(this.#identity, this.#client);
  }

  failed(): void {
    if (this.#settled) return;
    this.#settled = true;
    if (this.#trusted) this.#guard.countFailure(this.#client);
    else this.#guard.decided(this.#client, this.#identity);
  }

  abandoned(): void {
    if (this.#settled) return;
    this.#settled = true;
    if (!this.#trusted) this.#guard.giveBack(this.#client, this.#identity);
  }
}
