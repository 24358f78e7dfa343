import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  CreateBucketCommand,
  DeleteBucketPolicyCommand,
  DeleteBucketTaggingCommand,
  DeleteObjectTaggingCommand,
  GetBucketAclCommand,
  GetBucketCorsCommand,
  GetBucketEncryptionCommand,
  GetBucketLifecycleConfigurationCommand,
  GetBucketPolicyCommand,
  GetBucketTaggingCommand,
  GetBucketVersioningCommand,
  GetObjectAclCommand,
  GetObjectCommand,
  GetObjectTaggingCommand,
  GetPublicAccessBlockCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectVersionsCommand,
  type ListObjectVersionsCommandOutput,
  PutBucketVersioningCommand,
  PutObjectAclCommand,
  PutObjectCommand,
  PutObjectTaggingCommand,
  CopyObjectCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectAttributesCommand,
  CreateMultipartUploadCommand,
  UploadPartCommand,
  CompleteMultipartUploadCommand,
  DeleteBucketOwnershipControlsCommand,
  GetBucketOwnershipControlsCommand,
  GetBucketPolicyStatusCommand,
  PutBucketOwnershipControlsCommand,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { allPages, replaceDocuments, s3ErrorCode, startS3 } from './helpers.ts';

const code = s3ErrorCode;

test('bucket and object configuration reads answer "none configured", as S3 does for a bucket that never had any', { timeout: 10_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  const versioning = await client.send(new GetBucketVersioningCommand({ Bucket: bucket }));
  assert.deepEqual([versioning.$metadata.httpStatusCode, versioning.Status, versioning.MFADelete], [200, undefined, undefined]);
  const acl = await client.send(new GetBucketAclCommand({ Bucket: bucket }));
  assert.deepEqual(
    [acl.Owner?.ID, acl.Grants?.map((g) => [g.Grantee?.Type, g.Grantee?.ID, g.Permission])],
    ['edgeport', [['CanonicalUser', 'edgeport', 'FULL_CONTROL']]],
  );
  await assert.rejects(client.send(new GetBucketPolicyCommand({ Bucket: bucket })), code('NoSuchBucketPolicy', 404));
  await assert.rejects(client.send(new GetBucketTaggingCommand({ Bucket: bucket })), code('NoSuchTagSet', 404));
  await assert.rejects(client.send(new GetBucketLifecycleConfigurationCommand({ Bucket: bucket })), code('NoSuchLifecycleConfiguration', 404));
  await assert.rejects(client.send(new GetBucketCorsCommand({ Bucket: bucket })), code('NoSuchCORSConfiguration', 404));
  await assert.rejects(client.send(new GetBucketEncryptionCommand({ Bucket: bucket })), code('ServerSideEncryptionConfigurationNotFoundError', 404));
  await assert.rejects(client.send(new GetPublicAccessBlockCommand({ Bucket: bucket })), code('NoSuchPublicAccessBlockConfiguration', 404));
  await assert.rejects(client.send(new GetBucketVersioningCommand({ Bucket: 'no-such-bucket' })), code('NoSuchBucket', 404));

  await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'k', Body: 'body' }));
  assert.deepEqual((await client.send(new GetObjectTaggingCommand({ Bucket: bucket, Key: 'k' }))).TagSet, []);
  assert.equal((await client.send(new GetObjectAclCommand({ Bucket: bucket, Key: 'k' }))).Grants?.[0]?.Permission, 'FULL_CONTROL');
  await assert.rejects(client.send(new GetObjectTaggingCommand({ Bucket: bucket, Key: 'missing' })), code('NoSuchKey', 404));
});

test('writing or deleting a subresource is NotImplemented and never touches the object or bucket it names', { timeout: 10_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'k', Body: 'the original body' }));
  await assert.rejects(
    client.send(new PutObjectTaggingCommand({ Bucket: bucket, Key: 'k', Tagging: { TagSet: [{ Key: 'a', Value: 'b' }] } })),
    code('NotImplemented', 501),
  );
  await assert.rejects(client.send(new PutObjectAclCommand({ Bucket: bucket, Key: 'k', ACL: 'public-read' })), code('NotImplemented', 501));
  await assert.rejects(client.send(new DeleteObjectTaggingCommand({ Bucket: bucket, Key: 'k' })), code('NotImplemented', 501));
  const object = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'k' }));
  assert.equal(await object.Body!.transformToString(), 'the original body', 'not overwritten by ?tagging or ?acl, not deleted');

  const empty = `${bucket}-empty`;
  await client.send(new HeadBucketCommand({ Bucket: bucket }));
  await client.send(new CreateBucketCommand({ Bucket: empty }));
  for (const command of [
    new DeleteBucketPolicyCommand({ Bucket: empty }),
    new DeleteBucketTaggingCommand({ Bucket: empty }),
    new PutBucketVersioningCommand({ Bucket: empty, VersioningConfiguration: { Status: 'Enabled' } }),
  ]) {
    await assert.rejects(client.send(command as Parameters<typeof client.send>[0]), code('NotImplemented', 501));
  }
  await client.send(new HeadBucketCommand({ Bucket: empty }));
});

test('an unversioned bucket: each object is its own null version; version id null works and others are refused', { timeout: 10_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  for (const Key of ['a', 'dir/b', 'dir/c', 'z']) await client.send(new PutObjectCommand({ Bucket: bucket, Key, Body: Key }));
  const all = await client.send(new ListObjectVersionsCommand({ Bucket: bucket }));
  assert.deepEqual(
    all.Versions?.map((v) => [v.Key, v.VersionId, v.IsLatest, v.Size]),
    [
      ['a', 'null', true, 1],
      ['dir/b', 'null', true, 5],
      ['dir/c', 'null', true, 5],
      ['z', 'null', true, 1],
    ],
  );
  assert.deepEqual([all.IsTruncated, all.DeleteMarkers], [false, undefined]);
  const grouped = await client.send(new ListObjectVersionsCommand({ Bucket: bucket, Delimiter: '/', MaxKeys: 2 }));
  assert.deepEqual(
    [
      grouped.Versions?.map((v) => v.Key),
      grouped.CommonPrefixes?.map((p) => p.Prefix),
      grouped.IsTruncated,
      grouped.NextKeyMarker,
      grouped.NextVersionIdMarker,
    ],
    [['a'], ['dir/'], true, 'dir/', undefined],
  );
  const rest = await client.send(new ListObjectVersionsCommand({ Bucket: bucket, Delimiter: '/', KeyMarker: 'dir/' }));
  assert.deepEqual(
    rest.Versions?.map((v) => v.Key),
    ['z'],
  );
  await assert.rejects(client.send(new ListObjectVersionsCommand({ Bucket: bucket, KeyMarker: 'a', VersionIdMarker: 'v2' })), code('InvalidArgument', 400));

  assert.equal(await (await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'a', VersionId: 'null' }))).Body!.transformToString(), 'a');
  await assert.rejects(client.send(new GetObjectCommand({ Bucket: bucket, Key: 'a', VersionId: '3HL4kqtJlcpXroDTDmJ' })), code('InvalidArgument', 400));
  await assert.rejects(
    client.send(new CopyObjectCommand({ Bucket: bucket, Key: 'copy', CopySource: `${bucket}/a?versionId=3HL4kqtJlcpXroDTDmJ` })),
    code('InvalidArgument', 400),
  );
  await assert.rejects(client.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'a', VersionId: '3HL4kqtJlcpXroDTDmJ' })), code('InvalidArgument', 400));
  await client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'a' }));
  // What "empty the bucket" tools do: list versions, delete each by version id.
  await client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: all.Versions!.map((v) => ({ Key: v.Key!, VersionId: v.VersionId! })) } }));
  assert.equal((await client.send(new ListObjectVersionsCommand({ Bucket: bucket }))).Versions, undefined);
});

test('ListObjectVersions pages through any keys exactly once, for any page size and delimiter', { timeout: 10_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  const keys = ['a', 'a/1', 'a/2', 'a/b/1', 'b', 'b/1', 'c/1', 'c/2', 'c/3', 'd', 'é/1', 'z/z'];
  for (const Key of keys) await client.send(new PutObjectCommand({ Bucket: bucket, Key, Body: 'x' }));
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: 1, max: 5 }), fc.constantFrom(undefined, '/'), fc.constantFrom('', 'a', 'c/'), async (maxKeys, delimiter, prefix) => {
      const whole = await client.send(new ListObjectVersionsCommand({ Bucket: bucket, Prefix: prefix, Delimiter: delimiter }));
      const entries = (result: ListObjectVersionsCommandOutput) => [
        ...(result.Versions ?? []).map((v) => v.Key!),
        ...(result.CommonPrefixes ?? []).map((p) => p.Prefix!),
      ];
      const seen = await allPages<{ KeyMarker?: string; VersionIdMarker?: string }>(async (markers) => {
        const result = await client.send(new ListObjectVersionsCommand({ Bucket: bucket, Prefix: prefix, Delimiter: delimiter, MaxKeys: maxKeys, ...markers }));
        return {
          entries: entries(result),
          ...(result.IsTruncated ? { next: { KeyMarker: result.NextKeyMarker, VersionIdMarker: result.NextVersionIdMarker } } : {}),
        };
      });
      assert.deepEqual(seen.sort(), entries(whole).sort());
    }),
    { numRuns: 25 },
  );
});

test('GetObjectAttributes: etag, checksum, parts, storage class and size, as asked', { timeout: 10_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  const put = await client.send(
    new PutObjectCommand({ Bucket: bucket, Key: 'one', Body: 'single part', ChecksumAlgorithm: 'SHA256', StorageClass: 'STANDARD_IA' }),
  );
  const all = await client.send(
    new GetObjectAttributesCommand({ Bucket: bucket, Key: 'one', ObjectAttributes: ['ETag', 'Checksum', 'ObjectParts', 'StorageClass', 'ObjectSize'] }),
  );
  assert.deepEqual(
    [all.ETag, all.Checksum?.ChecksumSHA256, all.Checksum?.ChecksumType, all.ObjectParts, all.StorageClass, all.ObjectSize],
    [put.ETag!.slice(1, -1), put.ChecksumSHA256, 'FULL_OBJECT', undefined, 'STANDARD_IA', 11],
  );
  assert.ok(all.LastModified instanceof Date);
  const some = await client.send(new GetObjectAttributesCommand({ Bucket: bucket, Key: 'one', ObjectAttributes: ['ObjectSize'] }));
  assert.deepEqual([some.ETag, some.Checksum, some.ObjectSize], [undefined, undefined, 11]);

  const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'two' }));
  const p1 = await client.send(new UploadPartCommand({ Bucket: bucket, Key: 'two', UploadId, PartNumber: 1, Body: Buffer.alloc(5 * 1024 * 1024) }));
  const p2 = await client.send(new UploadPartCommand({ Bucket: bucket, Key: 'two', UploadId, PartNumber: 2, Body: 'end' }));
  await client.send(
    new CompleteMultipartUploadCommand({
      Bucket: bucket,
      Key: 'two',
      UploadId,
      MultipartUpload: {
        Parts: [
          { PartNumber: 1, ETag: p1.ETag },
          { PartNumber: 2, ETag: p2.ETag },
        ],
      },
    }),
  );
  const multipart = await client.send(
    new GetObjectAttributesCommand({ Bucket: bucket, Key: 'two', ObjectAttributes: ['ObjectParts', 'Checksum', 'ObjectSize'] }),
  );
  assert.deepEqual([multipart.ObjectParts?.TotalPartsCount, multipart.Checksum, multipart.ObjectSize], [2, undefined, 5 * 1024 * 1024 + 3]);

  await assert.rejects(client.send(new GetObjectAttributesCommand({ Bucket: bucket, Key: 'one', ObjectAttributes: [] })), code('InvalidRequest', 400));
  await assert.rejects(
    client.send(new GetObjectAttributesCommand({ Bucket: bucket, Key: 'one', ObjectAttributes: ['Colour' as 'ETag'] })),
    code('InvalidArgument', 400),
  );
  await assert.rejects(client.send(new GetObjectAttributesCommand({ Bucket: bucket, Key: 'missing', ObjectAttributes: ['ETag'] })), code('NoSuchKey', 404));
});

test('ownership controls: every bucket is BucketOwnerEnforced; putting that is accepted, anything else changes nothing', { timeout: 10_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  const enforced = `${bucket}-enforced`;
  await client.send(new CreateBucketCommand({ Bucket: enforced, ObjectOwnership: 'BucketOwnerEnforced' }));
  const rules = async (name: string) => (await client.send(new GetBucketOwnershipControlsCommand({ Bucket: name }))).OwnershipControls?.Rules;
  // As S3 answers for every bucket made since April 2023, with or without the header at creation.
  assert.deepEqual(await rules(bucket), [{ ObjectOwnership: 'BucketOwnerEnforced' }]);
  assert.deepEqual(await rules(enforced), [{ ObjectOwnership: 'BucketOwnerEnforced' }]);
  await assert.rejects(client.send(new GetBucketOwnershipControlsCommand({ Bucket: 'no-such-bucket' })), code('NoSuchBucket', 404));

  const put = await client.send(
    new PutBucketOwnershipControlsCommand({ Bucket: bucket, OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] } }),
  );
  assert.equal(put.$metadata.httpStatusCode, 200);
  for (const ObjectOwnership of ['BucketOwnerPreferred', 'ObjectWriter'] as const) {
    await assert.rejects(
      client.send(new PutBucketOwnershipControlsCommand({ Bucket: bucket, OwnershipControls: { Rules: [{ ObjectOwnership }] } })),
      (error) => {
        assert.ok(error instanceof S3ServiceException);
        assert.deepEqual([error.name, error.$metadata.httpStatusCode], ['NotImplemented', 501]);
        assert.match(error.message, new RegExp(`ObjectOwnership ${ObjectOwnership} .*BucketOwnerEnforced`));
        return true;
      },
    );
  }
  await assert.rejects(client.send(new DeleteBucketOwnershipControlsCommand({ Bucket: bucket })), (error) => {
    assert.ok(error instanceof S3ServiceException);
    assert.deepEqual([error.name, error.$metadata.httpStatusCode], ['NotImplemented', 501]);
    assert.match(error.message, /every bucket is BucketOwnerEnforced and keeps that rule/);
    return true;
  });
  assert.deepEqual(await rules(bucket), [{ ObjectOwnership: 'BucketOwnerEnforced' }], 'nothing refused changed the rule');
  await assert.rejects(
    client.send(
      new PutBucketOwnershipControlsCommand({ Bucket: 'no-such-bucket', OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] } }),
    ),
    code('NoSuchBucket', 404),
  );
  // Documents that are no OwnershipControls with one known rule (the SDK's checksum is made over each).
  const replace = replaceDocuments(client);
  for (const document of [
    '<OwnershipControls><Rule><ObjectOwnership>Everyone</ObjectOwnership></Rule></OwnershipControls>',
    '<OwnershipControls></OwnershipControls>',
    '<OwnershipControls><Rule><ObjectOwnership>BucketOwnerEnforced</ObjectOwnership></Rule><Rule><ObjectOwnership>BucketOwnerEnforced</ObjectOwnership></Rule></OwnershipControls>',
    '<OwnershipControls><Rule><ObjectOwnership>BucketOwnerEnforced</ObjectOwnership></Rule>',
  ]) {
    replace(document);
    await assert.rejects(
      client.send(new PutBucketOwnershipControlsCommand({ Bucket: bucket, OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] } })),
      code('MalformedXML', 400),
      document,
    );
  }
  replace(undefined);
});

test('GetBucketPolicyStatus of a bucket, which never has a policy, is NoSuchBucketPolicy, as S3 answers one without', { timeout: 10_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  await assert.rejects(client.send(new GetBucketPolicyStatusCommand({ Bucket: bucket })), code('NoSuchBucketPolicy', 404));
  await assert.rejects(client.send(new GetBucketPolicyStatusCommand({ Bucket: 'no-such-bucket' })), code('NoSuchBucket', 404));
});
