/**
 * Taking in a small body of known length from a Node stream (an S3 PUT's request): the bytes (a
 * private copy) and their MD5 when the length matches, STORE_INCOMPLETE_BODY when it does not, the
 * stream's own error when it fails or closes early.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { PassThrough, Readable } from 'node:stream';
import { test } from 'node:test';
import fc from 'fast-check';
import type { BlobStore } from '../../../src/store/blobs/blob-store.ts';
import { ingestBody } from '../../../src/store/engine/ingest.ts';
import { StoreError } from '../../../src/store/engine/errors.ts';

/** No small body may reach the blob store. */
const noBlobs = { createWriter: () => assert.fail('a small body is kept inline') } as unknown as BlobStore;
const OPTIONS = { blobs: noBlobs, inlineMax: 4096, maxSize: 1 << 20 };

test('property: a small body in any chunking is kept inline whole, with its MD5; a length other than declared is incomplete', { timeout: 30_000 }, async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(fc.uint8Array({ maxLength: 600 }), { maxLength: 6 }), fc.integer({ min: -3, max: 3 }), async (chunks, off) => {
      const whole = Buffer.concat(chunks);
      const declared = Math.max(0, whole.length + off);
      const stream = Readable.from(
        chunks.map((chunk) => Buffer.from(chunk)),
        { objectMode: false },
      );
      const taken = ingestBody({ stream, length: declared }, OPTIONS);
      if (declared !== whole.length) {
        await assert.rejects(taken, (error: unknown) => error instanceof StoreError && error.code === 'STORE_INCOMPLETE_BODY');
        return;
      }
      const ingested = await taken;
      assert.deepEqual(Buffer.from(ingested.inline!), whole);
      assert.equal(ingested.size, whole.length);
      assert.equal(ingested.md5, createHash('md5').update(whole).digest('hex'));
    }),
    { numRuns: 200 },
  );
});

test('a stream that fails or closes before its end fails the body with that error; nothing is left listening', { timeout: 10_000 }, async () => {
  const failing = new PassThrough();
  const taken = ingestBody({ stream: failing, length: 10 }, OPTIONS);
  failing.write('12345');
  failing.destroy(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
  await assert.rejects(taken, { code: 'ECONNRESET' });
  assert.equal(failing.listenerCount('data'), 0);

  const closing = new PassThrough();
  const closed = ingestBody({ stream: closing, length: 10 }, OPTIONS);
  closing.write('12345');
  closing.destroy();
  await assert.rejects(closed, { code: 'ERR_STREAM_PREMATURE_CLOSE' });

  const copied = new PassThrough();
  const kept = ingestBody({ stream: copied, length: 4 }, OPTIONS);
  const reused = Buffer.from('abcd');
  copied.end(reused);
  const ingested = await kept;
  reused.fill(0);
  assert.equal(Buffer.from(ingested.inline!).toString(), 'abcd', 'the bytes kept are a copy');
});
