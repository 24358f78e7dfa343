/**
 * Who a request is: `X-Auth-Email` + `X-Auth-Key` when the request carries either (even with an
 * `Authorization` header too: the official SDK sends every credential it was given), else an API
 * token (`Authorization: Bearer`), else the dashboard's session cookie. A
 * request authenticated by the cookie that can change something (any method but GET and HEAD)
 * must also carry the session's token in `X-CSRF-Token`: another site can make the browser send
 * the cookie (it is SameSite=Strict, a second line of defence) but cannot read the token.
 */
import type { ApiTokenRecord } from '../../db/api-tokens/api-token-store.ts';
import type { AccountRecord } from '../../db/control-store.ts';
import { firstCookieValues } from '../../logs/custom-fields.ts';
import { ApiError } from '../errors.ts';
import { authenticateBearer } from '../tokens/bearer-auth.ts';
import type { ApiDeps } from '../route.ts';
import { SESSION_COOKIE, type Session } from './session-store.ts';

const SAFE_METHODS = new Set(['GET', 'HEAD']);

export interface Authenticated {
  account: AccountRecord;
  session?: Session;
  /** The API token the request was authenticated by (its policies limit what it may do). */
  token?: ApiTokenRecord;
}

/**
 * The request's account, by its X-Auth-* headers or its session cookie. A live session is never
 * refused by the failed-credential limits (they apply to key checks only).
 */
export async function authenticateRequest(request: Request, deps: ApiDeps, clientAddress: string | undefined): Promise<Authenticated> {
  const headers = request.headers;
  const usesKey = headers.has('x-auth-email') || headers.has('x-auth-key');
  const bearer = headers.get('authorization');
  if (!usesKey && bearer !== null) return authenticateBearer(bearer, deps, clientAddress);
  if (usesKey || readCookie(headers.get('cookie'), SESSION_COOKIE) === undefined) return { account: await deps.auth.authenticate(headers, clientAddress) };
  const session = await requireSession(request, deps);
  return { account: session.account, session };
}

/** The request's live session (its cookie; the CSRF token too unless GET or HEAD), else 401 / 10000. */
export async function requireSession(request: Request, deps: ApiDeps): Promise<Session> {
  const headers = request.headers;
  const token = readCookie(headers.get('cookie'), SESSION_COOKIE);
  const session = token === undefined ? null : await deps.sessions.resolve(token);
  if (!session) throw new ApiError('API_NOT_SIGNED_IN');
  if (!SAFE_METHODS.has(request.method) && !deps.sessions.csrfMatches(session, headers.get('x-csrf-token'))) {
    throw new ApiError('API_CSRF_TOKEN_INVALID');
  }
  return session;
}

/** The value of one cookie of a Cookie header (its first instance, as the edge reads cookies for logs). */
export function readCookie(header: string | null, name: string): string | undefined {
  return header === null ? undefined : firstCookieValues(['cookie', header], [name]).get(name);
}

/** The Set-Cookie value of a session (Max-Age in seconds), or of its removal (`null`). */
export function sessionCookie(token: string | null, maxAgeMs = 0): string {
  const base = `${SESSION_COOKIE}=${token ?? ''}; Path=/; HttpOnly; SameSite=Strict`;
  return token === null ? `${base}; Max-Age=0` : `${base}; Max-Age=${Math.floor(maxAgeMs / 1000)}`;
}
