/**
 * Preconditions on every S3 operation, through a real listener with the AWS SDK: conditional
 * deletes (DeleteObject's If-Match, x-amz-if-match-size and -last-modified-time; DeleteObjects'
 * per-object ETag, Size and LastModifiedTime), If-Match on a missing key (404 NoSuchKey on
 * PutObject, CopyObject and CompleteMultipartUpload), CopyObject's destination conditions,
 * If-Range, and the refusal of conditions an operation does not evaluate.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  type S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { s3ErrorCode as code, startS3 } from './helpers.ts';

/** The command with a header the SDK would not send for it, added before the request is signed. */
function withHeader<C extends { middlewareStack: { add: (...args: never[]) => unknown } }>(command: C, name: string, value: string): C {
  (command.middlewareStack as unknown as { add: (middleware: unknown, options: unknown) => void }).add(
    (next: (args: unknown) => Promise<unknown>) => async (args: { request: { headers: Record<string, string> } }) => {
      args.request.headers[name] = value;
      return next(args);
    },
    { step: 'build' },
  );
  return command;
}

async function exists(client: S3Client, Bucket: string, Key: string): Promise<boolean> {
  try {
    await client.send(new HeadObjectCommand({ Bucket, Key }));
    return true;
  } catch {
    return false;
  }
}

test(
  'DeleteObject with If-Match: a wrong etag is 412 and deletes nothing; the right one or * deletes; a missing key is 404 NoSuchKey',
  { timeout: 10_000 },
  async (t) => {
    const { client, bucket } = await startS3(t);
    const put = await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'guarded', Body: 'keep me' }));
    await assert.rejects(
      client.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'guarded', IfMatch: '"0123456789abcdef0123456789abcdef"' })),
      code('PreconditionFailed', 412),
    );
    assert.ok(await exists(client, bucket, 'guarded'), 'a failed condition deletes nothing');
    const deleted = await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'guarded', IfMatch: put.ETag }));
    assert.equal(deleted.$metadata.httpStatusCode, 204);
    assert.ok(!(await exists(client, bucket, 'guarded')));
    await assert.rejects(client.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'guarded', IfMatch: '*' })), code('NoSuchKey', 404));
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'any', Body: 'x' }));
    await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'any', IfMatch: '*' }));
    assert.ok(!(await exists(client, bucket, 'any')));
    // Without a condition, a missing key is still a quiet 204.
    assert.equal((await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'never' }))).$metadata.httpStatusCode, 204);
  },
);

test('DeleteObject with x-amz-if-match-size and -last-modified-time: both must match the object', { timeout: 10_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'sized', Body: '12345' }));
  const { LastModified } = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'sized' }));
  await assert.rejects(client.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'sized', IfMatchSize: 4 })), code('PreconditionFailed', 412));
  await assert.rejects(
    client.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'sized', IfMatchLastModifiedTime: new Date(LastModified!.getTime() - 5000) })),
    code('PreconditionFailed', 412),
  );
  assert.ok(await exists(client, bucket, 'sized'));
  await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'sized', IfMatchSize: 5, IfMatchLastModifiedTime: LastModified }));
  assert.ok(!(await exists(client, bucket, 'sized')));
  await assert.rejects(client.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'sized', IfMatchSize: 5 })), code('NoSuchKey', 404));
});

test('a malformed x-amz-if-match-size is 400 InvalidArgument, never an unconditional delete', { timeout: 10_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'k', Body: 'x' }));
  await assert.rejects(
    client.send(withHeader(new DeleteObjectCommand({ Bucket: bucket, Key: 'k' }), 'x-amz-if-match-size', 'five')),
    code('InvalidArgument', 400),
  );
  assert.ok(await exists(client, bucket, 'k'));
});

test('DeleteObjects: per-object ETag, Size and LastModifiedTime; failures are Error entries, the rest deleted', { timeout: 10_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  const a = await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'a', Body: 'aaa' }));
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'b', Body: 'bbb' }));
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'c', Body: 'ccc' }));
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'd', Body: 'ddd' }));
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'e', Body: 'eee' }));
  const { LastModified } = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'e' }));
  const result = await client.send(
    new DeleteObjectsCommand({
      Bucket: bucket,
      Delete: {
        Objects: [
          { Key: 'a', ETag: a.ETag },
          { Key: 'b', ETag: '"ffffffffffffffffffffffffffffffff"' },
          { Key: 'c', Size: 2 },
          { Key: 'd' },
          { Key: 'e', LastModifiedTime: LastModified, Size: 3 },
          { Key: 'missing', ETag: '*' },
          { Key: 'versioned', VersionId: 'abc' },
        ],
      },
    }),
  );
  assert.deepEqual(result.Deleted?.map((entry) => entry.Key).sort(), ['a', 'd', 'e']);
  assert.deepEqual(result.Errors?.map((entry) => [entry.Key, entry.Code]).sort(), [
    ['b', 'PreconditionFailed'],
    ['c', 'PreconditionFailed'],
    ['missing', 'NoSuchKey'],
    ['versioned', 'InvalidArgument'],
  ]);
  assert.deepEqual(
    [await exists(client, bucket, 'a'), await exists(client, bucket, 'b'), await exists(client, bucket, 'c'), await exists(client, bucket, 'd')],
    [false, true, true, false],
  );
  // Quiet: only the errors.
  const quiet = await client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Quiet: true, Objects: [{ Key: 'b', ETag: '"0"' }, { Key: 'c' }] } }));
  assert.deepEqual([quiet.Deleted, quiet.Errors?.map((entry) => entry.Key)], [undefined, ['b']]);
});

test(
  'If-Match on a key with no object: PutObject, CopyObject and CompleteMultipartUpload answer 404 NoSuchKey; a wrong etag 412',
  { timeout: 10_000 },
  async (t) => {
    const { client, bucket } = await startS3(t);
    await assert.rejects(client.send(new PutObjectCommand({ Bucket: bucket, Key: 'nothing', Body: 'x', IfMatch: '"abc"' })), code('NoSuchKey', 404));
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'source', Body: 'copied' }));
    await assert.rejects(
      client.send(new CopyObjectCommand({ Bucket: bucket, Key: 'nothing', CopySource: `${bucket}/source`, IfMatch: '"abc"' })),
      code('NoSuchKey', 404),
    );
    const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'nothing' }));
    const part = await client.send(new UploadPartCommand({ Bucket: bucket, Key: 'nothing', UploadId, PartNumber: 1, Body: 'p' }));
    const complete = (IfMatch: string) =>
      client.send(
        new CompleteMultipartUploadCommand({
          Bucket: bucket,
          Key: 'nothing',
          UploadId,
          IfMatch,
          MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] },
        }),
      );
    await assert.rejects(complete('"abc"'), code('NoSuchKey', 404));
    assert.ok(!(await exists(client, bucket, 'nothing')));
    const existing = await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'nothing', Body: 'now there is' }));
    await assert.rejects(complete('"abc"'), code('PreconditionFailed', 412));
    await assert.rejects(client.send(new PutObjectCommand({ Bucket: bucket, Key: 'nothing', Body: 'x', IfMatch: '"abc"' })), code('PreconditionFailed', 412));
    assert.equal((await complete(existing.ETag!)).$metadata.httpStatusCode, 200, 'the upload stayed open through the failures');
  },
);

test('CopyObject evaluates If-Match / If-None-Match on its destination', { timeout: 10_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'source', Body: 'new bytes' }));
  const target = await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'target', Body: 'old bytes' }));
  await assert.rejects(
    client.send(new CopyObjectCommand({ Bucket: bucket, Key: 'target', CopySource: `${bucket}/source`, IfNoneMatch: '*' })),
    code('PreconditionFailed', 412),
  );
  await assert.rejects(
    client.send(new CopyObjectCommand({ Bucket: bucket, Key: 'target', CopySource: `${bucket}/source`, IfMatch: '"0000"' })),
    code('PreconditionFailed', 412),
  );
  assert.equal(await (await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'target' }))).Body!.transformToString(), 'old bytes');
  await client.send(new CopyObjectCommand({ Bucket: bucket, Key: 'target', CopySource: `${bucket}/source`, IfMatch: target.ETag }));
  assert.equal(await (await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'target' }))).Body!.transformToString(), 'new bytes');
  await client.send(new CopyObjectCommand({ Bucket: bucket, Key: 'fresh', CopySource: `${bucket}/source`, IfNoneMatch: '*' }));
  assert.ok(await exists(client, bucket, 'fresh'));
});

test('If-Range: a Range applies only while the object is the one named; otherwise the whole object', { timeout: 10_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  const put = await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'file', Body: '0123456789' }));
  const { LastModified } = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'file' }));
  // GetObject's input has no If-Range (browsers send it, resuming a download): added as a header.
  const get = (ifRange: string) => client.send(withHeader(new GetObjectCommand({ Bucket: bucket, Key: 'file', Range: 'bytes=2-4' }), 'if-range', ifRange));
  const ranged = await get(put.ETag!);
  assert.equal(await ranged.Body!.transformToString(), '234');
  assert.equal(ranged.$metadata.httpStatusCode, 206);
  const byDate = await get(LastModified!.toUTCString());
  assert.equal(await byDate.Body!.transformToString(), '234');
  // Changed since: the whole (new) object, 200.
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'file', Body: 'abcdefghij' }));
  const stale = await get(put.ETag!);
  assert.equal(stale.$metadata.httpStatusCode, 200);
  assert.equal(await stale.Body!.transformToString(), 'abcdefghij');
});

test('GetObject and HeadObject refuse x-amz-server-side-encryption with 400 InvalidArgument', { timeout: 10_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'k', Body: 'x' }));
  const withSse = <C extends GetObjectCommand | HeadObjectCommand>(command: C) =>
    client.send(withHeader(command, 'x-amz-server-side-encryption', 'AES256') as GetObjectCommand);
  await assert.rejects(withSse(new GetObjectCommand({ Bucket: bucket, Key: 'k' })), code('InvalidArgument', 400));
  await assert.rejects(
    withSse(new HeadObjectCommand({ Bucket: bucket, Key: 'k' })),
    (error: Error & { $metadata?: { httpStatusCode?: number } }) => error.$metadata?.httpStatusCode === 400,
  );
});

test('a condition on an operation that does not evaluate one is 501 NotImplemented, and changes nothing', { timeout: 10_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'mpu' }));
  const command = withHeader(new UploadPartCommand({ Bucket: bucket, Key: 'mpu', UploadId, PartNumber: 1, Body: 'p' }), 'if-match', '"abc"');
  await assert.rejects(client.send(command), code('NotImplemented', 501));
});
