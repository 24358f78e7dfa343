/**
 * S3 behaviours real clients rely on: Expect: 100-continue only after authentication, the copy
 * rules (a range within the source, no copy onto itself without a change), aws-chunked as a
 * Content-Encoding token, and a client leaving mid-request being no server error.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer, request, type IncomingMessage } from 'node:http';
import { test, type TestContext } from 'node:test';
import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListPartsCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
  UploadPartCopyCommand,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { pino } from 'pino';
import { Readable } from 'node:stream';
import { listen } from '../../../src/cli/listener.ts';
import { adminKey } from '../../../src/store/s3/key-grant.ts';
import { createS3Handler } from '../../../src/store/s3/s3-handler.ts';
import { silentLogger } from '../../../src/core/log.ts';
import { openTestEngine } from '../../helpers/engine.ts';
import { ACCESS_KEY_ID, SECRET, s3ErrorCode, startS3 } from './helpers.ts';
import { listen as listenForTest } from '../../helpers/listen.ts';

test("Content-Encoding: aws-chunked is a transfer token: dropped from a plain body's encoding and from a chunked one's", { timeout: 10_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  const body = Buffer.alloc(9000, 'z');
  const cases: Array<[string, string, Buffer | Readable, string | undefined]> = [
    ['plain gzip', 'gzip, aws-chunked', body, 'gzip'],
    ['plain only', 'aws-chunked', body, undefined],
    // A stream goes aws-chunked (with a trailing checksum); the SDK adds the token to the given encoding.
    ['chunked gzip', 'gzip', Readable.from([body.subarray(0, 4000), body.subarray(4000)]), 'gzip'],
    ['chunked br,gzip', 'br, gzip, aws-chunked', Readable.from([body]), 'br, gzip'],
  ];
  for (const [key, encoding, data, stored] of cases) {
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: data, ContentEncoding: encoding, ContentLength: body.length }));
    const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    assert.equal(head.ContentEncoding, stored, key);
    assert.equal(head.ContentLength, body.length, key);
  }
  // The body is stored as sent, not decoded as chunks.
  const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'plain gzip' }));
  assert.ok(Buffer.from(await got.Body!.transformToByteArray()).equals(body));
});

test('CopyObject onto itself needs a change (REPLACE metadata or a storage class); else 400 InvalidRequest', { timeout: 10_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'self', Body: 'same bytes', ContentType: 'text/plain', Metadata: { v: '1' } }));
  const self = { Bucket: bucket, Key: 'self', CopySource: `${bucket}/self` };
  await assert.rejects(client.send(new CopyObjectCommand(self)), (error: Error & { message: string }) => {
    s3ErrorCode('InvalidRequest', 400)(error);
    assert.match(error.message, /illegal because it is trying to copy an object to itself without changing the object's metadata/);
    return true;
  });
  await assert.rejects(client.send(new CopyObjectCommand({ ...self, MetadataDirective: 'COPY' })), s3ErrorCode('InvalidRequest', 400));
  assert.equal((await client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'self' }))).Metadata?.v, '1', 'the refused copy changed nothing');

  await client.send(new CopyObjectCommand({ ...self, MetadataDirective: 'REPLACE', Metadata: { v: '2' }, ContentType: 'text/markdown' }));
  let head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'self' }));
  assert.deepEqual([head.Metadata?.v, head.ContentType], ['2', 'text/markdown']);
  await client.send(new CopyObjectCommand({ ...self, StorageClass: 'STANDARD_IA' }));
  head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'self' }));
  assert.deepEqual([head.StorageClass, head.Metadata?.v], ['STANDARD_IA', '2']);
  // Another key is no copy onto itself.
  await client.send(new CopyObjectCommand({ Bucket: bucket, Key: 'other', CopySource: `${bucket}/self` }));
  const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'other' }));
  assert.equal(await got.Body!.transformToString(), 'same bytes');
});

test("UploadPartCopy with a range past the source's end is 416 InvalidRange; the upload is unharmed", { timeout: 10_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'src', Body: '0123456789' }));
  const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'dst' }));
  const part = (range: string) =>
    client.send(
      new UploadPartCopyCommand({
        Bucket: bucket,
        Key: 'dst',
        UploadId,
        PartNumber: 1,
        CopySource: `${bucket}/src`,
        CopySourceRange: range,
      }),
    );
  for (const range of ['bytes=5-10', 'bytes=0-99', 'bytes=10-12', 'bytes=50-60']) {
    await assert.rejects(
      part(range),
      (error: Error) => {
        s3ErrorCode('InvalidRange', 416)(error);
        assert.match(error.message, /The requested range is not satisfiable.*10 bytes/);
        return true;
      },
      range,
    );
  }
  const copied = await part('bytes=2-9');
  const done = await client.send(
    new CompleteMultipartUploadCommand({
      Bucket: bucket,
      Key: 'dst',
      UploadId,
      MultipartUpload: { Parts: [{ PartNumber: 1, ETag: copied.CopyPartResult!.ETag! }] },
    }),
  );
  assert.ok(done.ETag);
  const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'dst' }));
  assert.equal(await got.Body!.transformToString(), '23456789');
});

/** The S3 API behind the CLI's own listener (as `edgeport start` serves it), with a client and a presigner. */
async function startListenerS3(t: TestContext) {
  const fixture = await openTestEngine(t);
  const handler = createS3Handler({
    engine: fixture.engine,
    clock: { now: () => Date.now() },
    logger: silentLogger,
    keys: (id) => (id === ACCESS_KEY_ID ? adminKey(SECRET) : undefined),
  });
  const listener = await listen(
    (req, res) => {
      void handler(req, res);
    },
    '127.0.0.1',
    0,
    'S3-compatible API',
    { surface: 's3', handlesExpectContinue: true },
  );
  t.after(() => listener.close());
  const client = (secret: string) => {
    const made = new S3Client({
      endpoint: listener.url,
      region: 'auto',
      forcePathStyle: true,
      expectContinueHeader: true,
      credentials: { accessKeyId: ACCESS_KEY_ID, secretAccessKey: secret },
    });
    t.after(() => made.destroy());
    return made;
  };
  return { ...fixture, url: listener.url, client };
}

interface ContinueOutcome {
  continued: boolean;
  /** How many 100 Continue answers arrived. */
  continues: number;
  status: number;
  body: string;
  /** The server closed the connection after its answer. */
  closed: boolean;
}

/** A PUT with `Expect: 100-continue` whose body is sent only if the server says 100 Continue. */
function putExpectingContinue(url: string, headers: Record<string, string>, body: Buffer): Promise<ContinueOutcome> {
  return new Promise((resolve, reject) => {
    let continues = 0;
    const req = request(url, { method: 'PUT', agent: false, headers: { ...headers, expect: '100-continue', 'content-length': String(body.length) } });
    req.on('continue', () => {
      if (continues++ === 0) req.end(body);
    });
    req.on('response', (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const socket = res.socket;
        const done = () =>
          resolve({
            continued: continues > 0,
            continues,
            status: res.statusCode!,
            body: Buffer.concat(chunks).toString(),
            closed: socket.destroyed || socket.readableEnded,
          });
        if (socket.destroyed) done();
        else socket.once('close', done).setTimeout(2_000, done);
      });
    });
    req.on('error', reject);
    req.flushHeaders();
  });
}

test('Expect: 100-continue is answered only after the signature is checked; a refused upload is closed unread', { timeout: 20_000 }, async (t) => {
  const { url, client, bucket } = await startListenerS3(t);
  const body = Buffer.alloc(256 * 1024, 'b');

  // Unauthenticated: no 100 Continue, a 403, the connection closed without the body.
  const anonymous = await putExpectingContinue(`${url}/${bucket}/anon`, {}, body);
  assert.deepEqual([anonymous.continued, anonymous.status, anonymous.closed], [false, 403, true]);
  assert.match(anonymous.body, /<Code>AccessDenied<\/Code>/);

  // Wrongly signed (a presigned URL whose signature was altered): the same.
  const signed = await getSignedUrl(client(SECRET), new PutObjectCommand({ Bucket: bucket, Key: 'presigned' }), { expiresIn: 300 });
  const tampered = signed.replace(/X-Amz-Signature=([0-9a-f])/, (_, c: string) => `X-Amz-Signature=${c === '0' ? '1' : '0'}`);
  const wrong = await putExpectingContinue(tampered, {}, body);
  assert.deepEqual([wrong.continued, wrong.status, wrong.closed], [false, 403, true]);
  assert.match(wrong.body, /<Code>SignatureDoesNotMatch<\/Code>/);

  // Correctly signed: 100 Continue (once), then the body is taken.
  const right = await putExpectingContinue(signed, {}, body);
  assert.deepEqual([right.continues, right.status], [1, 200]);
  const got = await client(SECRET).send(new GetObjectCommand({ Bucket: bucket, Key: 'presigned' }));
  assert.equal((await got.Body!.transformToByteArray()).length, body.length);

  // The AWS SDK (Expect on every body here): a wrong secret is refused before the body, for PutObject and UploadPart.
  const { UploadId } = await client(SECRET).send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'mp' }));
  const started = performance.now();
  await assert.rejects(
    client('wrong-secret').send(new PutObjectCommand({ Bucket: bucket, Key: 'sdk', Body: body })),
    s3ErrorCode('SignatureDoesNotMatch', 403),
  );
  await assert.rejects(
    client('wrong-secret').send(new UploadPartCommand({ Bucket: bucket, Key: 'mp', UploadId, PartNumber: 1, Body: body })),
    s3ErrorCode('SignatureDoesNotMatch', 403),
  );
  // Without a 100 Continue or an answer the SDK would wait its continue timeout (1 s) and send the body anyway.
  assert.ok(performance.now() - started < 1_000, 'refused at once');
  await client(SECRET).send(new PutObjectCommand({ Bucket: bucket, Key: 'sdk', Body: body }));
  await client(SECRET).send(new UploadPartCommand({ Bucket: bucket, Key: 'mp', UploadId, PartNumber: 1, Body: body }));
  assert.equal((await client(SECRET).send(new HeadObjectCommand({ Bucket: bucket, Key: 'sdk' }))).ContentLength, body.length);
});

test(
  'a client that closes a GetObject before reading the body, or abandons an upload, is logged at debug, never as an error',
  { timeout: 20_000 },
  async (t) => {
    const records: Array<{ level: number; msg: string }> = [];
    const logger = pino(
      { level: 'debug' },
      {
        write: (line: string) => {
          records.push(JSON.parse(line) as { level: number; msg: string });
        },
      },
    );
    const { client, bucket } = await startS3(t, { logger });
    // Larger than the socket buffers, so the server is still writing when the client leaves.
    const body = Buffer.alloc(24 * 1024 * 1024, 'g');
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'big', Body: body }));
    for (let i = 0; i < 3; i++) {
      const seen = records.length;
      const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'big' }));
      (got.Body as Readable).destroy();
      const deadline = Date.now() + 10_000;
      while (!records.slice(seen).some((r) => r.msg.startsWith('S3 client closed the connection') || r.level >= 50)) {
        assert.ok(Date.now() < deadline, 'the server noticed the client leaving');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
    // An upload the client abandons halfway is no error either.
    const seen = records.length;
    const signed = await getSignedUrl(client, new PutObjectCommand({ Bucket: bucket, Key: 'abandoned' }), { expiresIn: 300 });
    const put = request(signed, { method: 'PUT', agent: false, headers: { 'content-length': String(body.length) } });
    put.on('error', () => {
      /* the connection we reset */
    });
    put.write(body.subarray(0, 1024 * 1024), () => setTimeout(() => put.destroy(), 50));
    const deadline = Date.now() + 10_000;
    while (!records.slice(seen).some((r) => r.msg.startsWith('S3 client closed the connection') || r.level >= 50)) {
      assert.ok(Date.now() < deadline, 'the server noticed the upload being abandoned');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.deepEqual(
      records.filter((r) => r.level >= 40).map((r) => r.msg),
      [],
    );
    assert.equal(records.filter((r) => r.level === 20 && r.msg.startsWith('S3 client closed the connection')).length, 4);
    await assert.rejects(
      client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'abandoned' })),
      (e: Error & { $metadata: { httpStatusCode?: number } }) => e.$metadata.httpStatusCode === 404,
    );
  },
);

test('DeleteBucket of a bucket holding only open uploads deletes it and aborts them; objects still keep it', { timeout: 10_000 }, async (t) => {
  const { client, engine, clock, blobIds } = await startS3(t);
  const before = new Set(await blobIds());
  await client.send(new CreateBucketCommand({ Bucket: 'uploads-only' }));
  const uploads: string[] = [];
  for (const key of ['a', 'b/c']) {
    const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: 'uploads-only', Key: key }));
    await client.send(new UploadPartCommand({ Bucket: 'uploads-only', Key: key, UploadId, PartNumber: 1, Body: Buffer.alloc(1000, 'p') }));
    uploads.push(UploadId!);
  }
  assert.equal((await blobIds()).filter((id) => !before.has(id)).length, 2, 'each part is a blob');

  // Objects still keep a bucket, and a refused deletion aborts nothing.
  await client.send(new PutObjectCommand({ Bucket: 'uploads-only', Key: 'obj', Body: 'x' }));
  await assert.rejects(client.send(new DeleteBucketCommand({ Bucket: 'uploads-only' })), s3ErrorCode('BucketNotEmpty', 409));
  assert.equal((await client.send(new ListPartsCommand({ Bucket: 'uploads-only', Key: 'a', UploadId: uploads[0] }))).Parts?.length, 1);
  await client.send(new DeleteObjectCommand({ Bucket: 'uploads-only', Key: 'obj' }));

  await client.send(new DeleteBucketCommand({ Bucket: 'uploads-only' }));
  await assert.rejects(
    client.send(new HeadBucketCommand({ Bucket: 'uploads-only' })),
    (e: Error & { $metadata: { httpStatusCode?: number } }) => e.$metadata.httpStatusCode === 404,
  );
  // A bucket made again under the name has none of the old uploads.
  await client.send(new CreateBucketCommand({ Bucket: 'uploads-only' }));
  assert.equal((await client.send(new ListMultipartUploadsCommand({ Bucket: 'uploads-only' }))).Uploads, undefined);
  await assert.rejects(
    client.send(new UploadPartCommand({ Bucket: 'uploads-only', Key: 'a', UploadId: uploads[0], PartNumber: 2, Body: 'late' })),
    s3ErrorCode('NoSuchUpload', 404),
  );
  await assert.rejects(
    client.send(
      new CompleteMultipartUploadCommand({
        Bucket: 'uploads-only',
        Key: 'b/c',
        UploadId: uploads[1],
        MultipartUpload: { Parts: [{ PartNumber: 1, ETag: '"x"' }] },
      }),
    ),
    s3ErrorCode('NoSuchUpload', 404),
  );
  // The parts' blobs are freed after the grace period, like a deleted object's.
  clock.advance(60_001);
  await engine.reclaimBlobs();
  assert.deepEqual(
    (await blobIds()).filter((id) => !before.has(id)),
    [],
  );
});

test(
  'CompleteMultipartUpload sent again after it succeeded answers the same 200; other parts, or a replaced object, NoSuchUpload',
  { timeout: 10_000 },
  async (t) => {
    const { client, bucket } = await startS3(t);
    const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'retried', ChecksumAlgorithm: 'SHA256' }));
    const uploaded = await client.send(
      new UploadPartCommand({ Bucket: bucket, Key: 'retried', UploadId, PartNumber: 1, Body: 'the one part', ChecksumAlgorithm: 'SHA256' }),
    );
    const parts = [{ PartNumber: 1, ETag: uploaded.ETag!, ChecksumSHA256: uploaded.ChecksumSHA256! }];
    const complete = (list = parts, key = 'retried') =>
      client.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId, MultipartUpload: { Parts: list } }));
    const first = await complete();
    const again = await complete();
    const fields = (r: typeof first) => [r.Bucket, r.Key, r.Location, r.ETag, r.ChecksumSHA256, r.ChecksumType];
    assert.deepEqual(fields(again), fields(first));
    assert.match(first.ChecksumSHA256!, /-1$/);
    await assert.rejects(complete([{ ...parts[0]!, ETag: '"00000000000000000000000000000000"' }]), s3ErrorCode('NoSuchUpload', 404));
    await assert.rejects(complete(parts, 'another-key'), s3ErrorCode('NoSuchUpload', 404));
    assert.deepEqual(fields(await complete()), fields(first), 'a refused repeat forgets nothing');
    // Once the object it made is replaced, the upload is gone.
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'retried', Body: 'newer' }));
    await assert.rejects(complete(), s3ErrorCode('NoSuchUpload', 404));
  },
);

test('CompleteMultipartUpload with a wrong whole-object checksum is 400 BadDigest and completes nothing', { timeout: 10_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'checked', ChecksumAlgorithm: 'SHA256' }));
  const body = 'checked part';
  const part = await client.send(new UploadPartCommand({ Bucket: bucket, Key: 'checked', UploadId, PartNumber: 1, Body: body, ChecksumAlgorithm: 'SHA256' }));
  const parts = [{ PartNumber: 1, ETag: part.ETag!, ChecksumSHA256: part.ChecksumSHA256! }];
  // S3's COMPOSITE checksum: SHA-256 over the parts' binary SHA-256s, then -<parts>.
  const composite = createHash('sha256').update(createHash('sha256').update(body).digest()).digest('base64');
  const complete = (extra: Partial<{ ChecksumSHA256: string; ChecksumCRC32: string }>) =>
    client.send(
      new CompleteMultipartUploadCommand({
        Bucket: bucket,
        Key: 'checked',
        UploadId,
        MultipartUpload: { Parts: parts },
        ...extra,
      }),
    );
  const wrong = createHash('sha256').update('something else').digest('base64');
  for (const stated of [wrong, `${wrong}-1`, `${composite}-2`]) {
    await assert.rejects(
      complete({ ChecksumSHA256: stated }),
      (error: Error) => {
        s3ErrorCode('BadDigest', 400)(error);
        assert.match(error.message, /The SHA256 checksum you specified did not match/);
        return true;
      },
      stated,
    );
  }
  await assert.rejects(complete({ ChecksumCRC32: 'AAAAAA==' }), (error: Error) => {
    s3ErrorCode('InvalidRequest', 400)(error);
    assert.match(error.message, /expected checksum Type: sha256, actual checksum Type: crc32/);
    return true;
  });
  await assert.rejects(complete({ ChecksumSHA256: 'not base64!' }), s3ErrorCode('InvalidRequest', 400));
  // Nothing was completed: no object, and the upload still takes its completion.
  await assert.rejects(
    client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'checked' })),
    (e: Error & { $metadata: { httpStatusCode?: number } }) => e.$metadata.httpStatusCode === 404,
  );
  assert.equal((await client.send(new ListPartsCommand({ Bucket: bucket, Key: 'checked', UploadId }))).Parts?.length, 1);
  const done = await complete({ ChecksumSHA256: `${composite}-1` });
  assert.equal(done.ChecksumSHA256, `${composite}-1`);
  // Stated without the part count, the digest alone is compared; a repeat is checked against the object made.
  assert.equal((await complete({ ChecksumSHA256: composite })).ETag, done.ETag);
  await assert.rejects(complete({ ChecksumSHA256: wrong }), s3ErrorCode('BadDigest', 400));
});

test('behind a server that answers 100 Continue itself (no checkContinue listener), the handler sends no second one', { timeout: 10_000 }, async (t) => {
  const fixture = await openTestEngine(t);
  const handler = createS3Handler({
    engine: fixture.engine,
    clock: { now: () => Date.now() },
    logger: silentLogger,
    keys: (id) => (id === ACCESS_KEY_ID ? adminKey(SECRET) : undefined),
  });
  const server = createServer((req, res) => {
    void handler(req, res);
  });
  const port = await listenForTest(server, t);
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({ endpoint, region: 'auto', forcePathStyle: true, credentials: { accessKeyId: ACCESS_KEY_ID, secretAccessKey: SECRET } });
  t.after(() => client.destroy());
  const signed = await getSignedUrl(client, new PutObjectCommand({ Bucket: fixture.bucket, Key: 'once' }), { expiresIn: 300 });
  const outcome = await putExpectingContinue(signed, {}, Buffer.from('body'));
  assert.deepEqual([outcome.continues, outcome.status], [1, 200]);
  // Node told the client to send it, so a refused body is read (and dropped) for the answer to arrive.
  const refused = await putExpectingContinue(signed.replace('once', 'other'), {}, Buffer.from('body'));
  assert.deepEqual([refused.continues, refused.status], [1, 403]);
});
