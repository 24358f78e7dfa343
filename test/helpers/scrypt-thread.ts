/** A ScryptThread for a test (API-key hashes), closed when the test ends. */
import type { TestContext } from 'node:test';
import { ScryptThread } from '../../src/core/crypto/scrypt-thread.ts';

export function testScryptThread(t: TestContext, options: { maxQueued?: number } = {}): ScryptThread {
  const thread = new ScryptThread(options);
  t.after(() => thread.close());
  return thread;
}
