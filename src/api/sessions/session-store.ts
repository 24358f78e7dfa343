/**
 * Dashboard sessions: made by a sign-in with e-mail + API key, carried by an httpOnly cookie, each
 * with its own CSRF token. Kept in memory (a restart signs everyone out; instances behind a load
 * balancer do not share them), keyed by a hash of the cookie's token so the token itself is not
 * kept. A session ends at sign-out, after its lifetime (by the injected clock), or as soon as its
 * account's key changes or the account is gone.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../../core/clock.ts';
import type { AccountRecord, ControlStore } from '../../db/control-store.ts';

/** The cookie that carries the session token. */
export const SESSION_COOKIE = 'edgeport_session';
/** Default lifetime of a session from sign-in: 12 hours. */
export const DEFAULT_SESSION_TTL_MS = 12 * 3600 * 1000;
/** Sessions kept at most; the oldest are dropped beyond it (bounds memory under sign-in floods). */
const MAX_SESSIONS = 10_000;

export interface Session {
  readonly account: AccountRecord;
  readonly csrfToken: string;
  /** Epoch ms. */
  readonly created: number;
  readonly expires: number;
  /** Hash of the cookie token: the key under which the session is kept. */
  readonly id: string;
}

interface StoredSession {
  accountId: string;
  keyHash: string;
  csrfToken: string;
  created: number;
  expires: number;
}

export class SessionStore {
  readonly #control: ControlStore;
  readonly #clock: Clock;
  readonly #ttlMs: number;
  /** Insertion order is creation order, so the first entries are the oldest. */
  readonly #sessions = new Map<string, StoredSession>();

  constructor(control: ControlStore, clock: Clock, ttlMs = DEFAULT_SESSION_TTL_MS) {
    this.#control = control;
    this.#clock = clock;
    this.#ttlMs = ttlMs;
  }

  get ttlMs(): number {
    return this.#ttlMs;
  }

  /** A new session for an account whose credentials were just verified; the token goes in the cookie. */
  create(account: AccountRecord): { token: string; session: Session } {
    this.#sweep();
    const token = randomBytes(32).toString('base64url');
    const now = this.#clock.now();
    const stored: StoredSession = {
      accountId: account.id, keyHash: account.keyHash, csrfToken: randomBytes(24).toString('base64url'), created: now, expires: now + this.#ttlMs,
    };
    const id = hashToken(token);
    this.#sessions.set(id, stored);
    while (this.#sessions.size > MAX_SESSIONS) this.#sessions.delete(this.#sessions.keys().next().value!);
    return { token, session: { account, csrfToken: stored.csrfToken, created: stored.created, expires: stored.expires, id } };
  }

  /** The live session of a cookie token, or null (unknown, expired, ended, or its account's key changed). */
  async resolve(token: string): Promise<Session | null> {
    const id = hashToken(token);
    const stored = this.#sessions.get(id);
    if (!stored) return null;
    if (stored.expires <= this.#clock.now()) {
      this.#sessions.delete(id);
      return null;
    }
    const account = await this.#control.getAccount(stored.accountId);
    if (!account || account.keyHash !== stored.keyHash) {
      this.#sessions.delete(id);
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

  /** Ends a session (sign-out); later requests with its cookie are refused. */
  end(session: Session): void {
    this.#sessions.delete(session.id);
  }

  #sweep(): void {
    const now = this.#clock.now();
    for (const [id, stored] of this.#sessions) if (stored.expires <= now) this.#sessions.delete(id);
  }
}

function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}
