/**
 * Bad input to the S3 API is S3's 400-class error, never InternalError: paths whose escapes are
 * malformed or not UTF-8 are InvalidURI before any authentication work, a copy source likewise is
 * InvalidArgument, and request documents nested past the parser's depth limit are MalformedXML.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  PutObjectCommand,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { REQUEST_XML_MAX_DEPTH } from '../../../src/store/s3/xml.ts';
import { replaceDocuments, s3ErrorCode, startS3 } from './helpers.ts';

const INVALID_URI = /^<\?xml version="1\.0" encoding="UTF-8"\?>\n<Error><Code>InvalidURI<\/Code><Message>Couldn&apos;t parse the specified URI\.<\/Message>/;

test('a path with a malformed or non-UTF-8 escape is 400 InvalidURI, signed or not, before authentication', { timeout: 30_000 }, async (t) => {
  const { endpoint, client, bucket } = await startS3(t);
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'kept', Body: 'still here' }));
  for (const path of ['/anybucket/%FF', '/anybucket/%E0%A4', '/anybucket/%G1', '/anybucket/%', `/${bucket}/a%C3`, '/%FF', '/anybucket/ok%2Fthen%80']) {
    for (const method of ['GET', 'PUT', 'DELETE', 'POST']) {
      const response = await fetch(`${endpoint}${path}`, { method, ...(method === 'PUT' || method === 'POST' ? { body: 'x' } : {}) });
      const body = await response.text();
      assert.equal(response.status, 400, `${method} ${path}: ${body}`);
      assert.match(body, INVALID_URI, `${method} ${path}`);
    }
    const head = await fetch(`${endpoint}${path}`, { method: 'HEAD' });
    assert.deepEqual([head.status, await head.text()], [400, ''], `HEAD ${path}`);
  }
  // Signed with a real key: the same answer (the path is read before the signature is checked).
  client.middlewareStack.add(
    (next) => async (args) => {
      (args.request as { path: string }).path += '%FF';
      return next(args);
    },
    { step: 'build', name: 'badEscape' },
  );
  await assert.rejects(client.send(new GetObjectCommand({ Bucket: bucket, Key: 'kept' })), s3ErrorCode('InvalidURI', 400));
});

test('a copy source with a malformed escape is 400 InvalidArgument', { timeout: 30_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'source', Body: 'x' }));
  for (const source of [`${bucket}/%FF`, `${bucket}/%E0%A4`, `${bucket}/%G1`]) {
    await assert.rejects(client.send(new CopyObjectCommand({ Bucket: bucket, Key: 'copy', CopySource: source })), s3ErrorCode('InvalidArgument', 400), source);
  }
  await client.send(new CopyObjectCommand({ Bucket: bucket, Key: 'copy', CopySource: `${bucket}/source` }));
});

test(`request documents nested deeper than ${REQUEST_XML_MAX_DEPTH} elements are MalformedXML, however deep`, { timeout: 30_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'kept', Body: 'still here' }));
  const replace = replaceDocuments(client);
  // The root and `levels` elements inside one another: levels + 1 deep.
  const nest = (root: string, levels: number, inner: string) => `<${root}>${'<x>'.repeat(levels)}${'</x>'.repeat(levels)}${inner}</${root}>`;
  for (const levels of [REQUEST_XML_MAX_DEPTH, 10_000, 250_000]) {
    replace(nest('Delete', levels, '<Object><Key>kept</Key></Object>'));
    await assert.rejects(
      client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: [{ Key: 'kept' }] } })),
      s3ErrorCode('MalformedXML', 400),
      `Delete, ${levels}`,
    );
  }
  const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'multi' }));
  replace(undefined);
  const { ETag } = await client.send(new UploadPartCommand({ Bucket: bucket, Key: 'multi', UploadId, PartNumber: 1, Body: 'part' }));
  replace(nest('CompleteMultipartUpload', 10_000, `<Part><PartNumber>1</PartNumber><ETag>${ETag}</ETag></Part>`));
  await assert.rejects(
    client.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: 'multi', UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag }] } })),
    s3ErrorCode('MalformedXML', 400),
  );
  // Within the limit, extra elements are ignored as before; the refusals above changed nothing.
  replace(nest('CompleteMultipartUpload', REQUEST_XML_MAX_DEPTH - 1, `<Part><PartNumber>1</PartNumber><ETag>${ETag}</ETag></Part>`));
  await client.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: 'multi', UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag }] } }));
  replace(undefined);
  assert.equal(await (await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'kept' }))).Body!.transformToString(), 'still here');
  assert.equal(await (await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'multi' }))).Body!.transformToString(), 'part');
});
