/**
 * SSE-C's sealing (src/store/engine/sse-c.ts): any body, fed in any chunking, sealed and then read
 * back by any range, through reads of any piece sizes, gives the plaintext window exactly; a
 * record never holds the key; a wrong key is refused; a tampered chunk never yields its bytes.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import fc from 'fast-check';
import { StoreError } from '../../../src/store/engine/errors.ts';
import { CHUNK_BYTES, newSseC, openRange, openSseC, sealBody, sealedLength } from '../../../src/store/engine/sse-c.ts';

async function collect(source: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of source) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

/** `bytes` as pieces cut at `cuts` (sorted offsets), as a stream or a read would yield them. */
function* pieces(bytes: Uint8Array, cuts: number[]): Iterable<Uint8Array> {
  let at = 0;
  for (const cut of [...cuts.filter((c) => c > 0 && c < bytes.length)].sort((a, b) => a - b)) {
    yield bytes.subarray(at, cut);
    at = cut;
  }
  yield bytes.subarray(at);
}

test('property: sealed in any chunking, any range reads back exactly, through reads of any size', { timeout: 120_000 }, async () => {
  const key = randomBytes(32).toString('hex');
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 0, max: 3 * CHUNK_BYTES + 100 }),
      fc.array(fc.nat(), { maxLength: 6 }),
      fc.array(fc.nat(), { maxLength: 6 }),
      fc.nat(),
      fc.nat(),
      async (size, inputCuts, readCuts, rawOffset, rawLength) => {
        const plain = randomBytes(size);
        const { dataKey } = newSseC(key);
        async function* input() {
          yield* pieces(
            plain,
            inputCuts.map((c) => c % (size + 1)),
          );
        }
        const sealed = sealBody({ stream: input(), length: size }, dataKey, ['md5']);
        const stored = await collect((sealed.body as { stream: AsyncIterable<Uint8Array> }).stream);
        assert.equal(stored.length, sealedLength(size));
        assert.equal(sealed.digests().size, size);
        if (size === 0) return;
        const offset = rawOffset % size;
        const length = 1 + (rawLength % (size - offset));
        const read = (cipherOffset: number, cipherLength: number) =>
          pieces(
            stored.subarray(cipherOffset, cipherOffset + cipherLength),
            readCuts.map((c) => c % (cipherLength + 1)),
          );
        const window = await collect(openRange(dataKey, size, offset, length, read));
        assert.ok(window.equals(plain.subarray(offset, offset + length)), `${size} bytes, ${offset}+${length}`);
      },
    ),
    { numRuns: 150 },
  );
});

test("the record holds a salt, a check and the key's MD5, never the key; another key is refused; a tampered chunk fails", { timeout: 10_000 }, async () => {
  const key = randomBytes(32);
  const { record, dataKey } = newSseC(key.toString('hex'));
  const json = JSON.stringify(record);
  assert.equal(json.includes(key.toString('hex')), false);
  assert.equal(json.includes(key.toString('base64')), false);
  assert.ok(openSseC(record, key.toString('hex')).equals(dataKey));
  assert.throws(
    () => openSseC(record, randomBytes(32).toString('hex')),
    (error: unknown) => error instanceof StoreError && error.code === 'STORE_SSEC_KEY_MISMATCH',
  );
  const plain = randomBytes(CHUNK_BYTES + 10);
  const sealed = sealBody(plain, dataKey, []);
  const stored = await collect((sealed.body as { stream: AsyncIterable<Uint8Array> }).stream);
  stored[20] = stored[20]! ^ 1;
  await assert.rejects(
    collect(openRange(dataKey, plain.length, 0, 10, (o, l) => [stored.subarray(o, o + l)])),
    (error: unknown) => error instanceof StoreError && error.code === 'STORE_INTERNAL',
  );
  // The second chunk is intact and reads; chunks cannot be swapped (each is bound to its index).
  const second = await collect(openRange(dataKey, plain.length, CHUNK_BYTES, 10, (o, l) => [stored.subarray(o, o + l)]));
  assert.ok(second.equals(plain.subarray(CHUNK_BYTES)));
  const swapped = Buffer.concat([stored.subarray(CHUNK_BYTES + 28), stored.subarray(0, CHUNK_BYTES + 28)]);
  await assert.rejects(collect(openRange(dataKey, 10, 0, 10, (o, l) => [swapped.subarray(o, o + l)])));
});
