import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import type { S3ServiceException } from '@aws-sdk/client-s3';
import {
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListBucketsCommand,
  ListObjectsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { connect } from 'node:net';
import { Readable } from 'node:stream';
import { createStoreBucket } from '../../../src/store/binding/index.ts';
import { ACCESS_KEY_ID, SECRET, s3ErrorCode, startS3 } from './helpers.ts';
import { s3Error, sendRaw, signRaw } from './raw-signing.ts';

const code = s3ErrorCode;

test('buckets: create, list, head, delete only when empty', { timeout: 10_000 }, async (t) => {
  const { client } = await startS3(t);
  await client.send(new CreateBucketCommand({ Bucket: 'photos' }));
  const listed = await client.send(new ListBucketsCommand({}));
  assert.ok(listed.Buckets?.some((b) => b.Name === 'photos'));
  await client.send(new HeadBucketCommand({ Bucket: 'photos' }));
  await assert.rejects(
    client.send(new HeadBucketCommand({ Bucket: 'nope-bucket' })),
    (e: unknown) => (e as S3ServiceException).$metadata.httpStatusCode === 404,
  );
  await assert.rejects(client.send(new CreateBucketCommand({ Bucket: 'photos' })), code('BucketAlreadyOwnedByYou', 409));
  await client.send(new PutObjectCommand({ Bucket: 'photos', Key: 'a', Body: 'x' }));
  await assert.rejects(client.send(new DeleteBucketCommand({ Bucket: 'photos' })), code('BucketNotEmpty', 409));
  await client.send(new DeleteObjectCommand({ Bucket: 'photos', Key: 'a' }));
  await client.send(new DeleteBucketCommand({ Bucket: 'photos' }));
  await assert.rejects(client.send(new PutObjectCommand({ Bucket: 'photos', Key: 'a', Body: 'x' })), code('NoSuchBucket', 404));
});

test('put and get: body, etag, metadata, storage class, ranges, conditions, overrides', { timeout: 10_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  const body = 'hello from the sdk';
  const put = await client.send(
    new PutObjectCommand({
      Bucket: bucket,
      Key: 'dir/file name+ü.txt',
      Body: body,
      ContentType: 'text/plain',
      CacheControl: 'max-age=60',
      Metadata: { owner: 'tom' },
      StorageClass: 'STANDARD_IA',
    }),
  );
  const md5 = createHash('md5').update(body).digest('hex');
  assert.equal(put.ETag, `"${md5}"`);
  const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'dir/file name+ü.txt' }));
  assert.equal(await got.Body!.transformToString(), body);
  assert.equal(got.ETag, `"${md5}"`);
  assert.equal(got.ContentType, 'text/plain');
  assert.equal(got.CacheControl, 'max-age=60');
  assert.deepEqual(got.Metadata, { owner: 'tom' });
  assert.equal(got.StorageClass, 'STANDARD_IA');
  assert.equal(got.ContentLength, body.length);
  const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'dir/file name+ü.txt' }));
  assert.equal(head.ContentLength, body.length);
  const ranged = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'dir/file name+ü.txt', Range: 'bytes=6-9' }));
  assert.equal(await ranged.Body!.transformToString(), 'from');
  assert.equal(ranged.ContentRange, `bytes 6-9/${body.length}`);
  await assert.rejects(client.send(new GetObjectCommand({ Bucket: bucket, Key: 'dir/file name+ü.txt', Range: 'bytes=999-' })), code('InvalidRange', 416));
  await assert.rejects(client.send(new GetObjectCommand({ Bucket: bucket, Key: 'dir/file name+ü.txt', IfMatch: '"nope"' })), code('PreconditionFailed', 412));
  await assert.rejects(
    client.send(new GetObjectCommand({ Bucket: bucket, Key: 'dir/file name+ü.txt', IfNoneMatch: `"${md5}"` })),
    (e: unknown) => (e as S3ServiceException).$metadata.httpStatusCode === 304,
  );
  const overridden = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'dir/file name+ü.txt', ResponseContentType: 'x/y' }));
  assert.equal(overridden.ContentType, 'x/y');
  await overridden.Body!.transformToString();
  await assert.rejects(client.send(new GetObjectCommand({ Bucket: bucket, Key: 'missing' })), code('NoSuchKey', 404));
  await assert.rejects(
    client.send(new PutObjectCommand({ Bucket: bucket, Key: 'dir/file name+ü.txt', Body: 'new', IfNoneMatch: '*' })),
    code('PreconditionFailed', 412),
  );
});

test('Content-MD5 and checksums are verified; a mismatch stores nothing', { timeout: 10_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  await assert.rejects(
    client.send(new PutObjectCommand({ Bucket: bucket, Key: 'k', Body: 'data', ContentMD5: Buffer.alloc(16).toString('base64') })),
    code('BadDigest', 400),
  );
  await assert.rejects(
    client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'k' })),
    (e: unknown) => (e as S3ServiceException).$metadata.httpStatusCode === 404,
  );
  await assert.rejects(client.send(new PutObjectCommand({ Bucket: bucket, Key: 'k', Body: 'data', ChecksumCRC32: 'AAAAAA==' })), code('BadDigest', 400));
  await client.send(
    new PutObjectCommand({
      Bucket: bucket,
      Key: 'k',
      Body: 'data',
      ContentMD5: createHash('md5').update('data').digest('base64'),
      ChecksumAlgorithm: 'SHA256',
    }),
  );
});

test(
  'a checksum value that cannot be one is InvalidRequest, as S3 answers it; a well-formed one that does not match is BadDigest',
  { timeout: 10_000 },
  async (t) => {
    const { client, bucket, endpoint } = await startS3(t);
    const invalid = (algorithm: string) => (error: unknown) => {
      s3ErrorCode('InvalidRequest', 400)(error);
      assert.equal((error as S3ServiceException).message, `Value for x-amz-checksum-${algorithm} header is invalid.`);
      return true;
    };
    const sha256 = createHash('sha256').update('data').digest();
    // Not base64, the base64 of a digest of another length, base64 that is not written canonically.
    for (const value of ['bad', Buffer.alloc(20).toString('base64'), `${sha256.toString('base64').slice(0, -2)}=`]) {
      await assert.rejects(client.send(new PutObjectCommand({ Bucket: bucket, Key: 'k', Body: 'data', ChecksumSHA256: value })), invalid('sha256'), value);
    }
    await assert.rejects(client.send(new PutObjectCommand({ Bucket: bucket, Key: 'k', Body: 'data', ChecksumCRC32: 'AAAAAAAA' })), invalid('crc32'));
    await assert.rejects(client.send(new PutObjectCommand({ Bucket: bucket, Key: 'k', Body: 'data', ChecksumCRC64NVME: 'bad' })), invalid('crc64nvme'));
    await assert.rejects(
      client.send(new PutObjectCommand({ Bucket: bucket, Key: 'k', Body: 'data', ChecksumSHA256: Buffer.alloc(32).toString('base64') })),
      code('BadDigest', 400),
    );
    await assert.rejects(
      client.send(new PutObjectCommand({ Bucket: bucket, Key: 'k', Body: 'data', ChecksumSHA256: sha256.toString('base64'), ChecksumCRC32: 'AAAAAA==' })),
      (error: unknown) => {
        s3ErrorCode('InvalidRequest', 400)(error);
        assert.match((error as S3ServiceException).message, /Expecting a single x-amz-checksum- header/);
        return true;
      },
    );
    const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'mpu', ChecksumAlgorithm: 'SHA256' }));
    await assert.rejects(
      client.send(new UploadPartCommand({ Bucket: bucket, Key: 'mpu', UploadId, PartNumber: 1, Body: 'data', ChecksumSHA256: 'bad' })),
      invalid('sha256'),
    );
    await assert.rejects(
      client.send(
        new UploadPartCommand({ Bucket: bucket, Key: 'mpu', UploadId, PartNumber: 1, Body: 'data', ChecksumSHA256: Buffer.alloc(32).toString('base64') }),
      ),
      code('BadDigest', 400),
    );
    // In an aws-chunked trailer too.
    const chunked = (value: string) =>
      sendRaw(
        endpoint,
        'PUT',
        `/${bucket}/trailer`,
        signRaw(endpoint, {
          method: 'PUT',
          path: `/${bucket}/trailer`,
          at: new Date(),
          headers: {
            'x-amz-content-sha256': 'STREAMING-UNSIGNED-PAYLOAD-TRAILER',
            'content-encoding': 'aws-chunked',
            'x-amz-decoded-content-length': '4',
            'x-amz-trailer': 'x-amz-checksum-crc32',
          },
        }),
        `4\r\ndata\r\n0\r\nx-amz-checksum-crc32:${value}\r\n\r\n`,
      );
    assert.deepEqual(s3Error(await chunked('bad')), { status: 400, code: 'InvalidRequest', message: 'Value for x-amz-checksum-crc32 header is invalid.' });
    assert.deepEqual(s3Error(await chunked('AAAAAA==')).code, 'BadDigest');
    const crc = await chunked('rfPzYw==');
    assert.equal(crc.status, 200, crc.body);
    assert.equal((await client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'trailer' }))).ContentLength, 4);
    await assert.rejects(
      client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'k' })),
      (e: unknown) => (e as S3ServiceException).$metadata.httpStatusCode === 404,
    );
  },
);

test('flexible checksums: every algorithm verified and stored, returned for whole-object reads, shared with the binding', { timeout: 10_000 }, async (t) => {
  const { client, bucket, engine, endpoint } = await startS3(t);
  const binding = createStoreBucket(engine, bucket, { listHonorsInclude: true });
  const body = Buffer.from('checksummed bytes '.repeat(1000));
  const fields = { CRC32: 'ChecksumCRC32', CRC32C: 'ChecksumCRC32C', CRC64NVME: 'ChecksumCRC64NVME', SHA1: 'ChecksumSHA1', SHA256: 'ChecksumSHA256' } as const;
  for (const [algorithm, field] of Object.entries(fields) as Array<[keyof typeof fields, (typeof fields)[keyof typeof fields]]>) {
    // A Buffer goes with the checksum in a header; a stream as aws-chunked with a trailer. The SDK computes both.
    for (const [shape, data] of [
      ['header', body],
      ['trailer', Readable.from([body.subarray(0, 7000), body.subarray(7000)])],
    ] as const) {
      const key = `${algorithm}-${shape}`;
      const put = await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: data, ChecksumAlgorithm: algorithm, ContentLength: body.length }));
      assert.ok(put[field], `${key}: PutObject answers the checksum`);
      // The SDK asks for checksums on GetObject and verifies the body against the one returned.
      const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      assert.deepEqual([got[field], got.ChecksumType], [put[field], 'FULL_OBJECT'], key);
      assert.equal(await got.Body!.transformToString(), body.toString());
      const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key, ChecksumMode: 'ENABLED' }));
      assert.equal(head[field], put[field]);
    }
    const wrong = Buffer.alloc(algorithm === 'CRC64NVME' ? 8 : algorithm.startsWith('CRC') ? 4 : algorithm === 'SHA1' ? 20 : 32).toString('base64');
    await assert.rejects(client.send(new PutObjectCommand({ Bucket: bucket, Key: `${algorithm}-wrong`, Body: body, [field]: wrong })), code('BadDigest', 400));
    await assert.rejects(
      client.send(new HeadObjectCommand({ Bucket: bucket, Key: `${algorithm}-wrong` })),
      (e: unknown) => (e as S3ServiceException).$metadata.httpStatusCode === 404,
    );
  }
  // Ranges and reads that do not ask get no checksum.
  const ranged = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'CRC32C-header', Range: 'bytes=0-9', ChecksumMode: 'ENABLED' }));
  assert.deepEqual([ranged.ChecksumCRC32C, await ranged.Body!.transformToString()], [undefined, 'checksumme']);
  const plain = new S3Client({
    endpoint,
    region: 'auto',
    forcePathStyle: true,
    credentials: { accessKeyId: ACCESS_KEY_ID, secretAccessKey: SECRET },
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  t.after(() => plain.destroy());
  const unasked = await plain.send(new GetObjectCommand({ Bucket: bucket, Key: 'CRC32C-header' }));
  assert.deepEqual([unasked.ChecksumCRC32C, unasked.ChecksumType], [undefined, undefined]);
  await unasked.Body!.transformToString();

  // SHA-1 and SHA-256 are the binding's checksums too, in both directions; the CRCs stay S3's own.
  const sha256 = createHash('sha256').update(body).digest();
  assert.equal((await binding.head('SHA256-header'))!.checksums.toJSON().sha256, sha256.toString('hex'));
  assert.deepEqual(Object.keys((await binding.head('CRC64NVME-header'))!.checksums.toJSON()), ['md5']);
  assert.equal((await binding.head('CRC64NVME-header'))!.checksums.sha256, undefined);
  const sha1 = createHash('sha1').update('from a script').digest('hex');
  await binding.put('script-sha1', 'from a script', { sha1 });
  const fromScript = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'script-sha1' }));
  assert.equal(fromScript.ChecksumSHA1, Buffer.from(sha1, 'hex').toString('base64'));
  assert.equal(await fromScript.Body!.transformToString(), 'from a script');
});

test('list v2 and v1 with prefix, delimiter, pagination; delete many', { timeout: 10_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  const keys = ['a/1', 'a/2', 'a/b/3', 'c', 'd/4'];
  for (const key of keys) await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: key }));
  const root = await client.send(new ListObjectsV2Command({ Bucket: bucket, Delimiter: '/' }));
  assert.deepEqual(
    root.Contents?.map((o) => o.Key),
    ['c'],
  );
  assert.deepEqual(
    root.CommonPrefixes?.map((p) => p.Prefix),
    ['a/', 'd/'],
  );
  const seen: string[] = [];
  let token: string | undefined;
  do {
    const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, MaxKeys: 2, ...(token ? { ContinuationToken: token } : {}) }));
    seen.push(...(page.Contents ?? []).map((o) => o.Key!));
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  assert.deepEqual(seen, keys);
  const after = await client.send(new ListObjectsV2Command({ Bucket: bucket, StartAfter: 'a/b/3' }));
  assert.deepEqual(
    after.Contents?.map((o) => o.Key),
    ['c', 'd/4'],
  );
  const v1 = await client.send(new ListObjectsCommand({ Bucket: bucket, Prefix: 'a/', Delimiter: '/', MaxKeys: 1 }));
  assert.deepEqual(
    v1.Contents?.map((o) => o.Key),
    ['a/1'],
  );
  assert.equal(v1.IsTruncated, true);
  const v1next = await client.send(new ListObjectsCommand({ Bucket: bucket, Prefix: 'a/', Delimiter: '/', Marker: 'a/1' }));
  assert.deepEqual(
    v1next.Contents?.map((o) => o.Key),
    ['a/2'],
  );
  assert.deepEqual(
    v1next.CommonPrefixes?.map((p) => p.Prefix),
    ['a/b/'],
  );
  const deleted = await client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys.map((Key) => ({ Key })) } }));
  assert.equal(deleted.Deleted?.length, 5);
  assert.equal((await client.send(new ListObjectsV2Command({ Bucket: bucket }))).KeyCount, 0);
});

test('keys with spaces at either end, CR/LF, quotes and control characters list and delete exactly', { timeout: 10_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  const odd = [' lead and trail ', 'cr\rlf\n', 'tab\tx', 'q"uote\'s', 'bell\u0007', 'amp&lt;'];
  // Each has a look-alike a trimming or non-decoding server would hit instead.
  const lookAlikes = ['lead and trail', 'cr\nlf\n', 'amp<'];
  for (const Key of [...odd, ...lookAlikes]) await client.send(new PutObjectCommand({ Bucket: bucket, Key, Body: Key }));
  const listed = await client.send(new ListObjectsV2Command({ Bucket: bucket }));
  assert.deepEqual(listed.Contents?.map((c) => c.Key).sort(), [...odd, ...lookAlikes].sort());
  const v1 = await client.send(new ListObjectsCommand({ Bucket: bucket, Prefix: 'cr' }));
  assert.deepEqual(v1.Contents?.map((c) => c.Key).sort(), ['cr\nlf\n', 'cr\rlf\n']);
  const deleted = await client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: odd.map((Key) => ({ Key })) } }));
  assert.deepEqual(
    deleted.Deleted?.map((d) => d.Key),
    odd,
  );
  const left = await client.send(new ListObjectsV2Command({ Bucket: bucket }));
  assert.deepEqual(left.Contents?.map((c) => c.Key).sort(), lookAlikes.sort());
});

test('authentication: wrong secret, unknown key, unsigned, presigned GET/PUT and expiry', { timeout: 10_000 }, async (t) => {
  const { client, bucket, endpoint } = await startS3(t);
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'k', Body: 'secret' }));
  const wrongSecret = new S3Client({ endpoint, region: 'auto', forcePathStyle: true, credentials: { accessKeyId: ACCESS_KEY_ID, secretAccessKey: 'wrong' } });
  t.after(() => wrongSecret.destroy());
  await assert.rejects(wrongSecret.send(new GetObjectCommand({ Bucket: bucket, Key: 'k' })), code('SignatureDoesNotMatch', 403));
  const unknown = new S3Client({ endpoint, region: 'auto', forcePathStyle: true, credentials: { accessKeyId: 'NOPE', secretAccessKey: 'x' } });
  t.after(() => unknown.destroy());
  await assert.rejects(unknown.send(new GetObjectCommand({ Bucket: bucket, Key: 'k' })), code('InvalidAccessKeyId', 403));
  const anonymous = await fetch(`${endpoint}/${bucket}/k`);
  assert.equal(anonymous.status, 403);
  assert.match(await anonymous.text(), /<Code>AccessDenied<\/Code>/);

  const getUrl = await getSignedUrl(client, new GetObjectCommand({ Bucket: bucket, Key: 'k' }), { expiresIn: 60 });
  const viaUrl = await fetch(getUrl);
  assert.equal(viaUrl.status, 200);
  assert.equal(await viaUrl.text(), 'secret');
  const putUrl = await getSignedUrl(client, new PutObjectCommand({ Bucket: bucket, Key: 'uploaded' }), { expiresIn: 60 });
  assert.equal((await fetch(putUrl, { method: 'PUT', body: 'via presigned put' })).status, 200);
  const check = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'uploaded' }));
  assert.equal(await check.Body!.transformToString(), 'via presigned put');
  const tampered = getUrl.replace('/k?', '/uploaded?');
  assert.equal((await fetch(tampered)).status, 403);
  const expired = await getSignedUrl(client, new GetObjectCommand({ Bucket: bucket, Key: 'k' }), { expiresIn: 1, signingDate: new Date(Date.now() - 10_000) });
  const expiredResponse = await fetch(expired);
  assert.equal(expiredResponse.status, 403);
  assert.match(await expiredResponse.text(), /Request has expired/);
});

/** Sends one raw HTTP/1.1 request, in the given pieces (a pause between them), and returns the status line. */
async function rawRequest(url: URL, pieces: Buffer[]): Promise<string> {
  const socket = connect(Number(url.port), url.hostname);
  let answer = '';
  socket.on('data', (data: Buffer) => {
    answer += data.toString('latin1');
  });
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  for (const [i, piece] of pieces.entries()) {
    if (i > 0) await new Promise((resolve) => setTimeout(resolve, 30));
    socket.write(piece);
  }
  await new Promise<void>((resolve) => socket.once('close', resolve));
  return answer.split('\r\n')[0]!;
}

test('a presigned PUT stores its exact bytes, whether the body came whole with its headers or in pieces later', { timeout: 10_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  const cases: Array<[string, Buffer, (head: Buffer, body: Buffer) => Buffer[]]> = [
    ['one packet', Buffer.from('small body, all in the first packet'), (head, body) => [Buffer.concat([head, body])]],
    ['empty', Buffer.alloc(0), (head) => [head]],
    ['headers, then the body', Buffer.from('sent after the headers'), (head, body) => [head, body]],
    ['half, then half', Buffer.alloc(10_000, 7), (head, body) => [Buffer.concat([head, body.subarray(0, 5_000)]), body.subarray(5_000)]],
    ['over 64 KiB', Buffer.alloc(64 * 1024 + 1, 9), (head, body) => [Buffer.concat([head, body])]],
  ];
  for (const [label, body, split] of cases) {
    const key = `raw-${label}`;
    const url = new URL(await getSignedUrl(client, new PutObjectCommand({ Bucket: bucket, Key: key }), { expiresIn: 60 }));
    const head = Buffer.from(
      `PUT ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Length: ${body.byteLength}\r\nConnection: close\r\n\r\n`,
      'latin1',
    );
    assert.equal(await rawRequest(url, split(head, body)), 'HTTP/1.1 200 OK', label);
    const stored = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    assert.deepEqual(Buffer.from(await stored.Body!.transformToByteArray()), body, label);
    assert.equal(stored.ETag, `"${createHash('md5').update(body).digest('hex')}"`, label);
  }
  // Framed by chunks, not a length: read as a stream, all of it, even with a decoded length declared.
  const url = new URL(await getSignedUrl(client, new PutObjectCommand({ Bucket: bucket, Key: 'raw-chunked' }), { expiresIn: 60 }));
  const chunked = `PUT ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nTransfer-Encoding: chunked\r\nx-amz-decoded-content-length: 5\r\nConnection: close\r\n\r\n5\r\nfirst\r\n6\r\n-extra\r\n0\r\n\r\n`;
  assert.equal(await rawRequest(url, [Buffer.from(chunked, 'latin1')]), 'HTTP/1.1 400 Bad Request', 'more than the declared length is refused');
  assert.equal(await client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'raw-chunked' })).catch((e: S3ServiceException) => e.name), 'NotFound');
});

test('a declared payload hash that is neither a mode edgeport checks nor a SHA-256 is refused, even though signed', { timeout: 10_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  // Set before signing, so the signature covers it: the client really declared this.
  client.middlewareStack.add(
    (next) => async (args) => {
      (args.request as { headers: Record<string, string> }).headers['x-amz-content-sha256'] = 'not-a-hash';
      return next(args);
    },
    { step: 'build', name: 'oddPayloadHash' },
  );
  await assert.rejects(client.send(new PutObjectCommand({ Bucket: bucket, Key: 'k', Body: 'body' })), code('InvalidArgument', 400));
  await assert.rejects(
    client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'k' })),
    (e: unknown) => (e as S3ServiceException).$metadata.httpStatusCode === 400,
  );
});

test(
  'a body that does not match its signed x-amz-content-sha256 is refused and stores nothing, hashed inline or on the hashing thread',
  { timeout: 10_000 },
  async (t) => {
    const { client, bucket } = await startS3(t);
    // After signing: the bytes change, the signed hash of the original stays.
    client.middlewareStack.add(
      (next) => async (args) => {
        const request = args.request as { body: unknown };
        if (Buffer.isBuffer(request.body) || request.body instanceof Uint8Array) {
          const changed = Buffer.from(request.body);
          changed.writeUInt8(changed.readUInt8(changed.length - 1) ^ 1, changed.length - 1);
          request.body = changed;
        }
        return next(args);
      },
      { step: 'finalizeRequest', priority: 'low', name: 'tamperBody' },
    );
    const { CreateMultipartUploadCommand, ListPartsCommand, UploadPartCommand } = await import('@aws-sdk/client-s3');
    for (const size of [1024, 3 * 1024 * 1024]) {
      await assert.rejects(
        client.send(new PutObjectCommand({ Bucket: bucket, Key: `k${size}`, Body: Buffer.alloc(size, 5) })),
        code('XAmzContentSHA256Mismatch', 400),
        `${size} bytes`,
      );
      await assert.rejects(
        client.send(new HeadObjectCommand({ Bucket: bucket, Key: `k${size}` })),
        (e: unknown) => (e as S3ServiceException).$metadata.httpStatusCode === 404,
      );
    }
    const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'multi' }));
    await assert.rejects(
      client.send(new UploadPartCommand({ Bucket: bucket, Key: 'multi', UploadId, PartNumber: 1, Body: Buffer.alloc(5 * 1024 * 1024, 6) })),
      code('XAmzContentSHA256Mismatch', 400),
    );
    const parts = await client.send(new ListPartsCommand({ Bucket: bucket, Key: 'multi', UploadId }));
    assert.equal(parts.Parts?.length ?? 0, 0);
  },
);

test('virtual-hosted addressing reaches the same objects', { timeout: 10_000 }, async (t) => {
  const { client, bucket, endpoint } = await startS3(t);
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'vh', Body: 'virtual' }));
  const port = new URL(endpoint).port;
  const vhost = new S3Client({
    endpoint: `http://localhost:${port}`,
    region: 'auto',
    forcePathStyle: false,
    credentials: { accessKeyId: ACCESS_KEY_ID, secretAccessKey: (await import('./helpers.ts')).SECRET },
  });
  t.after(() => vhost.destroy());
  // The SDK would address test-bucket.localhost, which does not resolve here; sign for it and send to 127.0.0.1.
  vhost.middlewareStack.add(
    (next) => async (args) => {
      const request = args.request as { hostname: string; headers: Record<string, string> };
      request.headers.host = `${request.hostname}:${port}`;
      request.hostname = '127.0.0.1';
      return next(args);
    },
    { step: 'finalizeRequest', priority: 'low', name: 'resolveToLoopback' },
  );
  const got = await vhost.send(new GetObjectCommand({ Bucket: bucket, Key: 'vh' }));
  assert.equal(await got.Body!.transformToString(), 'virtual');
});

test('curl --aws-sigv4 (body hash signed but not declared) is verified at the end of the body', { timeout: 10_000 }, async (t) => {
  const { endpoint, bucket, client } = await startS3(t);
  const { execFile } = await import('node:child_process');
  const { promisify } = await import('node:util');
  const { SECRET } = await import('./helpers.ts');
  const curl = async (args: string[]) =>
    (
      await promisify(execFile)('curl', [
        '-s',
        '-o',
        '/dev/null',
        '-w',
        '%{http_code}',
        '--aws-sigv4',
        'aws:amz:auto:s3',
        '--user',
        `${ACCESS_KEY_ID}:${SECRET}`,
        ...args,
      ])
    ).stdout;
  assert.equal(await curl(['-X', 'PUT', '--data-binary', 'signed by curl', '-H', 'content-type: text/plain', `${endpoint}/${bucket}/from-curl.txt`]), '200');
  const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'from-curl.txt' }));
  assert.equal(await got.Body!.transformToString(), 'signed by curl');
  assert.equal(got.ContentType, 'text/plain');
  assert.equal(await curl([`${endpoint}/${bucket}/from-curl.txt`]), '200');
  assert.equal(await curl([`${endpoint}/${bucket}?list-type=2`]), '200');
  const wrong = (
    await promisify(execFile)('curl', [
      '-s',
      '-w',
      '\n%{http_code}',
      '--aws-sigv4',
      'aws:amz:auto:s3',
      '--user',
      `${ACCESS_KEY_ID}:wrong`,
      '-X',
      'PUT',
      '--data-binary',
      'nope',
      `${endpoint}/${bucket}/forged.txt`,
    ])
  ).stdout;
  assert.equal(wrong.split('\n').at(-1), '403');
  // Checked once the body was read, and answered as S3 answers every mismatch: what the signature should have covered, the body's hash last.
  assert.match(wrong, /<Code>SignatureDoesNotMatch<\/Code>/);
  assert.match(
    wrong,
    new RegExp(`<CanonicalRequest>PUT&#10;/${bucket}/forged\\.txt&#10;[^<]*&#10;${createHash('sha256').update('nope').digest('hex')}</CanonicalRequest>`),
  );
  assert.match(wrong, /<StringToSign>AWS4-HMAC-SHA256&#10;/);
  await assert.rejects(client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'forged.txt' })));
});
