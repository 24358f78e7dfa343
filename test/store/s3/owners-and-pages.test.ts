/**
 * Listings as S3 shapes them: the Owner of listed objects, ListBuckets' pages (max-buckets,
 * continuation token, prefix, region), and GetObjectAttributes' pages of parts (checksums when kept).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import {
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  GetObjectAttributesCommand,
  ListBucketsCommand,
  ListObjectsCommand,
  ListObjectsV2Command,
  ListObjectVersionsCommand,
  paginateListBuckets,
  PutObjectCommand,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { s3ErrorCode, startS3 } from './helpers.ts';

const code = s3ErrorCode;
const MiB = 1024 * 1024;

test(
  "ListObjects always names each object's Owner, ListObjectsV2 only with fetch-owner, ListObjectVersions too: the ListBuckets owner",
  { timeout: 10_000 },
  async (t) => {
    const { client, bucket } = await startS3(t);
    for (const Key of ['a', 'dir/b']) await client.send(new PutObjectCommand({ Bucket: bucket, Key, Body: Key }));
    const { Owner } = await client.send(new ListBucketsCommand({}));
    assert.ok(Owner?.ID && Owner.DisplayName, 'ListBuckets names the owner');
    const owner = { ID: Owner.ID, DisplayName: Owner.DisplayName };

    const v1 = await client.send(new ListObjectsCommand({ Bucket: bucket }));
    assert.deepEqual(
      v1.Contents?.map((o) => [o.Key, o.Owner]),
      [
        ['a', owner],
        ['dir/b', owner],
      ],
    );
    const v2 = await client.send(new ListObjectsV2Command({ Bucket: bucket }));
    assert.deepEqual(
      v2.Contents?.map((o) => [o.Key, o.Owner]),
      [
        ['a', undefined],
        ['dir/b', undefined],
      ],
    );
    const v2False = await client.send(new ListObjectsV2Command({ Bucket: bucket, FetchOwner: false }));
    assert.deepEqual(
      v2False.Contents?.map((o) => o.Owner),
      [undefined, undefined],
    );
    const v2Owner = await client.send(new ListObjectsV2Command({ Bucket: bucket, FetchOwner: true, Delimiter: '/' }));
    assert.deepEqual(
      v2Owner.Contents?.map((o) => [o.Key, o.Owner]),
      [['a', owner]],
    );
    assert.deepEqual(v2Owner.CommonPrefixes, [{ Prefix: 'dir/' }]);
    const versions = await client.send(new ListObjectVersionsCommand({ Bucket: bucket }));
    assert.deepEqual(
      versions.Versions?.map((v) => v.Owner),
      [owner, owner],
    );

    await assert.rejects(client.send(new ListObjectsV2Command({ Bucket: bucket, FetchOwner: 'maybe' as unknown as boolean })), code('InvalidArgument', 400));
  },
);

test('ListBuckets pages: max-buckets, ContinuationToken, Prefix and BucketRegion, as S3 (and paginateListBuckets) expect', { timeout: 15_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  const names = [bucket];
  for (const suffix of ['logs-1', 'logs-2', 'logs-3', 'photos', 'zz']) {
    await client.send(new CreateBucketCommand({ Bucket: `${bucket}-${suffix}` }));
    names.push(`${bucket}-${suffix}`);
  }
  names.sort();

  const all = await client.send(new ListBucketsCommand({}));
  assert.deepEqual(
    all.Buckets?.map((b) => [b.Name, b.BucketRegion]),
    names.map((name) => [name, 'auto']),
  );
  assert.deepEqual([all.ContinuationToken, all.Prefix], [undefined, undefined], 'everything fits one page: no token');

  const pages: string[][] = [];
  for await (const page of paginateListBuckets({ client, pageSize: 2 }, {})) {
    pages.push(page.Buckets!.map((b) => b.Name!));
    assert.ok(page.Buckets!.length <= 2);
  }
  assert.deepEqual(pages.flat(), names, 'every bucket once, in name order');
  assert.equal(pages.length, 3);

  const first = await client.send(new ListBucketsCommand({ MaxBuckets: 2, Prefix: `${bucket}-logs` }));
  assert.deepEqual([first.Buckets?.map((b) => b.Name), first.Prefix], [[`${bucket}-logs-1`, `${bucket}-logs-2`], `${bucket}-logs`]);
  assert.ok(first.ContinuationToken, 'a truncated page names where to continue');
  const second = await client.send(new ListBucketsCommand({ MaxBuckets: 2, Prefix: `${bucket}-logs`, ContinuationToken: first.ContinuationToken }));
  assert.deepEqual([second.Buckets?.map((b) => b.Name), second.ContinuationToken], [[`${bucket}-logs-3`], undefined]);

  assert.deepEqual(
    (await client.send(new ListBucketsCommand({ BucketRegion: 'auto', Prefix: `${bucket}-z` }))).Buckets?.map((b) => b.Name),
    [`${bucket}-zz`],
  );
  assert.deepEqual((await client.send(new ListBucketsCommand({ BucketRegion: 'eu-west-1' }))).Buckets ?? [], []);

  for (const MaxBuckets of [0, 10_001, -1]) {
    await assert.rejects(client.send(new ListBucketsCommand({ MaxBuckets })), code('InvalidArgument', 400), `max-buckets ${MaxBuckets}`);
  }
  for (const ContinuationToken of ['not-a-token', Buffer.from('bucket:').toString('base64url'), `${first.ContinuationToken}=`]) {
    await assert.rejects(client.send(new ListBucketsCommand({ ContinuationToken })), code('InvalidArgument', 400), `token ${ContinuationToken}`);
  }
  assert.equal((await client.send(new ListBucketsCommand({ MaxBuckets: 10_000 }))).Buckets?.length, names.length);
});

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('base64');

test("GetObjectAttributes lists multipart objects' parts, checksums when kept, paged by max-parts and part-number-marker", { timeout: 30_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  const bodies = [Buffer.alloc(5 * MiB, 1), Buffer.alloc(5 * MiB, 2), Buffer.from('end')];
  const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'sums', ChecksumAlgorithm: 'SHA256' }));
  const Parts = [];
  for (const [index, Body] of bodies.entries()) {
    const part = await client.send(new UploadPartCommand({ Bucket: bucket, Key: 'sums', UploadId, PartNumber: index + 1, Body, ChecksumAlgorithm: 'SHA256' }));
    Parts.push({ PartNumber: index + 1, ETag: part.ETag, ChecksumSHA256: part.ChecksumSHA256 });
  }
  await client.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: 'sums', UploadId, MultipartUpload: { Parts } }));

  const expected = bodies.map((body, index) => ({ PartNumber: index + 1, Size: body.length, ChecksumSHA256: sha256(body) }));
  const whole = await client.send(new GetObjectAttributesCommand({ Bucket: bucket, Key: 'sums', ObjectAttributes: ['ObjectParts'] }));
  assert.deepEqual(whole.ObjectParts, {
    TotalPartsCount: 3,
    PartNumberMarker: '0',
    NextPartNumberMarker: '3',
    MaxParts: 1000,
    IsTruncated: false,
    Parts: expected,
  });

  const first = await client.send(new GetObjectAttributesCommand({ Bucket: bucket, Key: 'sums', ObjectAttributes: ['ObjectParts'], MaxParts: 2 }));
  assert.deepEqual(
    [first.ObjectParts?.Parts, first.ObjectParts?.IsTruncated, first.ObjectParts?.NextPartNumberMarker, first.ObjectParts?.MaxParts],
    [expected.slice(0, 2), true, '2', 2],
  );
  const rest = await client.send(
    new GetObjectAttributesCommand({
      Bucket: bucket,
      Key: 'sums',
      ObjectAttributes: ['ObjectParts'],
      MaxParts: 2,
      PartNumberMarker: first.ObjectParts!.NextPartNumberMarker,
    }),
  );
  assert.deepEqual(
    [rest.ObjectParts?.Parts, rest.ObjectParts?.IsTruncated, rest.ObjectParts?.PartNumberMarker, rest.ObjectParts?.TotalPartsCount],
    [expected.slice(2), false, '2', 3],
  );

  // An upload without checksums: its parts all the same, by number and size (S3 would add its
  // default CRC-64/NVME to each; edgeport adds none), paged alike.
  const { UploadId: plainId } = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'plain' }));
  const plainParts = [];
  for (const [index, Body] of bodies.entries()) {
    const part = await client.send(new UploadPartCommand({ Bucket: bucket, Key: 'plain', UploadId: plainId, PartNumber: index + 1, Body }));
    plainParts.push({ PartNumber: index + 1, ETag: part.ETag });
  }
  await client.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: 'plain', UploadId: plainId, MultipartUpload: { Parts: plainParts } }));
  const sizes = bodies.map((body, index) => ({ PartNumber: index + 1, Size: body.length }));
  const plain = await client.send(new GetObjectAttributesCommand({ Bucket: bucket, Key: 'plain', ObjectAttributes: ['ObjectParts', 'Checksum'] }));
  assert.deepEqual(
    [plain.Checksum, plain.ObjectParts],
    [undefined, { TotalPartsCount: 3, PartNumberMarker: '0', NextPartNumberMarker: '3', MaxParts: 1000, IsTruncated: false, Parts: sizes }],
  );
  const middle = await client.send(
    new GetObjectAttributesCommand({ Bucket: bucket, Key: 'plain', ObjectAttributes: ['ObjectParts'], MaxParts: 1, PartNumberMarker: '1' }),
  );
  assert.deepEqual(
    [middle.ObjectParts?.Parts, middle.ObjectParts?.IsTruncated, middle.ObjectParts?.NextPartNumberMarker, middle.ObjectParts?.TotalPartsCount],
    [sizes.slice(1, 2), true, '2', 3],
  );
  const past = await client.send(new GetObjectAttributesCommand({ Bucket: bucket, Key: 'plain', ObjectAttributes: ['ObjectParts'], PartNumberMarker: '3' }));
  assert.deepEqual([past.ObjectParts?.Parts, past.ObjectParts?.IsTruncated, past.ObjectParts?.TotalPartsCount], [undefined, false, 3]);

  for (const input of [{ MaxParts: -1 }, { PartNumberMarker: 'two' }]) {
    await assert.rejects(
      client.send(new GetObjectAttributesCommand({ Bucket: bucket, Key: 'sums', ObjectAttributes: ['ObjectParts'], ...input })),
      code('InvalidArgument', 400),
      JSON.stringify(input),
    );
  }
});
