/**
 * Authentication by API token: `Authorization: Bearer <value>`. A value is 40 characters of
 * base64url (240 random bits); it is looked up by its SHA-256 hash, the only form stored, so a
 * check costs one hash and one indexed read, and a token deleted, rolled or disabled on any
 * instance is refused at once on every instance. Failed checks count in the global key's limiter
 * (per client address), so guessing tokens is throttled like guessing keys.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { AccountRecord } from '../../db/control-store.ts';
import type { ApiTokenRecord, ApiTokenStatus } from '../../db/api-tokens/api-token-store.ts';
import { authBusy, rateLimited } from '../auth.ts';
import { API_ERRORS, ApiError } from '../errors.ts';
import type { ApiDeps } from '../route.ts';

const TOKEN_VALUE = /^[A-Za-z0-9_-]{40}$/;
const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/** A new token value: 30 random bytes as 40 base64url characters (the platform's tokens are 40 characters too). */
export function generateTokenValue(): string {
  return randomBytes(30).toString('base64url');
}

/** The stored form of a value: SHA-256, base64url (fast: the value's 240 random bits leave nothing to guess). */
export function hashTokenValue(value: string): string {
  return createHash('sha256').update(value).digest('base64url');
}

/**
 * A token's status now: its own (active, disabled), `expired` once `expires_on` passed, and
 * `pending` (not valid yet) before `not_before`.
 */
export function tokenStatusAt(token: ApiTokenRecord, now: number): ApiTokenStatus | 'pending' {
  if (token.status !== 'active') return token.status;
  if (token.expiresOn !== null && now >= token.expiresOn) return 'expired';
  if (token.notBefore !== null && now < token.notBefore) return 'pending';
  return 'active';
}

/** Refuses a token that is not usable now (401 / 10000, saying why). */
export function requireActiveToken(token: ApiTokenRecord, now: number): void {
  const status = tokenStatusAt(token, now);
  if (status === 'active') return;
  const why =
    status === 'disabled'
      ? 'is disabled'
      : status === 'expired'
        ? `expired on ${new Date(token.expiresOn ?? now).toISOString()}`
        : `is not valid before ${new Date(token.notBefore!).toISOString()}`;
  throw new ApiError('API_TOKEN_INACTIVE', {
    message: `Authentication error: the API token ${why}; its owner can change that with PUT /user/tokens/${token.id}`,
  });
}

/**
 * The account and token of an `Authorization` header, whatever the token's status (the pipeline
 * refuses inactive ones except on `/user/tokens/verify`). A malformed header is 400 / 6003 with
 * 6111 as the platform answers; a token nobody has is 401 / 10000.
 */
export async function authenticateBearer(
  header: string,
  deps: ApiDeps,
  address: string | undefined,
): Promise<{ account: AccountRecord; token: ApiTokenRecord }> {
  const value = BEARER.exec(header)?.[1];
  if (value === undefined || !TOKEN_VALUE.test(value)) {
    const entry = API_ERRORS.API_INVALID_REQUEST_HEADERS;
    throw new ApiError('API_INVALID_REQUEST_HEADERS', {
      items: [{ code: entry.code, message: entry.message, error_chain: [{ code: 6111, message: 'Invalid format for Authorization header' }] }],
    });
  }
  const valueHash = hashTokenValue(value);
  const admission = await deps.auth.guard.admitWhenDecided(address, `bearer:${valueHash}`);
  if (!admission.admitted) {
    if (admission.scope === 'pending') throw authBusy(admission.retryAfterMs);
    throw rateLimited(admission.retryAfterMs, admission.scope === 'address' ? 'from this address' : 'for this token');
  }
  const { attempt } = admission;
  try {
    const token = await deps.control.apiTokens.findByValueHash(valueHash);
    const account = token ? await deps.control.getAccount(token.accountId) : null;
    if (!token || !account) {
      attempt.failed();
      throw new ApiError('API_TOKEN_UNKNOWN');
    }
    attempt.succeeded();
    return { account, token };
  } catch (error) {
    if (!(error instanceof ApiError)) attempt.abandoned();
    throw error;
  }
}
