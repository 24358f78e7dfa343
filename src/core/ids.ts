/** Random identifiers. None of them carries user input, so they are safe as file names. */
import { randomBytes } from 'node:crypto';

/** 32 lowercase hex characters (128 random bits). */
export function randomHexId(): string {
  return randomBytes(16).toString('hex');
}

/** A URL-safe base64 id of `bytes` random bytes. */
export function randomBase64UrlId(bytes = 48): string {
  return randomBytes(bytes).toString('base64url');
}
