/**
 * SSE-C through a real listener with the AWS SDK: objects stored encrypted with the client's key
 * (never with the key, nor in the clear), read back whole and by any range across the encryption
 * chunks, HeadObject and GetObjectAttributes with the key, copies between keys, multipart uploads
 * and part copies, presigned URLs, and every refusal S3 answers (no key, a wrong key, a key for a
 * plain object, a key whose MD5 does not match, another algorithm).
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { test } from 'node:test';
import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  GetObjectAttributesCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListPartsCommand,
  PutObjectCommand,
  UploadPartCommand,
  UploadPartCopyCommand,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import fc from 'fast-check';
import { CHUNK_BYTES, sealedLength } from '../../../src/store/engine/sse-c.ts';
import { s3ErrorCode as code, startS3 } from './helpers.ts';

const KEY = randomBytes(32);
const OTHER = randomBytes(32);
const md5 = (data: Uint8Array) => createHash('md5').update(data).digest('base64');
const withKey = (key = KEY) => ({ SSECustomerAlgorithm: 'AES256', SSECustomerKey: key as unknown as string });
/** 400 InvalidRequest with S3's message. */
const refused = (message: string) => (error: Error) => {
  assert.ok(code('InvalidRequest', 400)(error));
  assert.equal(error.message, message);
  return true;
};
const status = (expected: number) => (error: Error & { $metadata?: { httpStatusCode?: number } }) => error.$metadata?.httpStatusCode === expected;

test('PutObject with SSE-C stores the bytes encrypted; GetObject and HeadObject need the key; a wrong key is 403, none 400', { timeout: 20_000 }, async (t) => {
  const { client, bucket, engine, blobIds } = await startS3(t);
  const body = randomBytes(3 * CHUNK_BYTES + 1234);
  const put = await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'secret.bin', Body: body, ContentType: 'application/x-secret', ...withKey() }));
  assert.deepEqual([put.SSECustomerAlgorithm, put.SSECustomerKeyMD5], ['AES256', md5(KEY)]);
  assert.notEqual(put.ETag, `"${createHash('md5').update(body).digest('hex')}"`, 'the etag tells nothing of the content');
  const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'secret.bin', ...withKey() }));
  assert.deepEqual(
    [got.SSECustomerAlgorithm, got.SSECustomerKeyMD5, got.ContentType, got.ContentLength],
    ['AES256', md5(KEY), 'application/x-secret', body.length],
  );
  assert.ok(Buffer.from(await got.Body!.transformToByteArray()).equals(body));
  const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'secret.bin', ...withKey() }));
  assert.deepEqual([head.ContentLength, head.SSECustomerKeyMD5], [body.length, md5(KEY)]);

  await assert.rejects(client.send(new GetObjectCommand({ Bucket: bucket, Key: 'secret.bin' })), code('InvalidRequest', 400));
  await assert.rejects(client.send(new GetObjectCommand({ Bucket: bucket, Key: 'secret.bin', ...withKey(OTHER) })), code('AccessDenied', 403));
  await assert.rejects(client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'secret.bin' })), status(400));
  await assert.rejects(client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'secret.bin', ...withKey(OTHER) })), status(403));
  // A key for an object stored without one.
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'plain.txt', Body: 'plain' }));
  await assert.rejects(client.send(new GetObjectCommand({ Bucket: bucket, Key: 'plain.txt', ...withKey() })), code('InvalidRequest', 400));
  await assert.rejects(client.send(new GetObjectCommand({ Bucket: bucket, Key: 'missing', ...withKey() })), code('NoSuchKey', 404));

  // Stored: neither the plaintext nor the key, in any blob (read where they live: files, or a remote store).
  const stored: Buffer[] = [];
  for (const blobId of await blobIds()) {
    const chunks: Uint8Array[] = [];
    // The one blob is the secret's (the small object is kept in its row): its sealed length.
    for await (const chunk of engine.readBlob(blobId, 0, sealedLength(body.length))) chunks.push(chunk);
    stored.push(Buffer.concat(chunks));
  }
  assert.equal(stored.length, 1);
  for (const file of stored) {
    assert.equal(file.includes(body.subarray(0, 64)), false, 'no plaintext in a blob');
    assert.equal(file.includes(KEY), false, 'no key in a blob');
  }
  const usage = await engine.accountUsage(null);
  assert.equal(usage.objectBytes, body.length + 5, 'usage counts the plaintext size');
});

test('property: any range of an SSE-C object, across and within the encryption chunks, reads exactly those bytes', { timeout: 60_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  const body = randomBytes(3 * CHUNK_BYTES + 777);
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'ranged', Body: body, ...withKey() }));
  const read = async (Range: string) =>
    Buffer.from(await (await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'ranged', Range, ...withKey() }))).Body!.transformToByteArray());
  // Chunk edges exactly.
  for (const [from, to] of [
    [0, 0],
    [CHUNK_BYTES - 1, CHUNK_BYTES],
    [CHUNK_BYTES, 2 * CHUNK_BYTES - 1],
    [CHUNK_BYTES - 5, 3 * CHUNK_BYTES + 5],
    [body.length - 1, body.length - 1],
  ]) {
    assert.ok((await read(`bytes=${from}-${to}`)).equals(body.subarray(from!, to! + 1)), `${from}-${to}`);
  }
  assert.ok((await read('bytes=-1000')).equals(body.subarray(body.length - 1000)));
  assert.ok((await read(`bytes=${2 * CHUNK_BYTES + 3}-`)).equals(body.subarray(2 * CHUNK_BYTES + 3)));
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: 0, max: body.length - 1 }), fc.integer({ min: 1, max: 2 * CHUNK_BYTES }), async (from, length) => {
      const to = Math.min(body.length - 1, from + length - 1);
      assert.ok((await read(`bytes=${from}-${to}`)).equals(body.subarray(from, to + 1)));
    }),
    { numRuns: 40 },
  );
});

test('CopyObject: from an SSE-C source with its key, to another key, to plain and from plain; without the source key 400', { timeout: 20_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  const body = randomBytes(CHUNK_BYTES + 10);
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'source', Body: body, ...withKey() }));
  const source = { CopySourceSSECustomerAlgorithm: 'AES256', CopySourceSSECustomerKey: KEY as unknown as string };
  await assert.rejects(client.send(new CopyObjectCommand({ Bucket: bucket, Key: 'nope', CopySource: `${bucket}/source` })), code('InvalidRequest', 400));
  const rekeyed = await client.send(new CopyObjectCommand({ Bucket: bucket, Key: 'rekeyed', CopySource: `${bucket}/source`, ...source, ...withKey(OTHER) }));
  assert.equal(rekeyed.SSECustomerKeyMD5, md5(OTHER));
  const readBack = async (Key: string, key?: typeof KEY) =>
    Buffer.from(await (await client.send(new GetObjectCommand({ Bucket: bucket, Key, ...(key ? withKey(key) : {}) }))).Body!.transformToByteArray());
  assert.ok((await readBack('rekeyed', OTHER)).equals(body));
  await client.send(new CopyObjectCommand({ Bucket: bucket, Key: 'clear', CopySource: `${bucket}/source`, ...source }));
  assert.ok((await readBack('clear')).equals(body));
  await client.send(new CopyObjectCommand({ Bucket: bucket, Key: 'sealed-again', CopySource: `${bucket}/clear`, ...withKey() }));
  assert.ok((await readBack('sealed-again', KEY)).equals(body));
  // In place: a new key for the same object.
  await client.send(new CopyObjectCommand({ Bucket: bucket, Key: 'source', CopySource: `${bucket}/source`, ...source, ...withKey(OTHER) }));
  assert.ok((await readBack('source', OTHER)).equals(body));
});

test(
  "multipart with SSE-C: every part needs the upload's key (400 without it or with another); the object reads back across parts and chunks; part copy from an SSE-C source",
  { timeout: 30_000 },
  async (t) => {
    const { client, bucket } = await startS3(t);
    const MiB = 1024 * 1024;
    const parts = [randomBytes(5 * MiB), randomBytes(CHUNK_BYTES * 2 + 99)];
    const created = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'big', ...withKey() }));
    assert.deepEqual([created.SSECustomerAlgorithm, created.SSECustomerKeyMD5], ['AES256', md5(KEY)]);
    const UploadId = created.UploadId!;
    // A part without the upload's key, or with another: 400 InvalidRequest in S3's words (not the 403 of a read).
    await assert.rejects(
      client.send(new UploadPartCommand({ Bucket: bucket, Key: 'big', UploadId, PartNumber: 1, Body: parts[0] })),
      refused('The multipart upload initiate requested encryption. Subsequent part requests must include the appropriate encryption parameters.'),
    );
    await assert.rejects(
      client.send(new UploadPartCommand({ Bucket: bucket, Key: 'big', UploadId, PartNumber: 1, Body: parts[0], ...withKey(OTHER) })),
      refused('The provided encryption parameters did not match the ones used originally.'),
    );
    const one = await client.send(new UploadPartCommand({ Bucket: bucket, Key: 'big', UploadId, PartNumber: 1, Body: parts[0], ...withKey() }));
    assert.equal(one.SSECustomerKeyMD5, md5(KEY));
    assert.notEqual(one.ETag, `"${createHash('md5').update(parts[0]!).digest('hex')}"`, "a part's etag tells nothing of its content either");
    // A part sent again with the same bytes (a client's retry) keeps its etag, as S3's MD5 etags do.
    const again = await client.send(new UploadPartCommand({ Bucket: bucket, Key: 'big', UploadId, PartNumber: 1, Body: parts[0], ...withKey() }));
    assert.equal(again.ETag, one.ETag);
    // Part 2 copied from an SSE-C object under another key.
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'tail', Body: parts[1], ...withKey(OTHER) }));
    const copyTail = { Bucket: bucket, Key: 'big', UploadId, PartNumber: 2, CopySource: `${bucket}/tail` };
    const tailKey = { CopySourceSSECustomerAlgorithm: 'AES256', CopySourceSSECustomerKey: OTHER as unknown as string };
    // The source's key where the upload's belongs, or none: refused as for UploadPart.
    await assert.rejects(
      client.send(new UploadPartCopyCommand({ ...copyTail, ...tailKey, ...withKey(OTHER) })),
      refused('The provided encryption parameters did not match the ones used originally.'),
    );
    await assert.rejects(
      client.send(new UploadPartCopyCommand({ ...copyTail, ...tailKey })),
      refused('The multipart upload initiate requested encryption. Subsequent part requests must include the appropriate encryption parameters.'),
    );
    // A wrong key for the source itself is a read's refusal.
    await assert.rejects(
      client.send(
        new UploadPartCopyCommand({ ...copyTail, CopySourceSSECustomerAlgorithm: 'AES256', CopySourceSSECustomerKey: KEY as unknown as string, ...withKey() }),
      ),
      code('AccessDenied', 403),
    );
    const two = await client.send(
      new UploadPartCopyCommand({
        Bucket: bucket,
        Key: 'big',
        UploadId,
        PartNumber: 2,
        CopySource: `${bucket}/tail`,
        CopySourceSSECustomerAlgorithm: 'AES256',
        CopySourceSSECustomerKey: OTHER as unknown as string,
        ...withKey(),
      }),
    );
    const completion = {
      Bucket: bucket,
      Key: 'big',
      UploadId,
      MultipartUpload: {
        Parts: [
          { PartNumber: 1, ETag: one.ETag },
          { PartNumber: 2, ETag: two.CopyPartResult!.ETag },
        ],
      },
    };
    // A completion given another key is refused as a part would be, and completes nothing.
    await assert.rejects(
      client.send(new CompleteMultipartUploadCommand({ ...completion, ...withKey(OTHER) })),
      refused('The provided encryption parameters did not match the ones used originally.'),
    );
    const done = await client.send(new CompleteMultipartUploadCommand({ ...completion, ...withKey() }));
    assert.equal(done.$metadata.httpStatusCode, 200);
    const whole = Buffer.concat(parts);
    const all = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'big', ...withKey() }));
    assert.equal(all.SSECustomerKeyMD5, md5(KEY), "the object keeps the upload's key");
    assert.ok(Buffer.from(await all.Body!.transformToByteArray()).equals(whole));
    const edge = 5 * MiB;
    const ranged = await client.send(
      new GetObjectCommand({ Bucket: bucket, Key: 'big', Range: `bytes=${edge - 100}-${edge + CHUNK_BYTES + 5}`, ...withKey() }),
    );
    assert.ok(Buffer.from(await ranged.Body!.transformToByteArray()).equals(whole.subarray(edge - 100, edge + CHUNK_BYTES + 6)));
    const part2 = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'big', PartNumber: 2, ...withKey() }));
    assert.ok(Buffer.from(await part2.Body!.transformToByteArray()).equals(parts[1]!));
    await assert.rejects(client.send(new GetObjectCommand({ Bucket: bucket, Key: 'big' })), code('InvalidRequest', 400));
    const attributes = await client.send(new GetObjectAttributesCommand({ Bucket: bucket, Key: 'big', ObjectAttributes: ['ObjectSize'], ...withKey() }));
    assert.equal(attributes.ObjectSize, whole.length);
    // A key for an upload created without one.
    const plain = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'plain' }));
    await assert.rejects(
      client.send(new UploadPartCommand({ Bucket: bucket, Key: 'plain', UploadId: plain.UploadId, PartNumber: 1, Body: 'x', ...withKey() })),
      code('InvalidRequest', 400),
    );
  },
);

test(
  'CompleteMultipartUpload of an SSE-C upload needs its key when the upload has a checksum algorithm (400, nothing completed), as on S3; not without one',
  { timeout: 20_000 },
  async (t) => {
    const { client, bucket } = await startS3(t);
    const body = randomBytes(CHUNK_BYTES + 7);
    const created = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'summed', ChecksumAlgorithm: 'CRC32', ...withKey() }));
    const UploadId = created.UploadId!;
    const part = await client.send(
      new UploadPartCommand({ Bucket: bucket, Key: 'summed', UploadId, PartNumber: 1, Body: body, ChecksumAlgorithm: 'CRC32', ...withKey() }),
    );
    assert.ok(part.ChecksumCRC32, 'the upload keeps the part checksum');
    const completion = {
      Bucket: bucket,
      Key: 'summed',
      UploadId,
      MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag, ChecksumCRC32: part.ChecksumCRC32 }] },
    };
    await assert.rejects(
      client.send(new CompleteMultipartUploadCommand(completion)),
      refused(
        'The multipart upload initiate requested encryption and a checksum algorithm. The complete request must include the appropriate encryption parameters.',
      ),
    );
    await assert.rejects(
      client.send(new CompleteMultipartUploadCommand({ ...completion, ...withKey(OTHER) })),
      refused('The provided encryption parameters did not match the ones used originally.'),
    );
    // Nothing was completed: the upload is still open and the key has no object.
    const listed = await client.send(new ListPartsCommand({ Bucket: bucket, Key: 'summed', UploadId }));
    assert.deepEqual(
      listed.Parts?.map((p) => p.PartNumber),
      [1],
    );
    await assert.rejects(client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'summed', ...withKey() })), status(404));
    const done = await client.send(new CompleteMultipartUploadCommand({ ...completion, ...withKey() }));
    assert.equal(done.$metadata.httpStatusCode, 200);
    assert.match(done.ChecksumCRC32 ?? '', /-1$/);
    const read = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'summed', ...withKey() }));
    assert.ok(Buffer.from(await read.Body!.transformToByteArray()).equals(body));

    // Without a checksum algorithm the key stays optional at completion, as on S3.
    const plain = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'unsummed', ...withKey() }));
    const one = await client.send(
      new UploadPartCommand({ Bucket: bucket, Key: 'unsummed', UploadId: plain.UploadId, PartNumber: 1, Body: body, ...withKey() }),
    );
    const finished = await client.send(
      new CompleteMultipartUploadCommand({
        Bucket: bucket,
        Key: 'unsummed',
        UploadId: plain.UploadId,
        MultipartUpload: { Parts: [{ PartNumber: 1, ETag: one.ETag }] },
      }),
    );
    assert.equal(finished.$metadata.httpStatusCode, 200);
    const readPlain = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'unsummed', ...withKey() }));
    assert.ok(Buffer.from(await readPlain.Body!.transformToByteArray()).equals(body));
  },
);

test('presigned URLs with SSE-C: the key goes as headers with the request, as S3 requires', { timeout: 20_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  const headers = {
    'x-amz-server-side-encryption-customer-algorithm': 'AES256',
    'x-amz-server-side-encryption-customer-key': KEY.toString('base64'),
    'x-amz-server-side-encryption-customer-key-md5': md5(KEY),
  };
  const putUrl = await getSignedUrl(client, new PutObjectCommand({ Bucket: bucket, Key: 'presigned', ...withKey() }), { expiresIn: 300 });
  const put = await fetch(putUrl, { method: 'PUT', body: 'presigned secret', headers });
  assert.equal(put.status, 200, await put.text());
  assert.equal(put.headers.get('x-amz-server-side-encryption-customer-key-md5'), md5(KEY));
  const getUrl = await getSignedUrl(client, new GetObjectCommand({ Bucket: bucket, Key: 'presigned', ...withKey() }), { expiresIn: 300 });
  const got = await fetch(getUrl, { headers });
  assert.equal(await got.text(), 'presigned secret');
  const without = await fetch(getUrl);
  assert.equal(without.status, 403, 'the signature covers the SSE-C headers: a request without them is not the one signed');
});

test('malformed SSE-C headers are refused as S3 refuses them, before anything is stored', { timeout: 20_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  const send = (headers: Record<string, string>) => {
    const command = new PutObjectCommand({ Bucket: bucket, Key: 'refused', Body: 'x' });
    command.middlewareStack.add(
      (next) => async (args) => {
        Object.assign((args.request as { headers: Record<string, string> }).headers, headers);
        return next(args);
      },
      { step: 'build' },
    );
    return client.send(command);
  };
  const algorithm = 'x-amz-server-side-encryption-customer-algorithm';
  const key = 'x-amz-server-side-encryption-customer-key';
  const keyMd5 = 'x-amz-server-side-encryption-customer-key-md5';
  await assert.rejects(send({ [algorithm]: 'AES256' }), code('InvalidArgument', 400), 'no key');
  await assert.rejects(send({ [key]: KEY.toString('base64'), [keyMd5]: md5(KEY) }), code('InvalidArgument', 400), 'no algorithm');
  await assert.rejects(send({ [algorithm]: 'AES128', [key]: KEY.toString('base64'), [keyMd5]: md5(KEY) }), code('InvalidEncryptionAlgorithmError', 400));
  await assert.rejects(
    send({ [algorithm]: 'AES256', [key]: randomBytes(16).toString('base64'), [keyMd5]: md5(KEY) }),
    code('InvalidArgument', 400),
    'a short key',
  );
  await assert.rejects(
    send({ [algorithm]: 'AES256', [key]: KEY.toString('base64'), [keyMd5]: md5(OTHER) }),
    code('InvalidArgument', 400),
    'the MD5 of another key',
  );
  await assert.rejects(send({ [algorithm]: 'AES256', [key]: KEY.toString('base64') }), code('InvalidArgument', 400), 'no MD5');
  await assert.rejects(
    send({ [algorithm]: 'AES256', [key]: KEY.toString('base64'), [keyMd5]: md5(KEY), 'x-amz-server-side-encryption': 'AES256' }),
    code('InvalidArgument', 400),
    'SSE-C with SSE-S3',
  );
  await assert.rejects(client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'refused' })), status(404));
});
