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

export type Admission =
  | { admitted: true; attempt: CredentialAttempt }
  | { admitted: false; retryAfterMs: number; scope: 'address' | 'identity' };

/** Keys each table tracks at most (the least recently used go first). */
export const TRACKED_KEYS_MAX = 10_000;
/** How long an address stays exempt from an identity's count after the identity verified from it. */
export const TRUSTED_ADDRESS_MS = 24 * 3600 * 1000;

export class CredentialGuard {
  readonly #byAddress: FailureCounter;
  readonly #byIdentity: FailureCounter;
  /** `identity \n client` -> trusted until (epoch ms), in order of last use. */
  readonly #trusted = new Map<string, number>();
  readonly #clock: Clock;
  readonly #maxKeys: number;
  readonly #trustMs: number;
  readonly #limitIdentity: boolean;

  constructor(limits: FailureLimits, clock: Clock, options: { maxKeys?: number; trustMs?: number; limitIdentity?: boolean } = {}) {
    this.#maxKeys = options.maxKeys ?? TRACKED_KEYS_MAX;
    this.#trustMs = options.trustMs ?? TRUSTED_ADDRESS_MS;
    this.#limitIdentity = options.limitIdentity ?? true;
    this.#clock = clock;
    this.#byAddress = new FailureCounter({ max: limits.maxPerAddress, windowMs: limits.windowMs, maxKeys: this.#maxKeys }, clock);
    this.#byIdentity = new FailureCounter({ max: limits.maxPerIdentity, windowMs: limits.windowMs, maxKeys: this.#maxKeys }, clock);
  }

  /** Entries held now, per table (each at most the `maxKeys` it was given). */
  get tracked(): { addresses: number; identities: number; trusted: number } {
    return { addresses: this.#byAddress.size, identities: this.#byIdentity.size, trusted: this.#trusted.size };
  }

  /**
   * Lets a credential check of `identity` from the socket address `address` run, counting it, or
   * refuses it with the milliseconds until it would be let through.
   */
  admit(address: string | undefined, identity: string): Admission {
    const client = clientKey(address);
    const trusted = this.#isTrusted(identity, client);
    const addressWait = this.#byAddress.waitMs(client);
    const identityWait = trusted || !this.#limitIdentity ? 0 : this.#byIdentity.waitMs(identity);
    if (addressWait > 0 || identityWait > 0) {
      return { admitted: false, retryAfterMs: Math.max(addressWait, identityWait), scope: addressWait > 0 ? 'address' : 'identity' };
    }
    if (!trusted) {
      this.#byAddress.take(client);
      if (this.#limitIdentity) this.#byIdentity.take(identity);
    }
    return { admitted: true, attempt: new Attempt(this, client, identity, trusted) };
  }

  /** An untrusted attempt that verified, or never got a verdict: its places in the counts are given back. */
  giveBack(client: string, identity: string): void {
    this.#byAddress.refund(client);
    if (this.#limitIdentity) this.#byIdentity.refund(identity);
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
  }

  abandoned(): void {
    if (this.#settled) return;
    this.#settled = true;
    if (!this.#trusted) this.#guard.giveBack(this.#client, this.#identity);
  }
}
