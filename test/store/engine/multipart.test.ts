import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import fc from 'fast-check';
import { StoreError, type StoreErrorCode } from '../../../src/store/engine/errors.ts';
import { checkCompletionChecksum, multipartEtag } from '../../../src/store/engine/multipart.ts';
import { bytes, openTestEngine, readAll } from '../../helpers/engine.ts';

const MiB = 1024 * 1024;
const code = (c: StoreErrorCode) => (e: unknown) => e instanceof StoreError && e.code === c;
const filled = (size: number, seed: number) => new Uint8Array(size).fill(seed);

test('the multipart etag matches the documented test vector', { timeout: 10_000 }, () => {
  assert.equal(multipartEtag(['bce6bf66aeb76c7040fdd5f4eccb78e6', '8165449fc15bbf43d3b674595cbcc406']), 'f77dc0eecdebcd774a2a22cb393ad2ff-2');
});

test('parts of 5 MiB, 5 MiB and 1 MiB complete into one readable object', { timeout: 10_000 }, async (t) => {
  const { engine, bucket } = await openTestEngine(t);
  const id = await engine.createMultipartUpload(bucket, 'mpu', { httpMetadata: { contentType: 'x/y' }, customMetadata: { a: 'b' } });
  const data = [filled(5 * MiB, 1), filled(5 * MiB, 2), filled(MiB, 3)];
  // Uploaded out of order, completed in any order: parts are sorted by number.
  const p3 = await engine.uploadPart(bucket, 'mpu', id, 3, data[2]!);
  const p1 = await engine.uploadPart(bucket, 'mpu', id, 1, data[0]!);
  const p2 = await engine.uploadPart(bucket, 'mpu', id, 2, {
    stream: (async function* () {
      yield data[1]!;
    })(),
  });
  assert.equal(p1.etag, createHash('md5').update(data[0]!).digest('hex'));
  assert.equal(await engine.head(bucket, 'mpu'), null, 'not visible before completion');
  assert.deepEqual(
    (await engine.listParts(bucket, 'mpu', id)).map((p) => p.partNumber),
    [1, 2, 3],
  );
  assert.deepEqual(
    (await engine.listUploads(bucket)).map((u) => u.uploadId),
    [id],
  );
  const done = await engine.completeMultipartUpload(bucket, 'mpu', id, [p2, p3, p1]);
  assert.equal(done.size, 11 * MiB);
  assert.equal(done.etag, multipartEtag([p1.etag, p2.etag, p3.etag]));
  assert.match(done.etag, /-3$/);
  assert.deepEqual(done.checksums, {});
  assert.deepEqual(done.customMetadata, { a: 'b' });
  const got = await engine.get(bucket, 'mpu');
  assert.equal(got?.meta.etag, done.etag);
  assert.ok(Buffer.concat(data).equals(await readAll(got!.body!.stream())));
  const across = await engine.get(bucket, 'mpu', { range: { offset: 5 * MiB - 2, length: 4 } });
  assert.deepEqual([...(await readAll(across!.body!.stream()))], [1, 1, 2, 2]);
  assert.deepEqual(await engine.listUploads(bucket), []);
  await assert.rejects(engine.completeMultipartUpload(bucket, 'mpu', id, [p1]), code('STORE_NO_SUCH_UPLOAD'));
  await engine.abortMultipartUpload(bucket, 'mpu', id);
  assert.ok(await engine.head(bucket, 'mpu'), 'abort after complete keeps the object');
});

test('a wrong or stale etag, an unknown part or a duplicate part is refused', { timeout: 10_000 }, async (t) => {
  const { engine, bucket } = await openTestEngine(t);
  const id = await engine.createMultipartUpload(bucket, 'k');
  const first = await engine.uploadPart(bucket, 'k', id, 1, bytes('one'));
  await engine.uploadPart(bucket, 'k', id, 1, bytes('uno'));
  await assert.rejects(engine.completeMultipartUpload(bucket, 'k', id, [first]), code('STORE_INVALID_PART'));
  await assert.rejects(engine.completeMultipartUpload(bucket, 'k', id, [{ partNumber: 1, etag: 'f'.repeat(32) }]), code('STORE_INVALID_PART'));
  await assert.rejects(engine.completeMultipartUpload(bucket, 'k', id, [{ partNumber: 9, etag: first.etag }]), code('STORE_INVALID_PART'));
  const current = { partNumber: 1, etag: createHash('md5').update('uno').digest('hex') };
  await assert.rejects(engine.completeMultipartUpload(bucket, 'k', id, [current, current]), code('STORE_INTERNAL'));
  // A duplicate is a duplicate whichever copy is stale, and wherever it stands in the list.
  for (const list of [
    [first, current],
    [current, first],
    [first, first],
    [{ partNumber: 9, etag: first.etag }, current, { partNumber: 9, etag: 'x' }],
  ]) {
    await assert.rejects(engine.completeMultipartUpload(bucket, 'k', id, list), code('STORE_INTERNAL'), JSON.stringify(list));
  }
  const done = await engine.completeMultipartUpload(bucket, 'k', id, [{ ...current, etag: `"${current.etag}"` }]);
  assert.equal(done.size, 3);
});

test('small or non-uniform parts are refused at complete', { timeout: 10_000 }, async (t) => {
  const { engine, bucket } = await openTestEngine(t);
  const small = await engine.createMultipartUpload(bucket, 'k');
  const s1 = await engine.uploadPart(bucket, 'k', small, 1, filled(MiB, 1));
  const s2 = await engine.uploadPart(bucket, 'k', small, 2, filled(10, 1));
  await assert.rejects(engine.completeMultipartUpload(bucket, 'k', small, [s1, s2]), code('STORE_ENTITY_TOO_SMALL'));

  const uneven = await engine.createMultipartUpload(bucket, 'k');
  const u1 = await engine.uploadPart(bucket, 'k', uneven, 1, filled(5 * MiB, 1));
  const u2 = await engine.uploadPart(bucket, 'k', uneven, 2, filled(5 * MiB + 1, 1));
  const u3 = await engine.uploadPart(bucket, 'k', uneven, 3, filled(1, 1));
  await assert.rejects(engine.completeMultipartUpload(bucket, 'k', uneven, [u1, u2, u3]), code('STORE_BAD_UPLOAD'));
  await assert.rejects(engine.completeMultipartUpload(bucket, 'k', uneven, [u1, u2]), code('STORE_BAD_UPLOAD'), 'last larger than the others');
  assert.equal(await engine.head(bucket, 'k'), null);
});

test('abort discards the parts; later use of the upload is refused', { timeout: 10_000 }, async (t) => {
  const { engine, bucket, clock, blobIds } = await openTestEngine(t);
  const id = await engine.createMultipartUpload(bucket, 'k');
  const part = await engine.uploadPart(bucket, 'k', id, 1, bytes('x'));
  await engine.abortMultipartUpload(bucket, 'k', id);
  await engine.abortMultipartUpload(bucket, 'k', id);
  await assert.rejects(engine.uploadPart(bucket, 'k', id, 2, bytes('x')), code('STORE_NO_SUCH_UPLOAD'));
  await assert.rejects(engine.completeMultipartUpload(bucket, 'k', id, [part]), code('STORE_NO_SUCH_UPLOAD'));
  await assert.rejects(engine.abortMultipartUpload(bucket, 'k', 'never-existed'), code('STORE_NO_SUCH_UPLOAD'));
  await assert.rejects(engine.uploadPart(bucket, 'other-key', id, 1, bytes('x')), code('STORE_NO_SUCH_UPLOAD'));
  clock.advance(60_001);
  await engine.reclaimBlobs();
  assert.deepEqual(await blobIds(), []);
});

test('an unfinished upload is aborted after 7 days', { timeout: 10_000 }, async (t) => {
  const { engine, bucket, clock } = await openTestEngine(t);
  const id = await engine.createMultipartUpload(bucket, 'k');
  const part = await engine.uploadPart(bucket, 'k', id, 1, bytes('x'));
  clock.advance(7 * 24 * 3600 * 1000 - 1);
  await engine.uploadPart(bucket, 'k', id, 2, bytes('y'));
  assert.equal(await engine.expireUploads(), 0);
  clock.advance(2);
  await assert.rejects(engine.uploadPart(bucket, 'k', id, 3, bytes('z')), code('STORE_NO_SUCH_UPLOAD'));
  await assert.rejects(engine.completeMultipartUpload(bucket, 'k', id, [part]), code('STORE_NO_SUCH_UPLOAD'));
  assert.deepEqual(await engine.listUploads(bucket), []);
  assert.equal(await engine.expireUploads(), 1);
});

test('a completed multipart object replaces an existing key; zero parts give the empty etag', { timeout: 10_000 }, async (t) => {
  const { engine, bucket } = await openTestEngine(t);
  await engine.put(bucket, 'k', bytes('old'));
  const id = await engine.createMultipartUpload(bucket, 'k');
  const done = await engine.completeMultipartUpload(bucket, 'k', id, []);
  assert.equal(done.etag, 'd41d8cd98f00b204e9800998ecf8427e-0');
  const got = await engine.get(bucket, 'k');
  assert.equal(got?.meta.size, 0);
  assert.equal((await readAll(got!.body!.stream())).length, 0);
});

test('a completion sent again answers the same object, across a restart, for a day, while that object is current', { timeout: 20_000 }, async (t) => {
  const first = await openTestEngine(t);
  const { bucket } = first;
  const id = await first.engine.createMultipartUpload(bucket, 'again');
  const part = await first.engine.uploadPart(bucket, 'again', id, 1, bytes('only part'));
  const made = await first.engine.completeMultipartUpload(bucket, 'again', id, [part]);

  // The record is in the metadata, not the process: another engine on the same data (as after a restart) answers the repeat the same.
  const second = await openTestEngine(t, { dataDir: first.dataDir });
  const { engine, clock } = second;
  clock.set(first.clock.now());
  const repeat = { answerRepeat: true };
  assert.deepEqual(
    await engine.completeMultipartUpload(bucket, 'again', id, [{ ...part, etag: `"${part.etag}"` }], repeat),
    made,
    'quoted etags are the same parts',
  );
  // Without answerRepeat (the binding, as the real one), a completed upload is gone.
  await assert.rejects(engine.completeMultipartUpload(bucket, 'again', id, [part]), code('STORE_NO_SUCH_UPLOAD'));
  // Another parts list is another request: the upload is gone.
  await assert.rejects(engine.completeMultipartUpload(bucket, 'again', id, [{ partNumber: 1, etag: 'f'.repeat(32) }], repeat), code('STORE_NO_SUCH_UPLOAD'));
  await assert.rejects(engine.completeMultipartUpload(bucket, 'again', id, [part, { partNumber: 2, etag: part.etag }], repeat), code('STORE_NO_SUCH_UPLOAD'));
  await assert.rejects(engine.completeMultipartUpload(bucket, 'elsewhere', id, [part], repeat), code('STORE_NO_SUCH_UPLOAD'));
  await assert.rejects(engine.uploadPart(bucket, 'again', id, 2, bytes('late')), code('STORE_NO_SUCH_UPLOAD'), 'a completed upload takes no parts');

  // Maintenance within the day keeps the record; past it, it is forgotten.
  clock.advance(23 * 3600_000);
  await engine.expireUploads();
  assert.deepEqual(await engine.completeMultipartUpload(bucket, 'again', id, [part], repeat), made);
  clock.advance(3600_000 + 1);
  assert.deepEqual(
    await engine.completeMultipartUpload(bucket, 'again', id, [part], repeat).catch((e: unknown) => e instanceof StoreError && e.code),
    'STORE_NO_SUCH_UPLOAD',
    'past a day, even before maintenance',
  );
  await engine.expireUploads();
  assert.equal(await engine.metadata.getUpload(bucket, 'again', id), null, 'maintenance forgot it');
});

test('a completion sent again after its object was overwritten or deleted is NoSuchUpload', { timeout: 10_000 }, async (t) => {
  const { engine, bucket } = await openTestEngine(t);
  for (const change of ['overwrite', 'delete', 'complete again into a new object'] as const) {
    const id = await engine.createMultipartUpload(bucket, change);
    const part = await engine.uploadPart(bucket, change, id, 1, bytes('x'));
    await engine.completeMultipartUpload(bucket, change, id, [part]);
    if (change === 'overwrite') await engine.put(bucket, change, bytes('newer'));
    else if (change === 'delete') await engine.delete(bucket, [change]);
    else {
      const other = await engine.createMultipartUpload(bucket, change);
      await engine.completeMultipartUpload(bucket, change, other, [await engine.uploadPart(bucket, change, other, 1, bytes('x'))]);
    }
    await assert.rejects(engine.completeMultipartUpload(bucket, change, id, [part], { answerRepeat: true }), code('STORE_NO_SUCH_UPLOAD'), change);
  }
  // An aborted upload never answers a completion.
  const aborted = await engine.createMultipartUpload(bucket, 'aborted');
  const part = await engine.uploadPart(bucket, 'aborted', aborted, 1, bytes('x'));
  await engine.abortMultipartUpload(bucket, 'aborted', aborted);
  await assert.rejects(engine.completeMultipartUpload(bucket, 'aborted', aborted, [part], { answerRepeat: true }), code('STORE_NO_SUCH_UPLOAD'));
});

test('a stated completion checksum matches exactly the COMPOSITE checksum it names, with or without its part count', { timeout: 10_000 }, () => {
  const digest = fc.uint8Array({ minLength: 4, maxLength: 32 }).map((bytes) => Buffer.from(bytes).toString('hex'));
  fc.assert(
    fc.property(digest, digest, fc.integer({ min: 1, max: 10_000 }), fc.integer({ min: 1, max: 10_000 }), (actual, other, parts, otherParts) => {
      const stored = `${actual}-${parts}`;
      const ok = (expected: { hex: string; parts?: number }) => {
        try {
          checkCompletionChecksum({ algorithm: 'sha256', ...expected }, stored);
          return true;
        } catch (error) {
          assert.ok(error instanceof StoreError && error.code === 'STORE_BAD_DIGEST');
          return false;
        }
      };
      assert.equal(ok({ hex: actual }), true);
      assert.equal(ok({ hex: actual, parts }), true);
      assert.equal(ok({ hex: other }), other === actual);
      assert.equal(ok({ hex: actual, parts: otherParts }), otherParts === parts);
      assert.throws(() => checkCompletionChecksum({ algorithm: 'sha256', hex: actual }, undefined), code('STORE_BAD_DIGEST'), 'no checksum to check against');
      checkCompletionChecksum(undefined, stored);
    }),
  );
});
