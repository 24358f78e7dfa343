import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  type ListMultipartUploadsCommandOutput,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  GetObjectAttributesCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListPartsCommand,
  PutObjectCommand,
  UploadPartCommand,
  UploadPartCopyCommand,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import fc from 'fast-check';
import * as zlib from 'node:zlib';
import { createCrc32c, createCrc64Nvme } from '../../../src/core/crypto/crc.ts';
import { createStoreBucket } from '../../../src/store/binding/index.ts';
import { allPages, s3ErrorCode, startS3 } from './helpers.ts';

const MiB = 1024 * 1024;
const code = s3ErrorCode;

/** InvalidPartNumber, naming the part asked for and the object's part count, as S3's error document does. */
const invalidPartNumber = (requested: number, actual: number) => (error: unknown) => {
  code('InvalidPartNumber', 416)(error);
  const fields = error as { PartNumberRequested?: unknown; ActualPartCount?: unknown };
  assert.deepEqual([fields.PartNumberRequested, fields.ActualPartCount], [String(requested), String(actual)]);
  return true;
};

/** Base64 CRCs as S3 writes them: CRC-32 from node:zlib, the others from edgeport's own (checked against the catalogue in crc.test.ts). */
const crc32Of = (data: Buffer): string => {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(zlib.crc32(data) >>> 0);
  return bytes.toString('base64');
};
const crc32cOf = (data: Buffer): string => {
  const crc = createCrc32c();
  crc.update(data);
  return crc.digest().toString('base64');
};
const crc64Of = (data: Buffer): string => {
  const crc = createCrc64Nvme();
  crc.update(data);
  return crc.digest().toString('base64');
};

test('multipart: create, parts, list, complete; errors for order, size, unknown parts and uploads', { timeout: 10_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  const created = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'mpu', ContentType: 'a/b', Metadata: { m: '1' } }));
  const UploadId = created.UploadId!;
  const p1 = await client.send(new UploadPartCommand({ Bucket: bucket, Key: 'mpu', UploadId, PartNumber: 1, Body: Buffer.alloc(5 * MiB, 1) }));
  const p2 = await client.send(new UploadPartCommand({ Bucket: bucket, Key: 'mpu', UploadId, PartNumber: 2, Body: Buffer.alloc(MiB, 2) }));
  const parts = await client.send(new ListPartsCommand({ Bucket: bucket, Key: 'mpu', UploadId }));
  assert.deepEqual(
    parts.Parts?.map((p) => [p.PartNumber, p.Size]),
    [
      [1, 5 * MiB],
      [2, MiB],
    ],
  );
  const uploads = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket }));
  assert.deepEqual(
    uploads.Uploads?.map((u) => u.UploadId),
    [UploadId],
  );
  await assert.rejects(
    client.send(
      new CompleteMultipartUploadCommand({
        Bucket: bucket,
        Key: 'mpu',
        UploadId,
        MultipartUpload: {
          Parts: [
            { PartNumber: 2, ETag: p2.ETag },
            { PartNumber: 1, ETag: p1.ETag },
          ],
        },
      }),
    ),
    code('InvalidPartOrder', 400),
  );
  // A repeated number is an order error, found before any etag is checked (here the first copy is stale).
  await assert.rejects(
    client.send(
      new CompleteMultipartUploadCommand({
        Bucket: bucket,
        Key: 'mpu',
        UploadId,
        MultipartUpload: {
          Parts: [
            { PartNumber: 1, ETag: '"00000000000000000000000000000000"' },
            { PartNumber: 1, ETag: p1.ETag },
          ],
        },
      }),
    ),
    code('InvalidPartOrder', 400),
  );
  await assert.rejects(
    client.send(
      new CompleteMultipartUploadCommand({
        Bucket: bucket,
        Key: 'mpu',
        UploadId,
        MultipartUpload: { Parts: [{ PartNumber: 1, ETag: '"00000000000000000000000000000000"' }] },
      }),
    ),
    code('InvalidPart', 400),
  );
  const done = await client.send(
    new CompleteMultipartUploadCommand({
      Bucket: bucket,
      Key: 'mpu',
      UploadId,
      MultipartUpload: {
        Parts: [
          { PartNumber: 1, ETag: p1.ETag },
          { PartNumber: 2, ETag: p2.ETag },
        ],
      },
    }),
  );
  assert.match(done.ETag!, /^"[0-9a-f]{32}-2"$/);
  const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'mpu' }));
  assert.equal(head.ContentLength, 6 * MiB);
  assert.equal(head.ContentType, 'a/b');
  assert.deepEqual(head.Metadata, { m: '1' });
  await assert.rejects(client.send(new UploadPartCommand({ Bucket: bucket, Key: 'mpu', UploadId, PartNumber: 3, Body: 'x' })), code('NoSuchUpload', 404));

  // GetObject/HeadObject by part number: the part's bytes as a range, with the number of parts.
  const second = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'mpu', PartNumber: 2 }));
  assert.deepEqual(
    [second.$metadata.httpStatusCode, second.ContentRange, second.ContentLength, second.PartsCount],
    [206, `bytes ${5 * MiB}-${6 * MiB - 1}/${6 * MiB}`, MiB, 2],
  );
  assert.ok(Buffer.from(await second.Body!.transformToByteArray()).equals(Buffer.alloc(MiB, 2)));
  const first = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'mpu', PartNumber: 1 }));
  assert.deepEqual([first.ContentLength, first.ContentRange, first.PartsCount], [5 * MiB, `bytes 0-${5 * MiB - 1}/${6 * MiB}`, 2]);
  await assert.rejects(client.send(new GetObjectCommand({ Bucket: bucket, Key: 'mpu', PartNumber: 3 })), invalidPartNumber(3, 2));
  // HEAD answers carry no document: the status says it.
  await assert.rejects(
    client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'mpu', PartNumber: 3 })),
    (error: { $metadata?: { httpStatusCode?: number } }) => {
      assert.equal(error.$metadata?.httpStatusCode, 416);
      return true;
    },
  );
  await assert.rejects(client.send(new GetObjectCommand({ Bucket: bucket, Key: 'mpu', PartNumber: 1, Range: 'bytes=0-1' })), code('InvalidRequest', 400));
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'single', Body: 'one piece' }));
  const whole = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'single', PartNumber: 1 }));
  assert.deepEqual([whole.$metadata.httpStatusCode, whole.PartsCount, await whole.Body!.transformToString()], [200, undefined, 'one piece']);
  await assert.rejects(client.send(new GetObjectCommand({ Bucket: bucket, Key: 'single', PartNumber: 2 })), invalidPartNumber(2, 1));

  const small = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'small' }));
  const s1 = await client.send(new UploadPartCommand({ Bucket: bucket, Key: 'small', UploadId: small.UploadId!, PartNumber: 1, Body: 'tiny' }));
  const s2 = await client.send(new UploadPartCommand({ Bucket: bucket, Key: 'small', UploadId: small.UploadId!, PartNumber: 2, Body: 'tiny' }));
  await assert.rejects(
    client.send(
      new CompleteMultipartUploadCommand({
        Bucket: bucket,
        Key: 'small',
        UploadId: small.UploadId!,
        MultipartUpload: {
          Parts: [
            { PartNumber: 1, ETag: s1.ETag },
            { PartNumber: 2, ETag: s2.ETag },
          ],
        },
      }),
    ),
    code('EntityTooSmall', 400),
  );
  await client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: 'small', UploadId: small.UploadId! }));
  await assert.rejects(client.send(new ListPartsCommand({ Bucket: bucket, Key: 'small', UploadId: small.UploadId! })), code('NoSuchUpload', 404));
});

test('CompleteMultipartUpload as Go clients (rclone, minio-go) write it: quotes as &#34;, pretty-printed', { timeout: 10_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'go-style' }));
  const p1 = await client.send(new UploadPartCommand({ Bucket: bucket, Key: 'go-style', UploadId, PartNumber: 1, Body: Buffer.alloc(5 * MiB, 3) }));
  const p2 = await client.send(new UploadPartCommand({ Bucket: bucket, Key: 'go-style', UploadId, PartNumber: 2, Body: 'tail' }));
  // Rewrites the SDK's body before it is signed, as Go's encoding/xml would have written it.
  client.middlewareStack.add(
    (next) => async (args) => {
      const request = args.request as { body?: unknown; headers: Record<string, string> };
      if (typeof request.body === 'string' && request.body.includes('<CompleteMultipartUpload')) {
        const goStyle = request.body.replaceAll('&quot;', '&#34;').replaceAll('<Part>', '\n  <Part>\n    ');
        assert.match(goStyle, /<ETag>&#34;[0-9a-f]{32}&#34;<\/ETag>/);
        request.body = goStyle;
        request.headers['content-length'] = String(Buffer.byteLength(goStyle));
      }
      return next(args);
    },
    { step: 'build', name: 'goStyleXml' },
  );
  const done = await client.send(
    new CompleteMultipartUploadCommand({
      Bucket: bucket,
      Key: 'go-style',
      UploadId,
      MultipartUpload: {
        Parts: [
          { PartNumber: 1, ETag: p1.ETag },
          { PartNumber: 2, ETag: p2.ETag },
        ],
      },
    }),
  );
  assert.match(done.ETag!, /^"[0-9a-f]{32}-2"$/);
  assert.equal((await client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'go-style' }))).ContentLength, 5 * MiB + 4);
});

test('ListMultipartUploads pages by key and upload, rolls keys up by delimiter, and visits every upload once', { timeout: 10_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  const keys = ['a', 'a', 'a/1', 'a/2', 'b', 'c/x/1', 'c/y', 'c/y', 'd', 'é'];
  const started: Array<[string, string]> = [];
  for (const Key of keys) started.push([Key, (await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key }))).UploadId!]);
  const everything = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket }));
  // Key order; uploads of one key by initiation (two in the same millisecond in either order).
  assert.deepEqual(
    everything.Uploads?.map((u) => u.Key),
    keys,
  );
  assert.deepEqual(everything.Uploads?.map((u) => u.UploadId).sort(), started.map(([, id]) => id).sort());
  assert.deepEqual(
    [everything.Uploads?.[0]?.Owner?.ID, everything.Uploads?.[0]?.Initiator?.ID, everything.IsTruncated, everything.MaxUploads],
    ['edgeport', 'edgeport', false, 1000],
  );
  const firstTwo = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket, MaxUploads: 2 }));
  assert.deepEqual(
    [firstTwo.Uploads?.map((u) => u.Key), firstTwo.IsTruncated, firstTwo.NextKeyMarker, firstTwo.NextUploadIdMarker],
    [['a', 'a'], true, 'a', firstTwo.Uploads?.[1]?.UploadId],
  );
  const grouped = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket, Delimiter: '/', Prefix: 'c/' }));
  assert.deepEqual([grouped.Uploads?.map((u) => u.Key), grouped.CommonPrefixes?.map((p) => p.Prefix)], [['c/y', 'c/y'], ['c/x/']]);
  await assert.rejects(client.send(new ListMultipartUploadsCommand({ Bucket: bucket, MaxUploads: -1 })), code('InvalidArgument', 400));

  await fc.assert(
    fc.asyncProperty(fc.integer({ min: 1, max: 4 }), fc.constantFrom(undefined, '/'), fc.constantFrom('', 'a', 'c/'), async (maxUploads, delimiter, prefix) => {
      const whole = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: prefix, Delimiter: delimiter }));
      const entries = (result: ListMultipartUploadsCommandOutput) => [
        ...(result.Uploads ?? []).map((u) => u.UploadId!),
        ...(result.CommonPrefixes ?? []).map((p) => p.Prefix!),
      ];
      const seen = await allPages<{ KeyMarker?: string; UploadIdMarker?: string }>(async (markers) => {
        const result = await client.send(
          new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: prefix, Delimiter: delimiter, MaxUploads: maxUploads, ...markers }),
        );
        return {
          entries: entries(result),
          ...(result.IsTruncated ? { next: { KeyMarker: result.NextKeyMarker, UploadIdMarker: result.NextUploadIdMarker || undefined } } : {}),
        };
      });
      assert.deepEqual(seen.sort(), entries(whole).sort());
    }),
    { numRuns: 25 },
  );
});

test('multipart checksums: kept per part, checked at completion, combined into the COMPOSITE checksum', { timeout: 10_000 }, async (t) => {
  const { client, bucket, engine } = await startS3(t);
  const parts = [Buffer.alloc(5 * MiB, 'p'), Buffer.from('the last part')];
  const sha256 = (data: Buffer) => createHash('sha256').update(data).digest();
  const created = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'sums', ChecksumAlgorithm: 'SHA256' }));
  assert.deepEqual([created.ChecksumAlgorithm, created.ChecksumType], ['SHA256', 'COMPOSITE']);
  const UploadId = created.UploadId!;
  const uploaded = [];
  for (const [i, Body] of parts.entries()) {
    uploaded.push(await client.send(new UploadPartCommand({ Bucket: bucket, Key: 'sums', UploadId, PartNumber: i + 1, Body, ChecksumAlgorithm: 'SHA256' })));
  }
  assert.deepEqual(
    uploaded.map((p) => p.ChecksumSHA256),
    parts.map((data) => sha256(data).toString('base64')),
  );
  const listed = await client.send(new ListPartsCommand({ Bucket: bucket, Key: 'sums', UploadId }));
  assert.deepEqual([listed.ChecksumAlgorithm, listed.Parts?.map((p) => p.ChecksumSHA256)], ['SHA256', uploaded.map((p) => p.ChecksumSHA256)]);
  const named = uploaded.map((p, i) => ({ PartNumber: i + 1, ETag: p.ETag, ChecksumSHA256: p.ChecksumSHA256 }));
  await assert.rejects(
    client.send(
      new CompleteMultipartUploadCommand({
        Bucket: bucket,
        Key: 'sums',
        UploadId,
        MultipartUpload: { Parts: [named[0]!, { ...named[1]!, ChecksumSHA256: sha256(Buffer.from('other')).toString('base64') }] },
      }),
    ),
    code('InvalidPart', 400),
  );
  const done = await client.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: 'sums', UploadId, MultipartUpload: { Parts: named } }));
  const composite = `${sha256(Buffer.concat(parts.map(sha256))).toString('base64')}-2`;
  assert.deepEqual([done.ChecksumSHA256, done.ChecksumType], [composite, 'COMPOSITE']);
  // The SDK asks for checksums and skips verifying a composite one; the body reads back whole.
  const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'sums' }));
  assert.deepEqual([got.ChecksumSHA256, got.ChecksumType], [composite, 'COMPOSITE']);
  assert.ok(Buffer.from(await got.Body!.transformToByteArray()).equals(Buffer.concat(parts)));
  // Not a digest of the object's bytes, so scripts never see it (multipart objects have no checksums there).
  assert.deepEqual((await createStoreBucket(engine, bucket, { listHonorsInclude: true }).head('sums'))!.checksums.toJSON(), {});

  await assert.rejects(
    client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'x', ChecksumAlgorithm: 'MD5' as 'SHA256' })),
    code('InvalidRequest', 400),
  );
  await assert.rejects(
    client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'x', ChecksumAlgorithm: 'CRC64NVME', ChecksumType: 'COMPOSITE' })),
    code('InvalidRequest', 400),
  );
  // CRC-64/NVME's only type is FULL_OBJECT, named in the answer (multipart-full-object test below).
  const full = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'x', ChecksumAlgorithm: 'CRC64NVME' }));
  assert.deepEqual([full.ChecksumAlgorithm, full.ChecksumType], ['CRC64NVME', 'FULL_OBJECT']);

  // lib-storage asks for CRC-32 by default: every part's CRC is kept and combined.
  const body = Buffer.concat([Buffer.alloc(5 * MiB, 1), Buffer.alloc(5 * MiB, 2), Buffer.alloc(MiB, 3)]);
  const result = await new Upload({ client, params: { Bucket: bucket, Key: 'lib', Body: body }, partSize: 5 * MiB }).done();
  const crcs = [body.subarray(0, 5 * MiB), body.subarray(5 * MiB, 10 * MiB), body.subarray(10 * MiB)].map((part) => {
    const bytes = Buffer.alloc(4);
    bytes.writeUInt32BE(zlib.crc32(part) >>> 0);
    return bytes;
  });
  const combined = Buffer.alloc(4);
  combined.writeUInt32BE(zlib.crc32(Buffer.concat(crcs)) >>> 0);
  assert.equal((result as { ChecksumCRC32?: string }).ChecksumCRC32, `${combined.toString('base64')}-3`);
});

test(
  "FULL_OBJECT multipart checksums: the algorithm and type answered, the whole object's CRC made from the parts' and verified by the SDK",
  { timeout: 20_000 },
  async (t) => {
    const { client, bucket } = await startS3(t);
    const parts = [Buffer.alloc(5 * MiB, 'a'), Buffer.alloc(5 * MiB, 'b'), Buffer.from('a short last part')];
    const whole = Buffer.concat(parts);
    for (const [algorithm, crcOf] of [
      ['CRC32', crc32Of],
      ['CRC32C', crc32cOf],
      ['CRC64NVME', crc64Of],
    ] as const) {
      const Key = `full-${algorithm}`;
      const created = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key, ChecksumAlgorithm: algorithm, ChecksumType: 'FULL_OBJECT' }));
      assert.deepEqual([created.ChecksumAlgorithm, created.ChecksumType], [algorithm, 'FULL_OBJECT']);
      const UploadId = created.UploadId!;
      const named = [];
      for (const [i, Body] of parts.entries()) {
        const part = await client.send(new UploadPartCommand({ Bucket: bucket, Key, UploadId, PartNumber: i + 1, Body, ChecksumAlgorithm: algorithm }));
        named.push({ PartNumber: i + 1, ETag: part.ETag, [`Checksum${algorithm}`]: crcOf(Body) });
      }
      const listed = await client.send(new ListPartsCommand({ Bucket: bucket, Key, UploadId }));
      assert.deepEqual([listed.ChecksumAlgorithm, listed.ChecksumType], [algorithm, 'FULL_OBJECT']);
      // A stated whole-object checksum that is not the object's: BadDigest, nothing completed.
      await assert.rejects(
        client.send(
          new CompleteMultipartUploadCommand({
            Bucket: bucket,
            Key,
            UploadId,
            MultipartUpload: { Parts: named },
            [`Checksum${algorithm}`]: crcOf(Buffer.from('something else')),
            ChecksumType: 'FULL_OBJECT',
          }),
        ),
        code('BadDigest', 400),
      );
      const done = await client.send(
        new CompleteMultipartUploadCommand({
          Bucket: bucket,
          Key,
          UploadId,
          MultipartUpload: { Parts: named },
          [`Checksum${algorithm}`]: crcOf(whole),
          ChecksumType: 'FULL_OBJECT',
        }),
      );
      assert.deepEqual([done[`Checksum${algorithm}`], done.ChecksumType], [crcOf(whole), 'FULL_OBJECT']);
      // GetObject with the SDK's checksum mode: it verifies the FULL_OBJECT CRC against the bytes it reads.
      const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key, ChecksumMode: 'ENABLED' }));
      assert.deepEqual([got[`Checksum${algorithm}`], got.ChecksumType], [crcOf(whole), 'FULL_OBJECT']);
      assert.ok(Buffer.from(await got.Body!.transformToByteArray()).equals(whole));
    }
  },
);

test(
  "GetObject / HeadObject of one part with checksum mode: that part's own checksum and the object's type; GetObjectAttributes lists them",
  { timeout: 20_000 },
  async (t) => {
    const { client, bucket } = await startS3(t);
    const parts = [Buffer.alloc(5 * MiB, 'x'), Buffer.from('the short last part')];
    const sha256Of = (data: Buffer) => createHash('sha256').update(data).digest('base64');
    for (const [algorithm, type, checksumOf] of [
      ['SHA256', 'COMPOSITE', sha256Of],
      ['CRC32', 'FULL_OBJECT', crc32Of],
      ['CRC64NVME', 'FULL_OBJECT', crc64Of],
    ] as const) {
      const Key = `parts-${algorithm}`;
      const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key, ChecksumAlgorithm: algorithm, ChecksumType: type }));
      const named = [];
      for (const [i, Body] of parts.entries()) {
        const part = await client.send(new UploadPartCommand({ Bucket: bucket, Key, UploadId, PartNumber: i + 1, Body, ChecksumAlgorithm: algorithm }));
        named.push({ PartNumber: i + 1, ETag: part.ETag, [`Checksum${algorithm}`]: checksumOf(Body) });
      }
      await client.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key, UploadId, MultipartUpload: { Parts: named } }));
      for (const [i, body] of parts.entries()) {
        // The SDK sends checksum mode on GetObject and verifies the body against the part's checksum.
        const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key, PartNumber: i + 1, ChecksumMode: 'ENABLED' }));
        assert.deepEqual([got[`Checksum${algorithm}`], got.ChecksumType, got.PartsCount], [checksumOf(body), type, 2], `${algorithm} part ${i + 1}`);
        assert.ok(Buffer.from(await got.Body!.transformToByteArray()).equals(body));
        const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key, PartNumber: i + 1, ChecksumMode: 'ENABLED' }));
        assert.deepEqual([head[`Checksum${algorithm}`], head.ChecksumType, head.ContentLength], [checksumOf(body), type, body.length]);
      }
      // Not asked for: none.
      const plainHead = await client.send(new HeadObjectCommand({ Bucket: bucket, Key, PartNumber: 1 }));
      assert.deepEqual([plainHead[`Checksum${algorithm}`], plainHead.ChecksumType], [undefined, undefined]);
      const attributes = await client.send(new GetObjectAttributesCommand({ Bucket: bucket, Key, ObjectAttributes: ['ObjectParts'] }));
      assert.deepEqual(
        attributes.ObjectParts?.Parts,
        parts.map((body, i) => ({ PartNumber: i + 1, Size: body.length, [`Checksum${algorithm}`]: checksumOf(body) })),
      );
    }
    // An upload made without checksums: a part is served without one.
    const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'unsummed' }));
    const only = await client.send(new UploadPartCommand({ Bucket: bucket, Key: 'unsummed', UploadId, PartNumber: 1, Body: parts[1] }));
    await client.send(
      new CompleteMultipartUploadCommand({ Bucket: bucket, Key: 'unsummed', UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: only.ETag }] } }),
    );
    const unsummed = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'unsummed', PartNumber: 1, ChecksumMode: 'ENABLED' }));
    assert.deepEqual([unsummed.ChecksumCRC64NVME, unsummed.ChecksumCRC32, unsummed.ChecksumType, unsummed.PartsCount], [undefined, undefined, undefined, 1]);
    // Part 1 of an object put whole is all of it, so its checksum is the object's.
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'whole', Body: parts[1], ChecksumAlgorithm: 'CRC32C' }));
    const whole = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'whole', PartNumber: 1, ChecksumMode: 'ENABLED' }));
    assert.deepEqual([whole.ChecksumCRC32C, whole.ChecksumType, whole.PartsCount], [crc32cOf(parts[1]!), 'FULL_OBJECT', undefined]);
    assert.equal(await whole.Body!.transformToString(), 'the short last part');
  },
);

test(
  'CompleteMultipartUpload with If-None-Match / If-Match: a failed condition replaces nothing and leaves the upload open',
  { timeout: 10_000 },
  async (t) => {
    const { client, bucket } = await startS3(t);
    const existing = await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'guarded', Body: 'the current object' }));
    const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'guarded' }));
    const p1 = await client.send(new UploadPartCommand({ Bucket: bucket, Key: 'guarded', UploadId, PartNumber: 1, Body: 'replacement' }));
    const complete = (conditions: { IfNoneMatch?: string; IfMatch?: string }) =>
      client.send(
        new CompleteMultipartUploadCommand({
          Bucket: bucket,
          Key: 'guarded',
          UploadId,
          MultipartUpload: { Parts: [{ PartNumber: 1, ETag: p1.ETag }] },
          ...conditions,
        }),
      );
    await assert.rejects(complete({ IfNoneMatch: '*' }), code('PreconditionFailed', 412));
    await assert.rejects(complete({ IfMatch: '"0123456789abcdef0123456789abcdef"' }), code('PreconditionFailed', 412));
    const still = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'guarded' }));
    assert.equal(await still.Body!.transformToString(), 'the current object');
    assert.equal((await client.send(new ListPartsCommand({ Bucket: bucket, Key: 'guarded', UploadId }))).Parts?.length, 1);
    await complete({ IfMatch: existing.ETag! });
    const replaced = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'guarded' }));
    assert.equal(await replaced.Body!.transformToString(), 'replacement');
    // Create-only: If-None-Match: * completes when the key is free.
    const fresh = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'fresh' }));
    const f1 = await client.send(new UploadPartCommand({ Bucket: bucket, Key: 'fresh', UploadId: fresh.UploadId, PartNumber: 1, Body: 'new' }));
    await client.send(
      new CompleteMultipartUploadCommand({
        Bucket: bucket,
        Key: 'fresh',
        UploadId: fresh.UploadId,
        MultipartUpload: { Parts: [{ PartNumber: 1, ETag: f1.ETag }] },
        IfNoneMatch: '*',
      }),
    );
  },
);

test('copy: object with COPY and REPLACE directives, conditional copy, and part copy with a range', { timeout: 10_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'src', Body: 'copy me please', ContentType: 'text/plain', Metadata: { a: '1' } }));
  const copied = await client.send(new CopyObjectCommand({ Bucket: bucket, Key: 'dst', CopySource: `${bucket}/src` }));
  assert.equal(copied.CopyObjectResult?.ETag, `"${createHash('md5').update('copy me please').digest('hex')}"`);
  const kept = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'dst' }));
  assert.equal(kept.ContentType, 'text/plain');
  assert.deepEqual(kept.Metadata, { a: '1' });
  await client.send(
    new CopyObjectCommand({ Bucket: bucket, Key: 'dst2', CopySource: `${bucket}/src`, MetadataDirective: 'REPLACE', ContentType: 'x/y', Metadata: { b: '2' } }),
  );
  const replaced = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'dst2' }));
  assert.equal(replaced.ContentType, 'x/y');
  assert.deepEqual(replaced.Metadata, { b: '2' });
  await assert.rejects(
    client.send(new CopyObjectCommand({ Bucket: bucket, Key: 'dst3', CopySource: `${bucket}/src`, CopySourceIfMatch: '"nope"' })),
    code('PreconditionFailed', 412),
  );
  await assert.rejects(client.send(new CopyObjectCommand({ Bucket: bucket, Key: 'dst3', CopySource: `${bucket}/missing` })), code('NoSuchKey', 404));

  const upload = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'assembled' }));
  const part = await client.send(
    new UploadPartCopyCommand({
      Bucket: bucket,
      Key: 'assembled',
      UploadId: upload.UploadId!,
      PartNumber: 1,
      CopySource: `${bucket}/src`,
      CopySourceRange: 'bytes=5-6',
    }),
  );
  await client.send(
    new CompleteMultipartUploadCommand({
      Bucket: bucket,
      Key: 'assembled',
      UploadId: upload.UploadId!,
      MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.CopyPartResult!.ETag }] },
    }),
  );
  const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'assembled' }));
  assert.equal(await got.Body!.transformToString(), 'me');
});

test('lib-storage Upload of 100 MiB streams through multipart and reads back intact', { timeout: 120_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  const total = 100 * MiB;
  const block = Buffer.alloc(MiB);
  for (let i = 0; i < block.length; i++) block[i] = (i * 31) % 251;
  const expected = createHash('md5');
  for (let i = 0; i < 100; i++) expected.update(block);
  const source = Readable.from(
    (function* () {
      for (let i = 0; i < 100; i++) yield block;
    })(),
  );
  const upload = new Upload({ client, params: { Bucket: bucket, Key: 'big', Body: source }, partSize: 10 * MiB, queueSize: 4 });
  await upload.done();
  const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'big' }));
  assert.equal(got.ContentLength, total);
  const actual = createHash('md5');
  for await (const chunk of got.Body as AsyncIterable<Uint8Array>) actual.update(chunk);
  assert.equal(actual.digest('hex'), expected.digest('hex'));
});

test('one store: binding and S3 see the same objects and the same multipart uploads', { timeout: 10_000 }, async (t) => {
  const { client, bucket, engine } = await startS3(t);
  const binding = createStoreBucket(engine, bucket, { listHonorsInclude: true });
  const written = await binding.put('from-binding', 'written by a script', {
    httpMetadata: { contentType: 'text/plain' },
    customMetadata: { who: 'script' },
    sha256: createHash('sha256').update('written by a script').digest('hex'),
  });
  const viaS3 = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'from-binding' }));
  assert.equal(await viaS3.Body!.transformToString(), 'written by a script');
  assert.equal(viaS3.ETag, written!.httpEtag);
  assert.equal(viaS3.ContentType, 'text/plain');
  assert.deepEqual(viaS3.Metadata, { who: 'script' });

  await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'from-s3', Body: 'written by the sdk', Metadata: { who: 'sdk' }, CacheControl: 'no-cache' }));
  const viaBinding = await binding.get('from-s3');
  assert.ok(viaBinding && 'text' in viaBinding);
  assert.equal(await viaBinding.text(), 'written by the sdk');
  assert.deepEqual(viaBinding.customMetadata, { who: 'sdk' });
  assert.equal(viaBinding.httpMetadata?.cacheControl, 'no-cache');
  assert.equal(viaBinding.checksums.toJSON().md5, createHash('md5').update('written by the sdk').digest('hex'));

  const scriptUpload = await binding.createMultipartUpload('script-started');
  const sdkPart = await client.send(
    new UploadPartCommand({ Bucket: bucket, Key: 'script-started', UploadId: scriptUpload.uploadId, PartNumber: 1, Body: 'part via s3' }),
  );
  await client.send(
    new CompleteMultipartUploadCommand({
      Bucket: bucket,
      Key: 'script-started',
      UploadId: scriptUpload.uploadId,
      MultipartUpload: { Parts: [{ PartNumber: 1, ETag: sdkPart.ETag }] },
    }),
  );
  assert.equal(await ((await binding.get('script-started')) as { text(): Promise<string> }).text(), 'part via s3');

  const sdkUpload = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'sdk-started' }));
  const resumed = binding.resumeMultipartUpload('sdk-started', sdkUpload.UploadId!);
  const scriptPart = await resumed.uploadPart(1, 'part via binding');
  const completed = await resumed.complete([scriptPart]);
  const viaS3Again = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'sdk-started' }));
  assert.equal(await viaS3Again.Body!.transformToString(), 'part via binding');
  assert.equal(viaS3Again.ETag, completed.httpEtag);
});
