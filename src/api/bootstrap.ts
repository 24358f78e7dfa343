/**
 * Accounts outside the API: the first start's account (from EDGEPORT_ADMIN_EMAIL /
 * EDGEPORT_ADMIN_KEY, else generated and returned to be printed once) and
 * `edgeport accounts create <email>`. Both store only the key's hash, made on the caller's
 * ScryptThread (never on libuv's thread pool).
 */
import { systemClock, type Clock } from '../core/clock.ts';
import type { ScryptThread } from '../core/crypto/scrypt-thread.ts';
import { EdgeportError } from '../core/errors/edgeport-error.ts';
import { randomHexId } from '../core/ids.ts';
import type { AccountRecord, ControlStore } from '../db/control-store.ts';
import { generateApiKey, hashApiKey, isValidApiKey, isValidEmail, verifyApiKey } from './credentials.ts';

export type AccountErrorCode = 'ACCOUNT_EMAIL_INVALID' | 'ACCOUNT_KEY_INVALID' | 'ACCOUNT_EXISTS' | 'ACCOUNT_ADMIN_ENV_INCOMPLETE';

export const ACCOUNT_ERRORS: Record<AccountErrorCode, { kind: 'user'; message: string }> = {
  ACCOUNT_EMAIL_INVALID: { kind: 'user', message: 'The e-mail address is not valid.' },
  ACCOUNT_KEY_INVALID: { kind: 'user', message: 'An API key is 1 to 256 printable ASCII characters without spaces.' },
  ACCOUNT_EXISTS: { kind: 'user', message: 'An account with this e-mail address already exists.' },
  ACCOUNT_ADMIN_ENV_INCOMPLETE: { kind: 'user', message: 'Set both EDGEPORT_ADMIN_EMAIL and EDGEPORT_ADMIN_KEY, or neither (a key is then generated).' },
};

export class AccountError extends EdgeportError<AccountErrorCode> {
  constructor(code: AccountErrorCode, message = ACCOUNT_ERRORS[code].message) {
    super(code, 'user', message);
  }
}

/** The e-mail of the generated first account when EDGEPORT_ADMIN_EMAIL is not set. */
export const DEFAULT_ADMIN_EMAIL = 'admin@edgeport.local';

export interface NewCredentials {
  email: string;
  key: string;
}

/** Creates an account; the key is generated unless given. Returns the account and its key (to show once). */
export async function createAccount(control: ControlStore, email: string, options: { scrypt: ScryptThread; key?: string; clock?: Clock }): Promise<{ account: AccountRecord; key: string }> {
  if (!isValidEmail(email)) throw new AccountError('ACCOUNT_EMAIL_INVALID', `${JSON.stringify(email)} is not a valid e-mail address.`);
  const key = options.key ?? generateApiKey();
  if (!isValidApiKey(key)) throw new AccountError('ACCOUNT_KEY_INVALID');
  const account: AccountRecord = {
    id: randomHexId(), email, name: `${email}'s Account`, keyHash: await hashApiKey(key, options.scrypt), created: (options.clock ?? systemClock).now(),
  };
  if (await control.createAccount(account) === 'exists') throw new AccountError('ACCOUNT_EXISTS', `An account for ${email} already exists.`);
  return { account, key };
}

/**
 * The first start's account. With EDGEPORT_ADMIN_EMAIL and EDGEPORT_ADMIN_KEY it is made (or its
 * key brought in line with the variable) and null is returned; without them, an account is
 * generated only when none exists, and its credentials are returned to be printed once.
 */
export async function ensureBootstrapAccount(control: ControlStore, env: NodeJS.ProcessEnv,
  options: { scrypt: ScryptThread; clock?: Clock }): Promise<NewCredentials | null> {
  const { scrypt, clock = systemClock } = options;
  const email = env.EDGEPORT_ADMIN_EMAIL || undefined;
  const key = env.EDGEPORT_ADMIN_KEY || undefined;
  if ((email === undefined) !== (key === undefined)) throw new AccountError('ACCOUNT_ADMIN_ENV_INCOMPLETE');
  if (email !== undefined && key !== undefined) {
    // Another instance sharing the database may create the same account at the same moment.
    const existing = await control.findAccountByEmail(email)
      ?? await createAccount(control, email, { key, clock, scrypt }).then(() => null, (error: unknown) => {
        if (error instanceof AccountError && error.code === 'ACCOUNT_EXISTS') return control.findAccountByEmail(email);
        throw error;
      });
    if (existing && !await verifyApiKey(key, existing.keyHash, scrypt)) {
      if (!isValidApiKey(key)) throw new AccountError('ACCOUNT_KEY_INVALID');
      await control.setAccountKeyHash(existing.id, await hashApiKey(key, scrypt));
    }
    return null;
  }
  if (await control.countAccounts() > 0) return null;
  try {
    const made = await createAccount(control, DEFAULT_ADMIN_EMAIL, { clock, scrypt });
    return { email: made.account.email, key: made.key };
  } catch (error) {
    // Another instance sharing the database made it first: its banner shows the key.
    if (error instanceof AccountError && error.code === 'ACCOUNT_EXISTS') return null;
    throw error;
  }
}
