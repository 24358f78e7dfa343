/**
 * Dashboard sessions: made by a sign-in with e-mail + API key, carried by an httpOnly cookie, each
 * with its own CSRF token. Kept in the control store's database, so every instance on one database
 * knows them (a sign-in on one works on all; sign-out ends it everywhere) and they survive a
 * restart. Stored under a hash of the cookie's token, so the token itself is not kept. A session
 * ends at sign-out, after its lifetime (by the injected clock), as soon as its account's key
 * changes or the account is gone, or when its account has signed in more than `maxPerAccount`
 * times since (the newest are kept, per account: never across accounts).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { AUTH_DEFAULTS } from '../../config/defaults.ts';
import type { Clock } from '../../core/clock.ts';
import type { AccountRecord, ControlStore } from '../../db/control-store.ts';

/** The cookie that carries the session token. */
export const SESSION_COOKIE = 'edgeport_session';
/** Default lifetime of a session from sign-in: 12 hours. */
export const DEFAULT_SESSION_TTL_MS = 12 * 3600 * 1000;

export interface Session {
  readonly account: AccountRecord;
  readonly csrfToken: string;
  /** Epoch ms. */
  readonly created: number;
  readonly expires: number;
  /** Hash of the cookie token: the key under which the session is kept. */
  readonly id: string;
}

export class SessionStore {
  readonly #control: ControlStore;
  readonly #clock: Clock;
  readonly #ttlMs: number;
  readonly #maxPerAccount: number;

  constructor(control: ControlStore, clock: Clock, ttlMs = DEFAULT_SESSION_TTL_MS, maxPerAccount: number = AUTH_DEFAULTS.maxSessionsPerAccount) {
    this.#control = control;
    this.#clock = clock;
    this.#ttlMs = ttlMs;
    this.#maxPerAccount = maxPerAccount;
  }

  get ttlMs(): number {
    return this.#ttlMs;
  }

  /**
   * A new session for an account whose credentials were just verified; the token goes in the
   * cookie. That account's oldest sessions beyond `maxPerAccount` end (bounds storage under
   * sign-in floods without one account ever signing another out).
   */
  async create(account: AccountRecord): Promise<{ token: string; session: Session }> {
    const token = randomBytes(32).toString('base64url');
    const now = this.#clock.now();
    const session: Session = { account, csrfToken: randomBytes(24).toString('base64url'), created: now, expires: now + this.#ttlMs, id: hashToken(token) };
    await this.#control.createSession(
      {
        id: session.id,
        accountId: account.id,
        keyHash: account.keyHash,
        csrfToken: session.csrfToken,
        created: now,
        expires: session.expires,
      },
      this.#maxPerAccount,
    );
    return { token, session };
  }

  /** The live session of a cookie token, or null (unknown, expired, ended, or its account's key changed). */
  async resolve(token: string): Promise<Session | null> {
    const id = hashToken(token);
    const stored = await this.#control.getSession(id);
    if (!stored) return null;
    if (stored.expires <= this.#clock.now()) {
      await this.#control.deleteSession(id);
      return null;
    }
    const account = await this.#control.getAccount(stored.accountId);
    if (!account || account.keyHash !== stored.keyHash) {
      await this.#control.deleteSession(id);
      return null;
    }
    return { account, csrfToken: stored.csrfToken, created: stored.created, expires: stored.expires, id };
  }

  /** Whether a request's X-CSRF-Token header is the session's token (constant-time). */
  csrfMatches(session: Session, header: string | null): boolean {
    if (header === null) return false;
    const given = Buffer.from(header);
    const expected = Buffer.from(session.csrfToken);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  /** Ends a session (sign-out); later requests with its cookie are refused, on every instance. */
  async end(session: Session): Promise<void> {
    await this.#control.deleteSession(session.id);
  }
}

function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}
