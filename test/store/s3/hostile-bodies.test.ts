/**
 * Request bodies that must change nothing: an aws-chunked PUT with no payload hash is verified
 * against its signature like any other body (a key id alone stores nothing), request documents
 * that are not well-formed XML are MalformedXML (a truncated DeleteObjects deletes nothing), and
 * CreateBucket's body must be a CreateBucketConfiguration. The whole-server matrix (oversized,
 * truncated, aborted bodies on every operation) is test/e2e/s3-hostile-bodies.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CreateBucketCommand, DeleteObjectsCommand, GetObjectCommand, HeadBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { ACCESS_KEY_ID, replaceDocuments, s3ErrorCode, startS3 } from './helpers.ts';

const amzDate = (): string => new Date().toISOString().replace(/[-:]|\.\d{3}/g, '');

test('an aws-chunked PUT with no payload hash and a garbage signature is 403 and stores nothing', { timeout: 30_000 }, async (t) => {
  const { endpoint, client, bucket } = await startS3(t);
  const date = amzDate();
  const response = await fetch(`${endpoint}/${bucket}/forged`, {
    method: 'PUT',
    body: '5\r\nhello\r\n0\r\n\r\n',
    headers: {
      'content-encoding': 'aws-chunked',
      'x-amz-decoded-content-length': '5',
      'x-amz-date': date,
      authorization: `AWS4-HMAC-SHA256 Credential=${ACCESS_KEY_ID}/${date.slice(0, 8)}/auto/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=${'0'.repeat(64)}`,
    },
  });
  const body = await response.text();
  assert.equal(response.status, 403, body);
  assert.match(body, /<Code>SignatureDoesNotMatch<\/Code>/);
  await assert.rejects(client.send(new GetObjectCommand({ Bucket: bucket, Key: 'forged' })), s3ErrorCode('NoSuchKey', 404));
});

test('request documents that are not well-formed XML are MalformedXML and change nothing', { timeout: 30_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'kept', Body: 'still here' }));
  const replace = replaceDocuments(client);
  for (const document of [
    '<Delete><Object><Key>kept</Key></Object>',
    '<Delete><Object><Key>kept</Key></Wrong></Delete>',
    '<Delete><Object><Key>kept</Key></Object></Delete>>>trailing<',
    'not xml at all',
    '<Delete><Object><Key>kept</Key></Obj ect></Delete>',
  ]) {
    replace(document);
    await assert.rejects(
      client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: [{ Key: 'kept' }] } })),
      s3ErrorCode('MalformedXML', 400),
      document,
    );
  }
  const kept = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'kept' }));
  assert.equal(await kept.Body!.transformToString(), 'still here');
  // CreateBucket: a configuration document is fine, anything else makes no bucket.
  replace('<CreateBucketConfiguration><LocationConstraint>auto</Location></CreateBucketConfiguration>');
  await assert.rejects(
    client.send(new CreateBucketCommand({ Bucket: 'garbled', CreateBucketConfiguration: { LocationConstraint: 'us-west-2' } })),
    s3ErrorCode('MalformedXML', 400),
  );
  replace('<Delete/>');
  await assert.rejects(
    client.send(new CreateBucketCommand({ Bucket: 'garbled', CreateBucketConfiguration: { LocationConstraint: 'us-west-2' } })),
    s3ErrorCode('MalformedXML', 400),
  );
  await assert.rejects(client.send(new HeadBucketCommand({ Bucket: 'garbled' })), { name: 'NotFound' });
  replace(undefined);
  await client.send(new CreateBucketCommand({ Bucket: 'configured', CreateBucketConfiguration: { LocationConstraint: 'us-west-2' } }));
  await client.send(new HeadBucketCommand({ Bucket: 'configured' }));
});
