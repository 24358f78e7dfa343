/**
 * Headers a presigner hoisted into a presigned URL's query are the request's headers, as on S3:
 * metadata and Content-Type-like x-amz-* values of a presigned PUT are stored, a header the
 * request really sent wins, and the presigned form's own parameters and checksums (the SDK signs the
 * empty body's CRC-32 into presigned PUTs; AWS ignores it) are never taken as headers.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import fc from 'fast-check';
import { applyHoistedHeaders } from '../../../src/store/s3/presigned-headers.ts';
import { startS3 } from './helpers.ts';

test('a presigned PUT stores the metadata its URL carries in the query', { timeout: 15_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  const url = await getSignedUrl(client, new PutObjectCommand({ Bucket: bucket, Key: 'meta.txt', Metadata: { owner: 'ann', team: 'blue' } }), {
    expiresIn: 60,
  });
  assert.match(url, /x-amz-meta-owner=ann/, 'the presigner hoists x-amz-meta-* into the query');
  const put = await fetch(url, { method: 'PUT', body: 'hello' });
  assert.equal(put.status, 200, await put.text());
  const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'meta.txt' }));
  assert.deepEqual(got.Metadata, { owner: 'ann', team: 'blue' });
  assert.equal(await got.Body!.transformToString(), 'hello');
});

test("a presigned CreateMultipartUpload keeps the query's metadata for the object it completes to", { timeout: 15_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  const url = await getSignedUrl(client, new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'big.bin', Metadata: { source: 'presigned' } }), {
    expiresIn: 60,
  });
  const created = await fetch(url, { method: 'POST' });
  const text = await created.text();
  assert.equal(created.status, 200, text);
  const uploadId = /<UploadId>(.+?)<\/UploadId>/.exec(text)?.[1];
  assert.ok(uploadId);
  const part = await client.send(new UploadPartCommand({ Bucket: bucket, Key: 'big.bin', UploadId: uploadId, PartNumber: 1, Body: 'one part' }));
  await client.send(
    new CompleteMultipartUploadCommand({
      Bucket: bucket,
      Key: 'big.bin',
      UploadId: uploadId,
      MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] },
    }),
  );
  assert.deepEqual((await client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'big.bin' }))).Metadata, { source: 'presigned' });
});

test("hoisted parameters: x-amz-* names only, never the signature's own, and a sent header wins", { timeout: 10_000 }, () => {
  const headers: Record<string, string | string[] | undefined> = { 'x-amz-meta-a': 'sent' };
  applyHoistedHeaders(
    headers,
    new URLSearchParams({
      'X-Amz-Algorithm': 'AWS4-HMAC-SHA256',
      'X-Amz-Signature': 'ab',
      'X-Amz-Credential': 'k/d/r/s3/aws4_request',
      'x-amz-content-sha256': 'UNSIGNED-PAYLOAD',
      'x-amz-meta-a': 'query',
      'X-Amz-Meta-B': 'b',
      'x-id': 'PutObject',
      partNumber: '1',
      'x-amz-checksum-crc32': 'AAAAAA==',
      'x-amz-sdk-checksum-algorithm': 'CRC32',
    }),
  );
  assert.deepEqual(headers, { 'x-amz-meta-a': 'sent', 'x-amz-meta-b': 'b' });
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.string(), fc.string()), { maxLength: 8 }), (pairs) => {
      const out: Record<string, string | string[] | undefined> = {};
      applyHoistedHeaders(out, new URLSearchParams(pairs));
      for (const name of Object.keys(out))
        assert.ok(name.startsWith('x-amz-') && name === name.toLowerCase() && !/signature|credential|algorithm|content-sha256|checksum/.test(name));
    }),
    { numRuns: 300 },
  );
});
