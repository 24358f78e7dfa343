/**
 * The ids of an account's one user and one membership: derived from the account's id (stable, 32
 * hex characters like the platform's, and distinct from it: clients must not mix them up).
 */
import { createHash } from 'node:crypto';
import type { AccountRecord } from '../../db/control-store.ts';

export function derivedId(kind: 'user' | 'membership' | 'role', account: Pick<AccountRecord, 'id'>): string {
  return createHash('sha256').update(`${kind}:${account.id}`).digest('hex').slice(0, 32);
}

/** The id of the account's user (`GET /user`'s id, and the `com.cloudflare.api.user.<id>` of its tokens' policies). */
export function userIdOf(account: Pick<AccountRecord, 'id'>): string {
  return derivedId('user', account);
}
