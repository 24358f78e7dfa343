import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import fc from 'fast-check';
import { createOffThreadDigest } from '../../src/core/crypto/off-thread-digest.ts';

const hex = (algorithm: string, data: Uint8Array) => createHash(algorithm).update(data).digest('hex');

function pattern(size: number, seed: number): Uint8Array {
  const out = new Uint8Array(size);
  for (let i = 0; i < size; i++) out[i] = (i * seed + (i >>> 9)) & 0xff;
  return out;
}

test('property: any chunking through one reused buffer gives the digests node:crypto gives', { timeout: 10_000 }, async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(fc.integer({ min: 0, max: 600_000 }), { maxLength: 10 }), fc.integer({ min: 1, max: 250 }), async (sizes, seed) => {
      const data = pattern(
        sizes.reduce((a, b) => a + b, 0),
        seed,
      );
      const digest = createOffThreadDigest(['md5', 'sha256']);
      const scratch = new Uint8Array(Math.max(1, ...sizes));
      let at = 0;
      for (const size of sizes) {
        scratch.set(data.subarray(at, at + size));
        await digest.update(scratch.subarray(0, size));
        scratch.fill(0xee); // the digest copied the bytes: reusing the buffer changes nothing
        at += size;
      }
      assert.deepEqual(await digest.digest(), [hex('md5', data), hex('sha256', data)]);
    }),
    { numRuns: 30 },
  );
});

test('streams hashed at the same time stay apart; a cancelled one does not disturb the others', { timeout: 10_000 }, async () => {
  const a = pattern(3_000_000, 3);
  const b = pattern(2_500_000, 7);
  const da = createOffThreadDigest(['md5']);
  const db = createOffThreadDigest(['sha1']);
  const dropped = createOffThreadDigest(['md5']);
  for (let i = 0; i < 3_000_000; i += 100_000) {
    await da.update(a.subarray(i, i + 100_000));
    if (i < 2_500_000) await db.update(b.subarray(i, i + 100_000));
    if (i < 1_000_000) await dropped.update(b.subarray(i, i + 100_000));
  }
  dropped.cancel();
  assert.deepEqual(await Promise.all([da.digest(), db.digest()]), [[hex('md5', a)], [hex('sha1', b)]]);
});

test('a sender faster than the hashing thread is made to wait: update returns a promise past 4 MiB in flight', { timeout: 10_000 }, async () => {
  const digest = createOffThreadDigest(['sha512']);
  const block = pattern(1024 * 1024, 5);
  const whole = createHash('sha512');
  let waits = 0;
  for (let i = 0; i < 32; i++) {
    const pending = digest.update(block);
    whole.update(block);
    if (pending) {
      waits += 1;
      await pending;
    }
  }
  assert.ok(waits > 0, 'at some point the sender had to wait');
  assert.deepEqual(await digest.digest(), [whole.digest('hex')]);
});
