/**
 * Authentication by the global API key: `X-Auth-Email` + `X-Auth-Key` of an account
 * (API tokens, `Authorization: Bearer`, are checked by tokens/bearer-auth.ts with the same limiter). The
 * answers for missing, malformed and unknown credentials are the real API's (docs/errors.md). A
 * verified pair is remembered while it is used (until a minute passes without it), so the scrypt
 * hash is paid once, not per request; an entry is dropped as soon as the account's stored hash
 * changes.
 *
 * Failed checks are limited (CredentialGuard) per client address and per e-mail, decided before
 * the account is looked up or any hash runs: past the limit, 429 / 971 with Retry-After. A pair
 * already remembered is never refused, and an address the e-mail signed in from lately is exempt
 * from the e-mail's count, so failing on someone's e-mail does not sign them out. Requests with
 * the same pair as a check under way join it, and a request whose places are all held by checks
 * under way waits for them (CredentialGuard.admitWhenDecided): a burst of requests with a correct
 * key to a fresh server is never 429. The hash runs on
 * a ScryptThread with a bounded queue shared fairly between client addresses (a flooding address
 * delays its own checks, not a fresh sign-in from elsewhere); a check that gets no place in it is
 * 503 / 971 with Retry-After.
 */
import { AUTH_DEFAULTS } from '../config/defaults.ts';
import { clientKey } from '../core/auth/client-address.ts';
import { CredentialGuard, type FailureLimits } from '../core/auth/credential-guard.ts';
import type { Clock } from '../core/clock.ts';
import { ScryptBusyError, type ScryptThread } from '../core/crypto/scrypt-thread.ts';
import type { AccountRecord, ControlStore } from '../db/control-store.ts';
import { credentialFingerprint, isValidApiKey, isValidEmail, verifyApiKey } from './credentials.ts';
import { API_ERRORS, ApiError } from './errors.ts';

/** A remembered pair lasts this long after its last use. */
const CACHE_IDLE_MS = 60_000;
const CACHE_MAX = 10_000;
/** Verified against when the e-mail is unknown, so both refusals cost the same time. */
const DUMMY_HASH = 'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';

type Headers = { get(name: string): string | null };

export interface AuthenticatorOptions {
  /** Where the key hashes run (owned by the caller, who closes it). */
  scrypt: ScryptThread;
  /** Failed-check limits (default: DEFAULTS.auth). */
  limits?: FailureLimits;
}

export class Authenticator {
  readonly #control: ControlStore;
  readonly #clock: Clock;
  readonly #scrypt: ScryptThread;
  /** Failed-check limits, shared with API tokens' checks (tokens/bearer-auth.ts): one count per client address. */
  readonly guard: CredentialGuard;
  /** Fingerprint -> verified pair, in order of last use. */
  readonly #verified = new Map<string, { accountId: string; keyHash: string; until: number }>();
  readonly #verifying = new Map<string, Promise<AccountRecord>>();

  constructor(control: ControlStore, clock: Clock, options: AuthenticatorOptions) {
    this.#control = control;
    this.#clock = clock;
    this.#scrypt = options.scrypt;
    this.guard = new CredentialGuard(
      options.limits ?? {
        windowMs: AUTH_DEFAULTS.failureWindowMs,
        maxPerAddress: AUTH_DEFAULTS.maxFailuresPerAddress,
        maxPerIdentity: AUTH_DEFAULTS.maxFailuresPerIdentity,
      },
      clock,
    );
  }

  /**
   * The account the request's credentials belong to; throws the real API's refusals. `address` is
   * the client's socket address (undefined for in-process calls), which failures are counted under.
   */
  async authenticate(headers: Headers, address: string | undefined): Promise<AccountRecord> {
    const email = headers.get('x-auth-email');
    const key = headers.get('x-auth-key');
    if (email === null || key === null) throw new ApiError('API_MISSING_CREDENTIALS');
    const chain = [
      ...(isValidEmail(email) ? [] : [{ code: 6102, message: 'Invalid format for X-Auth-Email header' }]),
      ...(isValidApiKey(key) ? [] : [{ code: 6103, message: 'Invalid format for X-Auth-Key header' }]),
    ];
    if (chain.length > 0) {
      const entry = API_ERRORS.API_INVALID_REQUEST_HEADERS;
      throw new ApiError('API_INVALID_REQUEST_HEADERS', { items: [{ code: entry.code, message: entry.message, error_chain: chain }] });
    }
    const fingerprint = credentialFingerprint(email, key);
    const remembered = await this.#remembered(fingerprint);
    if (remembered) return remembered;
    // Requests that arrive together with the same new pair share one verification, and one place
    // in the counts: the same guess again teaches nothing (seen: of 64 requests with the correct
    // key sent at once to a fresh server, 43 were refused with 429, each holding a place of its own).
    const joined = this.#verifying.get(fingerprint);
    if (joined) return answered(joined);

    const admission = await this.guard.admitWhenDecided(address, email.toLowerCase());
    if (!admission.admitted) {
      if (admission.scope === 'pending') throw authBusy(admission.retryAfterMs);
      throw rateLimited(admission.retryAfterMs, admission.scope === 'address' ? 'from this address' : 'for this e-mail');
    }
    const { attempt } = admission;
    try {
      // A wait for a place may have seen the same pair verified, or its verification begun.
      const account = (await this.#remembered(fingerprint)) ?? (await this.#sharedVerification(email, key, fingerprint, clientKey(address)));
      attempt.succeeded();
      return account;
    } catch (error) {
      if (error instanceof ApiError && error.code === 'API_UNKNOWN_CREDENTIALS') attempt.failed();
      else attempt.abandoned();
      if (error instanceof ScryptBusyError) throw authBusy(error.retryAfterMs);
      throw error;
    }
  }

  /** The verification of the pair under way, or a new one that others with the same pair join. */
  #sharedVerification(email: string, key: string, fingerprint: string, client: string): Promise<AccountRecord> {
    let pending = this.#verifying.get(fingerprint);
    if (!pending) {
      pending = this.#verify(email, key, fingerprint, client).finally(() => this.#verifying.delete(fingerprint));
      this.#verifying.set(fingerprint, pending);
    }
    return pending;
  }

  /** The account of a pair verified before and used within CACHE_IDLE_MS, if its key is unchanged. */
  async #remembered(fingerprint: string): Promise<AccountRecord | undefined> {
    const hit = this.#verified.get(fingerprint);
    if (!hit) return undefined;
    this.#verified.delete(fingerprint);
    const now = this.#clock.now();
    if (hit.until <= now) return undefined;
    const account = await this.#control.getAccount(hit.accountId);
    if (!account || account.keyHash !== hit.keyHash) return undefined;
    this.#verified.set(fingerprint, { ...hit, until: now + CACHE_IDLE_MS });
    return account;
  }

  /** Looks the e-mail up and hashes the key, in the hash queue's place of `client`. */
  async #verify(email: string, key: string, fingerprint: string, client: string): Promise<AccountRecord> {
    const account = await this.#control.findAccountByEmail(email);
    const matches = await verifyApiKey(key, account?.keyHash ?? DUMMY_HASH, this.#scrypt, client);
    if (!account || !matches) throw new ApiError('API_UNKNOWN_CREDENTIALS');
    if (this.#verified.size >= CACHE_MAX) this.#verified.delete(this.#verified.keys().next().value!);
    this.#verified.set(fingerprint, { accountId: account.id, keyHash: account.keyHash, until: this.#clock.now() + CACHE_IDLE_MS });
    return account;
  }
}

/** 429 / 971: too many failed checks from the client's address or for the e-mail (or the API token). */
export function rateLimited(retryAfterMs: number, scope: string): ApiError {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new ApiError('API_AUTH_RATE_LIMITED', {
    message: `Please wait and consider throttling your request speed: too many failed credential checks ${scope}; retry after ${seconds} s`,
    headers: { 'retry-after': String(seconds) },
  });
}

/** A joined verification's outcome, as its first request gets it (a full hash queue is 503). */
async function answered(verification: Promise<AccountRecord>): Promise<AccountRecord> {
  try {
    return await verification;
  } catch (error) {
    if (error instanceof ScryptBusyError) throw authBusy(error.retryAfterMs);
    throw error;
  }
}

/** 503 / 971: the key-hash queue is full, or every place in the counts stayed held by checks under way. */
export function authBusy(retryAfterMs: number): ApiError {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new ApiError('API_AUTH_BUSY', {
    message: `Please wait and consider throttling your request speed: too many credential checks are waiting; retry after ${seconds} s`,
    headers: { 'retry-after': String(seconds) },
  });
}
