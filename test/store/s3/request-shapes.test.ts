/**
 * Requests S3 would not take as sent are refused with an error that says what to send instead,
 * never half-understood: a storage class the store does not have, DeleteObjects and
 * CompleteMultipartUpload documents outside S3's schema, a partNumber that is no whole number,
 * an encoding-type other than url, ListObjects given ListObjectsV2's parameters (or another
 * list-type), bucket methods no operation has; and what S3 does ignore (an unknown x-amz-* header)
 * is ignored. Listing details clients page by: max-keys=0 and a NextMarker that is a common prefix.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsCommand,
  ListPartsCommand,
  PutObjectCommand,
  UploadPartCommand,
  AbortMultipartUploadCommand,
} from '@aws-sdk/client-s3';
import { replaceDocuments, s3ErrorCode, startS3 } from './helpers.ts';
import { s3Error, sendRaw, signRaw } from './raw-signing.ts';

const code = s3ErrorCode;

/** One request signed as S3 clients sign it; `query` is sent as written, so give it canonical and sorted by name. */
function signedSender(endpoint: string) {
  return (method: string, path: string, query = '', headers: Record<string, string> = {}, body?: string) =>
    sendRaw(endpoint, method, query === '' ? path : `${path}?${query}`, signRaw(endpoint, { method, path, query, headers, at: new Date() }), body);
}

test('a storage class the store does not have is 400 InvalidStorageClass on every write, and nothing is stored', { timeout: 10_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'source', Body: 'x' }));
  for (const StorageClass of ['GLACIER', 'DEEP_ARCHIVE', 'REDUCED_REDUNDANCY'] as const) {
    for (const [name, write] of [
      ['PutObject', () => client.send(new PutObjectCommand({ Bucket: bucket, Key: 'cold', Body: 'x', StorageClass }))],
      ['CreateMultipartUpload', () => client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'cold', StorageClass }))],
      ['CopyObject', () => client.send(new CopyObjectCommand({ Bucket: bucket, Key: 'cold', CopySource: `${bucket}/source`, StorageClass }))],
    ] as const) {
      await assert.rejects(write(), (error: Error) => {
        assert.ok(code('InvalidStorageClass', 400)(error), `${name} ${StorageClass}`);
        assert.match(error.message, new RegExp(`must be STANDARD or STANDARD_IA, not ${StorageClass}`));
        return true;
      });
    }
  }
  await assert.rejects(client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'cold' })), code('NotFound', 404));
});

test('DeleteObjects: an Object without a Key, or a Quiet that is no boolean, is MalformedXML and deletes nothing', { timeout: 10_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'keep', Body: 'x' }));
  const replace = replaceDocuments(client);
  const send = (document: string) => {
    replace(document);
    return client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: [{ Key: 'placeholder' }] } }));
  };
  for (const document of [
    '<Delete><Object><Key>keep</Key></Object><Object><NotKey>keep</NotKey></Object></Delete>',
    '<Delete><Object>keep</Object></Delete>',
    '<Delete><Object><Key><Inner>keep</Inner></Key></Object></Delete>',
    '<Delete><Quiet>TRUE</Quiet><Object><Key>keep</Key></Object></Delete>',
    '<Delete><Quiet>yes</Quiet><Object><Key>keep</Key></Object></Delete>',
    '<Delete><Quiet></Quiet><Object><Key>keep</Key></Object></Delete>',
  ]) {
    await assert.rejects(send(document), code('MalformedXML', 400), document);
    assert.equal((await client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'keep' }))).ContentLength, 1, document);
  }
  // xs:boolean's other spelling of true is quiet too.
  const quiet = await send('<Delete><Quiet>1</Quiet><Object><Key>keep</Key></Object></Delete>');
  replace(undefined);
  assert.deepEqual([quiet.Deleted, quiet.Errors], [undefined, undefined]);
  await assert.rejects(client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'keep' })), code('NotFound', 404));
});

test('multipart: a partNumber of digits only (01 is part 1), part numbers in the completion, and unknown uploads', { timeout: 10_000 }, async (t) => {
  const { client, bucket, endpoint } = await startS3(t);
  const send = signedSender(endpoint);
  const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'mp' }));
  const id = encodeURIComponent(UploadId!);
  const padded = await send('PUT', `/${bucket}/mp`, `partNumber=01&uploadId=${id}`, {}, 'part one');
  assert.equal(padded.status, 200, padded.body);
  for (const partNumber of ['1.0', '0x1', '1e0', '%201', '', '0', '10001', '-1']) {
    const answer = await send('PUT', `/${bucket}/mp`, `partNumber=${partNumber}&uploadId=${id}`, {}, 'not a part');
    assert.deepEqual(
      s3Error(answer),
      { status: 400, code: 'InvalidArgument', message: 'Part number must be an integer between 1 and 10000, inclusive.' },
      `partNumber=${partNumber}`,
    );
  }
  const parts = await client.send(new ListPartsCommand({ Bucket: bucket, Key: 'mp', UploadId }));
  assert.deepEqual(
    parts.Parts?.map((part) => [part.PartNumber, part.Size]),
    [[1, 8]],
  );

  const replace = replaceDocuments(client);
  const complete = (document: string) => {
    replace(document);
    return client.send(
      new CompleteMultipartUploadCommand({ Bucket: bucket, Key: 'mp', UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: '"x"' }] } }),
    );
  };
  const part = (number: string) =>
    `<CompleteMultipartUpload><Part><PartNumber>${number}</PartNumber><ETag>"${'0'.repeat(32)}"</ETag></Part></CompleteMultipartUpload>`;
  for (const number of ['abc', '1.5']) await assert.rejects(complete(part(number)), code('MalformedXML', 400), number);
  for (const number of ['0', '10001']) await assert.rejects(complete(part(number)), code('InvalidPart', 400), number);
  await assert.rejects(complete('<CompleteMultipartUpload></CompleteMultipartUpload>'), code('MalformedXML', 400));
  replace(undefined);
  assert.equal((await client.send(new ListPartsCommand({ Bucket: bucket, Key: 'mp', UploadId }))).Parts?.length, 1, 'the upload is still open');

  const unknown = 'no-such-upload';
  await assert.rejects(
    client.send(new UploadPartCommand({ Bucket: bucket, Key: 'mp', UploadId: unknown, PartNumber: 1, Body: 'x' })),
    code('NoSuchUpload', 404),
  );
  await assert.rejects(client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: 'mp', UploadId: unknown })), code('NoSuchUpload', 404));
  await assert.rejects(
    client.send(
      new CompleteMultipartUploadCommand({ Bucket: bucket, Key: 'mp', UploadId: unknown, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: '"x"' }] } }),
    ),
    code('NoSuchUpload', 404),
  );
});

test(
  'listings: encoding-type url or nothing; ListObjectsV2 parameters need list-type=2; max-keys=0; a common prefix as NextMarker',
  { timeout: 10_000 },
  async (t) => {
    const { client, bucket, endpoint } = await startS3(t);
    const send = signedSender(endpoint);
    for (const key of ['ls/a b.txt', 'ls/sub/c+d.txt', 'nm/a.txt', 'nm/sub/c.txt', 'nm/z.txt']) {
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: 'x' }));
    }
    await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'ls/up load' }));

    // url: keys (and the prefix) URL-encoded, `/` kept; every listing takes it.
    const v2 = await send('GET', `/${bucket}`, 'encoding-type=url&list-type=2&prefix=ls%2F');
    assert.match(v2.body, /<Prefix>ls\/<\/Prefix>/);
    assert.match(v2.body, /<Key>ls\/a%20b\.txt<\/Key>.*<Key>ls\/sub\/c%2Bd\.txt<\/Key>/s);
    assert.match(v2.body, /<EncodingType>url<\/EncodingType>/);
    assert.match((await send('GET', `/${bucket}`, 'encoding-type=url&prefix=ls%2F')).body, /<Key>ls\/a%20b\.txt<\/Key>/);
    assert.match((await send('GET', `/${bucket}`, 'encoding-type=url&prefix=ls%2F&versions=')).body, /<Key>ls\/a%20b\.txt<\/Key>/);
    assert.match((await send('GET', `/${bucket}`, 'encoding-type=url&uploads=')).body, /<Key>ls\/up%20load<\/Key>/);
    for (const query of ['encoding-type=weird&list-type=2', 'encoding-type=URL', 'encoding-type=weird&versions=', 'encoding-type=weird&uploads=']) {
      const refused = s3Error(await send('GET', `/${bucket}`, query));
      assert.deepEqual([refused.status, refused.code], [400, 'InvalidArgument'], query);
      assert.match(refused.message, /^Invalid Encoding Method specified in Request: encoding-type must be url \(or left out\), not "(weird|URL)"\.$/, query);
    }

    // ListObjects (no list-type) given a parameter only ListObjectsV2 has, or another list-type.
    for (const [query, message] of [
      ['continuation-token=x', 'continuation-token is a parameter of ListObjectsV2: add list-type=2 (ListObjects pages with marker).'],
      ['prefix=ls%2F&start-after=ls%2Fa', 'start-after is a parameter of ListObjectsV2: add list-type=2 (ListObjects pages with marker).'],
      ['list-type=3', 'list-type must be 2 (ListObjectsV2) or left out (ListObjects), not "3".'],
    ] as const) {
      assert.deepEqual(s3Error(await send('GET', `/${bucket}`, query)), { status: 400, code: 'InvalidArgument', message }, query);
    }
    const unknown = s3Error(await send('GET', `/${bucket}`, 'foobar=1&prefix=ls%2F'));
    assert.deepEqual([unknown.status, unknown.code, unknown.message], [501, 'NotImplemented', 'GET on a bucket with ?foobar is not implemented by edgeport.']);

    // max-keys=0 lists nothing and, as S3 answers, is not truncated.
    const zero = (await send('GET', `/${bucket}`, 'max-keys=0&prefix=ls%2F')).body;
    assert.deepEqual([/<IsTruncated>(.*?)</.exec(zero)?.[1], /<MaxKeys>(.*?)</.exec(zero)?.[1], zero.includes('<Contents>')], ['false', '0', false]);

    // A v1 page that ends on a common prefix names it as NextMarker, and resuming there skips the group.
    const first = await client.send(new ListObjectsCommand({ Bucket: bucket, Prefix: 'nm/', Delimiter: '/', MaxKeys: 2 }));
    assert.deepEqual(
      [first.IsTruncated, first.Contents?.map((o) => o.Key), first.CommonPrefixes?.map((p) => p.Prefix), first.NextMarker],
      [true, ['nm/a.txt'], ['nm/sub/'], 'nm/sub/'],
    );
    const next = await client.send(new ListObjectsCommand({ Bucket: bucket, Prefix: 'nm/', Delimiter: '/', Marker: first.NextMarker }));
    assert.deepEqual([next.IsTruncated, next.Contents?.map((o) => o.Key), next.CommonPrefixes], [false, ['nm/z.txt'], undefined]);
  },
);

test('bucket and object methods no operation has say what would be one; an unknown x-amz-* header is ignored', { timeout: 10_000 }, async (t) => {
  const { client, bucket, endpoint } = await startS3(t);
  const send = signedSender(endpoint);
  const post = s3Error(await send('POST', `/${bucket}`, '', {}, 'hello'));
  assert.deepEqual([post.status, post.code], [400, 'InvalidRequest']);
  assert.match(post.message, /DeleteObjects \(\?delete\) or a browser form upload \(POST Object/);
  assert.deepEqual([s3Error(await send('PATCH', `/${bucket}`)).status, s3Error(await send('PATCH', `/${bucket}`)).code], [405, 'MethodNotAllowed']);
  // POST on a key is no PutObject (S3's answer), so nothing is written.
  assert.deepEqual(s3Error(await send('POST', `/${bucket}/posted.txt`, '', {}, 'posted')).code, 'MethodNotAllowed');
  await assert.rejects(client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'posted.txt' })), code('NotFound', 404));

  // Copies: the value that is wrong is named.
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'source', Body: '0123456789' }));
  const copy = (headers: Record<string, string>) => send('PUT', `/${bucket}/copy`, '', headers);
  assert.deepEqual(s3Error(await copy({ 'x-amz-copy-source': `/${bucket}/source`, 'x-amz-metadata-directive': 'WAT' })), {
    status: 400,
    code: 'InvalidArgument',
    message: 'x-amz-metadata-directive must be COPY or REPLACE, not "WAT".',
  });
  assert.deepEqual(s3Error(await copy({ 'x-amz-copy-source': 'no-slash' })), {
    status: 400,
    code: 'InvalidArgument',
    message: 'x-amz-copy-source must be <bucket>/<key>, not "no-slash".',
  });
  const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'copied' }));
  for (const range of ['bytes=0-', 'bytes=5-2']) {
    const answer = await send('PUT', `/${bucket}/copied`, `partNumber=1&uploadId=${encodeURIComponent(UploadId!)}`, {
      'x-amz-copy-source': `/${bucket}/source`,
      'x-amz-copy-source-range': range,
    });
    assert.deepEqual(
      s3Error(answer),
      { status: 400, code: 'InvalidArgument', message: `x-amz-copy-source-range must be bytes=first-last, first <= last, not "${range}".` },
      range,
    );
  }

  // What S3 ignores: an x-amz-* header it does not know, x-amz-tagging on a read.
  assert.equal((await send('PUT', `/${bucket}/unknown-header`, '', { 'x-amz-foobar': 'whatever' }, 'stored')).status, 200);
  assert.equal(await (await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'unknown-header' }))).Body!.transformToString(), 'stored');
  const read = await send('GET', `/${bucket}/unknown-header`, '', { 'x-amz-tagging': 'a=b' });
  assert.deepEqual([read.status, read.body], [200, 'stored']);
});
