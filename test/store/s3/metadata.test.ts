/**
 * User metadata values beyond US-ASCII, as S3 documents them: RFC 2047 encoded-words are decoded
 * on the way in, a raw UTF-8 value is taken as its text, and a value that is not printable ASCII
 * goes out as one `=?UTF-8?B?...?=` word; what a script sees (`customMetadata`) is the text, for
 * every write that takes metadata (PutObject, CopyObject, CreateMultipartUpload, presigned URLs,
 * POST forms) and the reverse. Standard headers (Content-Disposition...) beyond ASCII are kept as
 * the text their UTF-8 spells and sent back as the very bytes received.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { createStoreBucket } from '../../../src/store/binding/index.ts';
import { startS3 } from './helpers.ts';
import { sendRaw, signRaw, utf8Bytes } from './raw-signing.ts';

/** The encoded-word S3 sends a value as. */
const word = (text: string) => `=?UTF-8?B?${Buffer.from(text, 'utf8').toString('base64')}?=`;

test('a raw UTF-8 metadata value is stored as its text and read back as one UTF-8 encoded-word (GET and HEAD)', { timeout: 10_000 }, async (t) => {
  const { client, bucket, endpoint, engine } = await startS3(t);
  const headers = { 'x-amz-meta-meta1': utf8Bytes('Hello Worldé'), 'x-amz-meta-latin1': '\xe9t\xe9', 'x-amz-meta-plain': 'just ASCII' };
  const put = await sendRaw(endpoint, 'PUT', `/${bucket}/k`, signRaw(endpoint, { method: 'PUT', path: `/${bucket}/k`, headers, at: new Date() }), 'body');
  assert.equal(put.status, 200, put.body);
  const stored = await engine.head(bucket, 'k');
  // Bytes that are not UTF-8 are read one character a byte (Latin-1).
  assert.deepEqual(stored?.customMetadata, { meta1: 'Hello Worldé', latin1: 'été', plain: 'just ASCII' });
  const expected = { meta1: '=?UTF-8?B?SGVsbG8gV29ybGTDqQ==?=', latin1: word('été'), plain: 'just ASCII' };
  assert.deepEqual((await client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'k' }))).Metadata, expected);
  const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'k' }));
  assert.deepEqual(got.Metadata, expected);
  assert.equal(await got.Body!.transformToString(), 'body');
});

test(
  'standard headers sent as raw UTF-8 are kept as their text (what a script reads) and sent back over S3 as the same bytes; other bytes one character a byte',
  { timeout: 10_000 },
  async (t) => {
    const { bucket, endpoint, engine } = await startS3(t);
    const text = {
      'content-disposition': 'attachment; filename="naïve.txt"',
      'content-type': 'text/plain; title="日本語"',
      'cache-control': 'private, x-note="größe"',
      'content-language': 'fr',
    };
    const sent = Object.fromEntries(Object.entries(text).map(([name, value]) => [name, utf8Bytes(value)]));
    const path = `/${bucket}/naive`;
    // Signed over the bytes sent, as botocore signs a value's UTF-8: the signature still verifies.
    const put = await sendRaw(endpoint, 'PUT', path, signRaw(endpoint, { method: 'PUT', path, headers: sent, at: new Date() }), 'body');
    assert.equal(put.status, 200, put.body);
    const binding = createStoreBucket(engine, bucket, { listHonorsInclude: true });
    const object = await binding.head('naive');
    assert.deepEqual(object?.httpMetadata, {
      contentDisposition: text['content-disposition'],
      contentType: text['content-type'],
      cacheControl: text['cache-control'],
      contentLanguage: 'fr',
    });
    for (const method of ['GET', 'HEAD']) {
      const got = await sendRaw(endpoint, method, path, signRaw(endpoint, { method, path, headers: {}, at: new Date() }));
      assert.equal(got.status, 200, got.body);
      for (const name of Object.keys(sent)) assert.equal(got.headers[name], sent[name], `${method} ${name}: the bytes sent`);
    }

    // Bytes that are not UTF-8 are kept one character a byte (Latin-1).
    const latin1Path = `/${bucket}/latin1`;
    const latin1 = { 'content-disposition': 'attachment; filename="\xe9t\xe9.txt"' };
    const putLatin1 = await sendRaw(endpoint, 'PUT', latin1Path, signRaw(endpoint, { method: 'PUT', path: latin1Path, headers: latin1, at: new Date() }), 'x');
    assert.equal(putLatin1.status, 200, putLatin1.body);
    assert.equal((await binding.head('latin1'))?.httpMetadata.contentDisposition, 'attachment; filename="été.txt"');

    // A script's value beyond Latin-1 goes out as its UTF-8 (node would refuse it as a header string).
    await binding.put('scripted', 'x', { httpMetadata: { contentDisposition: 'attachment; filename="日本.txt"' } });
    const scriptedPath = `/${bucket}/scripted`;
    const scripted = await sendRaw(endpoint, 'GET', scriptedPath, signRaw(endpoint, { method: 'GET', path: scriptedPath, headers: {}, at: new Date() }));
    assert.equal(scripted.status, 200, scripted.body);
    assert.equal(scripted.headers['content-disposition'], utf8Bytes('attachment; filename="日本.txt"'));
  },
);

test('encoded-words in a value are decoded as RFC 2047 says; anything else is kept as written', { timeout: 10_000 }, async (t) => {
  const { client, bucket, engine } = await startS3(t);
  const cases: Array<[string, string]> = [
    [word('日本語'), '日本語'],
    ['=?utf-8?b?w6k=?=', 'é'],
    ['=?ISO-8859-1?Q?caf=E9_cr=E8me?=', 'café crème'],
    // White space between two adjacent encoded-words is dropped; around other text it stays.
    [`${word('a')} ${word('b')}`, 'ab'],
    [`price: ${word('€')} 5`, 'price: € 5'],
    // Not encoded-words that decode: kept.
    ['=?UTF-8?B?@@@?=', '=?UTF-8?B?@@@?='],
    ['=?no-such-charset?B?w6k=?=', '=?no-such-charset?B?w6k=?='],
    ['a=?b', 'a=?b'],
    ['', ''],
  ];
  for (const [i, [sent, text]] of cases.entries()) {
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: `k${i}`, Body: 'x', Metadata: { v: sent } }));
    assert.equal((await engine.head(bucket, `k${i}`))?.customMetadata.v, text, sent);
    const back = (await client.send(new HeadObjectCommand({ Bucket: bucket, Key: `k${i}` }))).Metadata?.v;
    assert.equal(back, /^[\t\x20-\x7e]*$/.test(text) ? text : word(text), sent);
  }
});

test('metadata a script stored is read over S3 as encoded-words; copies and multipart uploads keep the text', { timeout: 10_000 }, async (t) => {
  const { client, bucket, engine } = await startS3(t);
  await engine.put(bucket, 'scripted', new TextEncoder().encode('x'), { customMetadata: { emoji: '🙂', accent: 'é', control: 'a\nb', plain: 'p' } });
  assert.deepEqual((await client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'scripted' }))).Metadata, {
    emoji: word('🙂'),
    accent: word('é'),
    control: word('a\nb'),
    plain: 'p',
  });

  await client.send(new CopyObjectCommand({ Bucket: bucket, Key: 'copied', CopySource: `${bucket}/scripted` }));
  assert.deepEqual((await engine.head(bucket, 'copied'))?.customMetadata, { emoji: '🙂', accent: 'é', control: 'a\nb', plain: 'p' });
  await client.send(
    new CopyObjectCommand({
      Bucket: bucket,
      Key: 'replaced',
      CopySource: `${bucket}/scripted`,
      MetadataDirective: 'REPLACE',
      Metadata: { v: word('nouvelle') },
    }),
  );
  assert.deepEqual((await engine.head(bucket, 'replaced'))?.customMetadata, { v: 'nouvelle' });

  const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'multipart', Metadata: { v: word('größe') } }));
  const part = await client.send(new UploadPartCommand({ Bucket: bucket, Key: 'multipart', UploadId, PartNumber: 1, Body: 'only part' }));
  await client.send(
    new CompleteMultipartUploadCommand({ Bucket: bucket, Key: 'multipart', UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] } }),
  );
  assert.deepEqual((await engine.head(bucket, 'multipart'))?.customMetadata, { v: 'größe' });
  assert.deepEqual((await client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'multipart' }))).Metadata, { v: word('größe') });
});

test('metadata in a presigned URL and in a POST form is taken as its text too', { timeout: 10_000 }, async (t) => {
  const { client, bucket, engine, endpoint } = await startS3(t);
  // The presigner moves x-amz-meta-* into the query, percent-encoded UTF-8.
  const url = await getSignedUrl(client, new PutObjectCommand({ Bucket: bucket, Key: 'presigned', Metadata: { note: 'déjà vu €', plain: 'p' } }), {
    expiresIn: 60,
  });
  assert.match(url, /x-amz-meta-note=/);
  assert.equal((await fetch(url, { method: 'PUT', body: 'x' })).status, 200);
  assert.deepEqual((await engine.head(bucket, 'presigned'))?.customMetadata, { note: 'déjà vu €', plain: 'p' });

  const form = await createPresignedPost(client, {
    Bucket: bucket,
    Key: 'posted',
    Fields: { 'x-amz-meta-note': 'café €' },
    Conditions: [['eq', '$x-amz-meta-note', 'café €']],
  });
  const body = new FormData();
  for (const [name, value] of Object.entries(form.fields)) body.append(name, value);
  body.append('file', new Blob(['posted body']), 'f.txt');
  const posted = await fetch(form.url.startsWith('http') ? form.url : `${endpoint}/${bucket}`, { method: 'POST', body });
  assert.equal(posted.status, 204, await posted.text());
  assert.deepEqual((await engine.head(bucket, 'posted'))?.customMetadata, { note: 'café €' });
  assert.deepEqual((await client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'posted' }))).Metadata, { note: word('café €') });
});

test('metadata names a script stored that cannot be header names are counted in x-amz-missing-meta, never a 500', { timeout: 10_000 }, async (t) => {
  const { client, bucket, engine } = await startS3(t);
  const customMetadata = { 'with space': 'a', 'colon:name': 'b', naïve: 'c', ok: 'd' };
  await engine.put(bucket, 'names', new TextEncoder().encode('x'), { customMetadata });
  const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'names' }));
  assert.deepEqual([head.Metadata, head.MissingMeta], [{ ok: 'd' }, 3]);
  const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'names' }));
  assert.deepEqual([got.Metadata, got.MissingMeta, await got.Body!.transformToString()], [{ ok: 'd' }, 3, 'x']);
  assert.deepEqual((await engine.head(bucket, 'names'))?.customMetadata, customMetadata, 'kept as stored');
});

test("a response-* override beyond ASCII goes out as its UTF-8 bytes, as a stored header's does", { timeout: 10_000 }, async (t) => {
  const { client, bucket, endpoint } = await startS3(t);
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'k', Body: 'body' }));
  const disposition = 'attachment; filename="naïve 日本.txt"';
  const url = await getSignedUrl(client, new GetObjectCommand({ Bucket: bucket, Key: 'k', ResponseContentDisposition: disposition }), { expiresIn: 60 });
  const path = url.slice(endpoint.length);
  const got = await sendRaw(endpoint, 'GET', path, {});
  assert.equal(got.status, 200, got.body);
  assert.equal(got.headers['content-disposition'], utf8Bytes(disposition));
});
