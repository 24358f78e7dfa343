/**
 * Authentication (SPEC §5): every call carries `X-Auth-Email` + `X-Auth-Key` of an account. The
 * answers for missing, malformed and unknown credentials are the real API's (reference §1.2). A
 * verified pair is remembered for a minute, so the scrypt hash is paid once, not per request; an
 * entry is dropped as soon as the account's stored hash changes.
 */
import type { Clock } from '../core/clock.ts';
import type { AccountRecord, ControlStore } from '../db/control-store.ts';
import { credentialFingerprint, isValidApiKey, isValidEmail, verifyApiKey } from './credentials.ts';
import { API_ERRORS, ApiError } from './errors.ts';

const CACHE_MS = 60_000;
const CACHE_MAX = 10_000;
/** Verified against when the e-mail is unknown, so both refusals cost the same time. */
const DUMMY_HASH = 'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';

type Headers = { get(name: string): string | null };

export class Authenticator {
  readonly #control: ControlStore;
  readonly #clock: Clock;
  readonly #verified = new Map<string, { accountId: string; keyHash: string; until: number }>();
  readonly #verifying = new Map<string, Promise<AccountRecord>>();

  constructor(control: ControlStore, clock: Clock) {
    this.#control = control;
    this.#clock = clock;
  }

  /** The account the request's credentials belong to; throws the real API's refusals. */
  async authenticate(headers: Headers): Promise<AccountRecord> {
    const email = headers.get('x-auth-email');
    const key = headers.get('x-auth-key');
    if (email === null || key === null) {
      if (email === null && key === null && headers.get('authorization') !== null) throw new ApiError('API_TOKEN_NOT_SUPPORTED');
      throw new ApiError('API_MISSING_CREDENTIALS');
    }
    const chain = [
      ...(isValidEmail(email) ? [] : [{ code: 6102, message: 'Invalid format for X-Auth-Email header' }]),
      ...(isValidApiKey(key) ? [] : [{ code: 6103, message: 'Invalid format for X-Auth-Key header' }]),
    ];
    if (chain.length > 0) {
      const entry = API_ERRORS.API_INVALID_REQUEST_HEADERS;
      throw new ApiError('API_INVALID_REQUEST_HEADERS', { items: [{ code: entry.code, message: entry.message, error_chain: chain }] });
    }
    const now = this.#clock.now();
    const fingerprint = credentialFingerprint(email, key);
    const hit = this.#verified.get(fingerprint);
    if (hit && hit.until > now) {
      const account = await this.#control.getAccount(hit.accountId);
      if (account && account.keyHash === hit.keyHash) return account;
      this.#verified.delete(fingerprint);
    }
    // Requests that arrive together with the same new pair share one verification.
    let pending = this.#verifying.get(fingerprint);
    if (!pending) {
      pending = this.#verify(email, key, fingerprint, now).finally(() => this.#verifying.delete(fingerprint));
      this.#verifying.set(fingerprint, pending);
    }
    return pending;
  }

  async #verify(email: string, key: string, fingerprint: string, now: number): Promise<AccountRecord> {
    const account = await this.#control.findAccountByEmail(email);
    const matches = await verifyApiKey(key, account?.keyHash ?? DUMMY_HASH);
    if (!account || !matches) throw new ApiError('API_UNKNOWN_CREDENTIALS');
    if (this.#verified.size >= CACHE_MAX) this.#verified.clear();
    this.#verified.set(fingerprint, { accountId: account.id, keyHash: account.keyHash, until: now + CACHE_MS });
    return account;
  }
}
