import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  CreateBucketCommand, DeleteBucketCorsCommand, DeleteBucketPolicyCommand, DeleteBucketTaggingCommand, DeleteObjectTaggingCommand, GetBucketAclCommand,
  GetBucketCorsCommand, GetBucketEncryptionCommand, GetBucketLifecycleConfigurationCommand, GetBucketPolicyCommand,
  GetBucketTaggingCommand, GetBucketVersioningCommand, GetObjectAclCommand, GetObjectCommand, GetObjectTaggingCommand,
  GetPublicAccessBlockCommand, HeadBucketCommand, PutBucketVersioningCommand, PutObjectAclCommand, PutObjectCommand,
  PutObjectTaggingCommand,
} from '@aws-sdk/client-s3';
import { s3ErrorCode, startS3 } from './helpers.ts';

const code = s3ErrorCode;

test('bucket and object configuration reads answer "none configured", as S3 does for a bucket that never had any', async (t) => {
  const { client, bucket } = await startS3(t);
  const versioning = await client.send(new GetBucketVersioningCommand({ Bucket: bucket }));
  assert.deepEqual([versioning.$metadata.httpStatusCode, versioning.Status, versioning.MFADelete], [200, undefined, undefined]);
  const acl = await client.send(new GetBucketAclCommand({ Bucket: bucket }));
  assert.deepEqual([acl.Owner?.ID, acl.Grants?.map((g) => [g.Grantee?.Type, g.Grantee?.ID, g.Permission])], ['edgeport', [['CanonicalUser', 'edgeport', 'FULL_CONTROL']]]);
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

test('writing or deleting a subresource is NotImplemented and never touches the object or bucket it names', async (t) => {
  const { client, bucket } = await startS3(t);
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'k', Body: 'the original body' }));
  await assert.rejects(client.send(new PutObjectTaggingCommand({ Bucket: bucket, Key: 'k', Tagging: { TagSet: [{ Key: 'a', Value: 'b' }] } })), code('NotImplemented', 501));
  await assert.rejects(client.send(new PutObjectAclCommand({ Bucket: bucket, Key: 'k', ACL: 'public-read' })), code('NotImplemented', 501));
  await assert.rejects(client.send(new DeleteObjectTaggingCommand({ Bucket: bucket, Key: 'k' })), code('NotImplemented', 501));
  const object = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'k' }));
  assert.equal(await object.Body!.transformToString(), 'the original body', 'not overwritten by ?tagging or ?acl, not deleted');

  const empty = `${bucket}-empty`;
  await client.send(new HeadBucketCommand({ Bucket: bucket }));
  await client.send(new CreateBucketCommand({ Bucket: empty }));
  for (const command of [new DeleteBucketPolicyCommand({ Bucket: empty }), new DeleteBucketTaggingCommand({ Bucket: empty }), new DeleteBucketCorsCommand({ Bucket: empty }),
    new PutBucketVersioningCommand({ Bucket: empty, VersioningConfiguration: { Status: 'Enabled' } })]) {
    await assert.rejects(client.send(command as Parameters<typeof client.send>[0]), code('NotImplemented', 501));
  }
  await client.send(new HeadBucketCommand({ Bucket: empty }));
});
