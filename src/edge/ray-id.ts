/** Ray IDs: 16 lower-case hex characters, random (from a pooled buffer, so one costs no syscall). */
import { randomFillSync } from 'node:crypto';

const POOL = Buffer.allocUnsafe(8 * 1024);
let offset = POOL.length;

export function newRayId(): string {
  if (offset + 8 > POOL.length) {
    randomFillSync(POOL);
    offset = 0;
  }
  offset += 8;
  return POOL.toString('hex', offset - 8, offset);
}
