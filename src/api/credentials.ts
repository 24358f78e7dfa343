/**
 * Account credentials: the formats of `X-Auth-Email` / `X-Auth-Key`, key generation, and key
 * hashing. Keys are stored as scrypt hashes (a salt per key), never in the clear; the CLI and the
 * bootstrap use the same functions as authentication. Every hash runs on a ScryptThread, never on
 * libuv's thread pool, which file I/O needs.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { ScryptThread } from '../core/crypto/scrypt-thread.ts';

/** Cost of the stored hash: about 50 ms of CPU per verification (authentication caches results). */
const SCRYPT = { N: 16384, r: 8, p: 1, keyLength: 32 } as const;

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,189}$/;
/** Printable ASCII without spaces; the real service's keys are 37 hex characters. */
const KEY = /^[\x21-\x7e]{1,256}$/;

export function isValidEmail(email: string): boolean {
  return EMAIL.test(email);
}

export function isValidApiKey(key: string): boolean {
  return KEY.test(key);
}

/** A new API key: 37 lowercase hex characters, like the real service's global API keys. */
export function generateApiKey(): string {
  return randomBytes(19).toString('hex').slice(0, 37);
}

/** The stored form of a key: `scrypt$N$r$p$<salt>$<hash>` (base64), hashed on `thread`. */
export async function hashApiKey(key: string, thread: ScryptThread): Promise<string> {
  const salt = randomBytes(16);
  const hash = await thread.derive(key, salt, SCRYPT);
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64')}$${hash.toString('base64')}`;
}

/**
 * Whether `key` matches a stored hash (constant-time comparison), hashed on `thread` (which may
 * refuse with ScryptBusyError), queued fairly for `client` (a clientKey: the one asking for the
 * check). Malformed hashes never match.
 */
export async function verifyApiKey(key: string, stored: string, thread: ScryptThread, client?: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [N, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  const salt = Buffer.from(parts[4]!, 'base64');
  const expected = Buffer.from(parts[5]!, 'base64');
  if (![N, r, p].every((n) => Number.isSafeInteger(n) && n > 0) || expected.length === 0) return false;
  const actual = await thread.derive(key, salt, { N, r, p, keyLength: expected.length }, client);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** A cache key for a verified (email, key) pair: a hash, so the key itself is not kept in memory. */
export function credentialFingerprint(email: string, key: string): string {
  return createHash('sha256').update(email.toLowerCase()).update('\0').update(key).digest('base64url');
}
