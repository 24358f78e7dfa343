/** Random identifiers. None of them carries user input, so they are safe as file names. */
import { randomBytes, randomFillSync } from 'node:crypto';

/**
 * Random bytes are drawn from the CSPRNG 4 KiB at a time: one call per 16 bytes cost a few percent
 * of a small PUT (every object version takes an id). Each id takes bytes no other id has seen.
 */
const POOL = Buffer.allocUnsafe(4096);
let poolAt = POOL.length;

/** 32 lowercase hex characters (128 random bits). */
export function randomHexId(): string {
  if (poolAt + 16 > POOL.length) {
    randomFillSync(POOL);
    poolAt = 0;
  }
  const id = POOL.toString('hex', poolAt, poolAt + 16);
  poolAt += 16;
  return id;
}

/** A URL-safe base64 id of `bytes` random bytes. */
export function randomBase64UrlId(bytes = 48): string {
  return randomBytes(bytes).toString('base64url');
}
