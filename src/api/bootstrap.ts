/**
 * Accounts outside the API: the operator's sign-in at every start (from EDGEPORT_ADMIN_EMAIL /
 * EDGEPORT_ADMIN_KEY, else generated on the first start and returned to be printed once) and
 * `edgeport accounts create <email>`. Both store only the key's hash, made on the caller's
 * ScryptThread (never on libuv's thread pool).
 */
import { systemClock, type Clock } from '../core/clock.ts';
import type { ScryptThread } from '../core/crypto/scrypt-thread.ts';
import { EdgeportError } from '../core/errors/edgeport-error.ts';
import { randomHexId } from '../core/ids.ts';
import type { AccountRecord, ControlStore } from '../db/control-store.ts';
import { generateApiKey, hashApiKey, isValidApiKey, isValidEmail, verifyApiKey } from './credentials.ts';

export type AccountErrorCode =
  | 'ACCOUNT_EMAIL_INVALID'
  | 'ACCOUNT_KEY_INVALID'
  | 'ACCOUNT_EXISTS'
  | 'ACCOUNT_ADMIN_ENV_INCOMPLETE'
  | 'ACCOUNT_ADMIN_EMAIL_TAKEN'
  | 'ACCOUNT_NOT_FOUND'
  | 'ACCOUNT_NOT_EMPTY'
  | 'ACCOUNT_IS_OPERATOR';

export const ACCOUNT_ERRORS: Record<AccountErrorCode, { kind: 'user'; message: string }> = {
  ACCOUNT_EMAIL_INVALID: { kind: 'user', message: 'The e-mail address is not valid.' },
  ACCOUNT_KEY_INVALID: { kind: 'user', message: 'An API key is 1 to 256 printable ASCII characters without spaces.' },
  ACCOUNT_EXISTS: { kind: 'user', message: 'An account with this e-mail address already exists.' },
  ACCOUNT_ADMIN_ENV_INCOMPLETE: { kind: 'user', message: 'Set both EDGEPORT_ADMIN_EMAIL and EDGEPORT_ADMIN_KEY, or neither (a key is then generated).' },
  ACCOUNT_NOT_FOUND: { kind: 'user', message: 'No account has this e-mail address (edgeport accounts list shows them).' },
  ACCOUNT_NOT_EMPTY: { kind: 'user', message: 'The account still holds zones, log jobs or buckets: delete them first, or add --force to delete them with it.' },
  ACCOUNT_IS_OPERATOR: {
    kind: 'user',
    message: 'The operator (the first account) cannot be deleted: change its e-mail and key with EDGEPORT_ADMIN_EMAIL / EDGEPORT_ADMIN_KEY instead.',
  },
  ACCOUNT_ADMIN_EMAIL_TAKEN: {
    kind: 'user',
    message: 'EDGEPORT_ADMIN_EMAIL names another account than the operator: choose an unused e-mail, or delete that account first.',
  },
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
export async function createAccount(
  control: ControlStore,
  email: string,
  options: { scrypt: ScryptThread; key?: string; clock?: Clock },
): Promise<{ account: AccountRecord; key: string }> {
  if (!isValidEmail(email)) throw new AccountError('ACCOUNT_EMAIL_INVALID', `${JSON.stringify(email)} is not a valid e-mail address.`);
  const key = options.key ?? generateApiKey();
  if (!isValidApiKey(key)) throw new AccountError('ACCOUNT_KEY_INVALID');
  const account: AccountRecord = {
    id: randomHexId(),
    email,
    name: `${email}'s Account`,
    keyHash: await hashApiKey(key, options.scrypt),
    created: (options.clock ?? systemClock).now(),
  };
  if ((await control.createAccount(account)) === 'exists') throw new AccountError('ACCOUNT_EXISTS', `An account for ${email} already exists.`);
  return { account, key };
}

/**
 * What ensureBootstrapAccount did, for the banner: `generated` (no variables, no account: the new
 * credentials, to print once), `given` (the operator follows EDGEPORT_ADMIN_EMAIL / KEY: made now,
 * or its e-mail and key changed to theirs, or left as they were), `kept` (no variables: the
 * operator's sign-in stays as it is).
 */
export type BootstrapOutcome =
  | { kind: 'generated'; email: string; key: string }
  | { kind: 'given'; email: string; created: boolean; previousEmail: string | null; keyChanged: boolean }
  | { kind: 'kept' };

/**
 * The operator's sign-in at every start. The operator is the first account. With
 * EDGEPORT_ADMIN_EMAIL and EDGEPORT_ADMIN_KEY, it is made on the first start, and on later starts its
 * e-mail and key are brought in line with the variables (never a second account: a later start with
 * another e-mail renames the operator, keeping its zones, buckets and keys). Without them, an account
 * is generated only when none exists, and its credentials are returned to be printed once.
 */
export async function ensureBootstrapAccount(
  control: ControlStore,
  env: NodeJS.ProcessEnv,
  options: { scrypt: ScryptThread; clock?: Clock },
): Promise<BootstrapOutcome> {
  const { scrypt, clock = systemClock } = options;
  const email = env.EDGEPORT_ADMIN_EMAIL || undefined;
  const key = env.EDGEPORT_ADMIN_KEY || undefined;
  if ((email === undefined) !== (key === undefined)) throw new AccountError('ACCOUNT_ADMIN_ENV_INCOMPLETE');
  if (email !== undefined && key !== undefined) return followAdminEnv(control, email, key, { scrypt, clock });
  if ((await control.countAccounts()) > 0) return { kind: 'kept' };
  try {
    const made = await createAccount(control, DEFAULT_ADMIN_EMAIL, { clock, scrypt });
    return { kind: 'generated', email: made.account.email, key: made.key };
  } catch (error) {
    // Another instance sharing the database made it first: its banner shows the key.
    if (error instanceof AccountError && error.code === 'ACCOUNT_EXISTS') return { kind: 'kept' };
    throw error;
  }
}

async function followAdminEnv(control: ControlStore, email: string, key: string, options: { scrypt: ScryptThread; clock: Clock }): Promise<BootstrapOutcome> {
  const { scrypt, clock } = options;
  if (!isValidEmail(email)) throw new AccountError('ACCOUNT_EMAIL_INVALID', `EDGEPORT_ADMIN_EMAIL: ${JSON.stringify(email)} is not a valid e-mail address.`);
  if (!isValidApiKey(key)) throw new AccountError('ACCOUNT_KEY_INVALID', `EDGEPORT_ADMIN_KEY: ${ACCOUNT_ERRORS.ACCOUNT_KEY_INVALID.message}`);
  const operator = await control.firstAccount();
  if (!operator) {
    try {
      await createAccount(control, email, { key, clock, scrypt });
      return { kind: 'given', email, created: true, previousEmail: null, keyChanged: false };
    } catch (error) {
      // Another instance sharing the database made it at the same moment: follow it below.
      if (!(error instanceof AccountError && error.code === 'ACCOUNT_EXISTS')) throw error;
    }
    return followAdminEnv(control, email, key, options);
  }
  const sameEmail = operator.email.toLowerCase() === email.toLowerCase();
  const sameKey = await verifyApiKey(key, operator.keyHash, scrypt);
  if (sameEmail && sameKey) return { kind: 'given', email: operator.email, created: false, previousEmail: null, keyChanged: false };
  const keyHash = sameKey ? operator.keyHash : await hashApiKey(key, scrypt);
  if ((await control.setAccountSignIn(operator.id, sameEmail ? operator.email : email, keyHash)) === 'exists') {
    throw new AccountError(
      'ACCOUNT_ADMIN_EMAIL_TAKEN',
      `EDGEPORT_ADMIN_EMAIL is ${email}, the e-mail of another account than the operator (${operator.email}): ` +
        `the operator's sign-in cannot take it. Set EDGEPORT_ADMIN_EMAIL to ${operator.email} or to an unused address, or delete that account first ` +
        `(edgeport accounts delete ${email}).`,
    );
  }
  return { kind: 'given', email: sameEmail ? operator.email : email, created: false, previousEmail: sameEmail ? null : operator.email, keyChanged: !sameKey };
}
