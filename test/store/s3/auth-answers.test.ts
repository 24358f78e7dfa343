/**
 * What a refused authentication says, over a real listener: a credential scope names the part that
 * is wrong (header and presigned forms), a presigned URL missing any of its parameters is told
 * which ones a presigned URL needs, a session token is refused (edgeport issues none), a wrong
 * signature shows the canonical request and string to sign it was checked against, authentication
 * comes before the bucket is looked up, and HEAD refusals carry no body.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { decodeXmlText } from '../../../src/store/s3/xml.ts';
import { ACCESS_KEY_ID, s3ErrorCode, SECRET, startS3 } from './helpers.ts';
import { amzDateOf, s3Error, sendRaw, signRaw } from './raw-signing.ts';

const MISSING_PARAMETERS =
  'Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters.';

test('a credential scope that is not <key>/<day>/<region>/s3/aws4_request is refused naming the part that is wrong', { timeout: 10_000 }, async (t) => {
  const { client, bucket, endpoint } = await startS3(t);
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'k', Body: 'v' }));
  const amzDate = amzDateOf(new Date());
  const day = amzDate.slice(0, 8);
  // The signature is never reached: the scope is refused first.
  const withCredential = (credential: string) =>
    sendRaw(endpoint, 'GET', `/${bucket}/k`, {
      'x-amz-date': amzDate,
      'x-amz-content-sha256': 'UNSIGNED-PAYLOAD',
      authorization: `AWS4-HMAC-SHA256 Credential=${credential}, SignedHeaders=host;x-amz-date, Signature=${'0'.repeat(64)}`,
    });
  const malformed = (why: string) => ({ status: 400, code: 'AuthorizationHeaderMalformed', message: `The authorization header is malformed; ${why}` });
  assert.deepEqual(
    s3Error(await withCredential(`${ACCESS_KEY_ID}/${day}/auto`)),
    malformed(
      `the Credential "${ACCESS_KEY_ID}/${day}/auto" is not <access key id>/<yyyymmdd>/<region>/s3/aws4_request (it has 3 slash-separated parts, not 5).`,
    ),
  );
  assert.deepEqual(
    s3Error(await withCredential(`${ACCESS_KEY_ID}/${day}/auto/sqs/aws4_request`)),
    malformed('incorrect service "sqs". This endpoint belongs to "s3".'),
  );
  assert.deepEqual(
    s3Error(await withCredential(`${ACCESS_KEY_ID}/${day}/auto/s3/aws4_requests`)),
    malformed('incorrect terminal "aws4_requests". This endpoint uses "aws4_request".'),
  );
  assert.deepEqual(
    s3Error(await withCredential(`${ACCESS_KEY_ID}/19990101/auto/s3/aws4_request`)),
    malformed(`Invalid credential date "19990101". This date is not the same as the request's X-Amz-Date (or Date), "${day}".`),
  );

  // The same in a presigned URL is an error of its X-Amz-Credential parameter.
  const url = new URL(await getSignedUrl(client, new GetObjectCommand({ Bucket: bucket, Key: 'k' }), { expiresIn: 60 }));
  const credential = url.searchParams.get('X-Amz-Credential')!;
  const withPresigned = (value: string) => {
    const tampered = new URL(url);
    tampered.searchParams.set('X-Amz-Credential', value);
    return sendRaw(endpoint, 'GET', tampered.pathname + tampered.search, {});
  };
  assert.deepEqual(s3Error(await withPresigned(credential.replace('/s3/', '/sqs/'))), {
    status: 400,
    code: 'AuthorizationQueryParametersError',
    message: 'Error parsing the X-Amz-Credential parameter; incorrect service "sqs". This endpoint belongs to "s3".',
  });
  const signedDay = url.searchParams.get('X-Amz-Date')!.slice(0, 8);
  assert.deepEqual(s3Error(await withPresigned(credential.replace(`/${signedDay}/`, '/19990101/'))), {
    status: 400,
    code: 'AuthorizationQueryParametersError',
    message: `Error parsing the X-Amz-Credential parameter; Invalid credential date "19990101". This date is not the same as X-Amz-Date, "${signedDay}".`,
  });
});

test('a presigned URL missing any of its parameters is told which a presigned URL needs, not that it is unsigned', { timeout: 10_000 }, async (t) => {
  const { client, bucket, endpoint } = await startS3(t);
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'k', Body: 'v' }));
  const url = new URL(await getSignedUrl(client, new GetObjectCommand({ Bucket: bucket, Key: 'k' }), { expiresIn: 60 }));
  const without = (...names: string[]) => {
    const cut = new URL(url);
    for (const name of names) cut.searchParams.delete(name);
    return sendRaw(endpoint, 'GET', cut.pathname + cut.search, {});
  };
  const missing = { status: 400, code: 'AuthorizationQueryParametersError', message: MISSING_PARAMETERS };
  // A URL cut short (copied without its tail, or its algorithm dropped): not an anonymous request.
  assert.deepEqual(s3Error(await without('X-Amz-Algorithm', 'X-Amz-Signature')), missing);
  assert.deepEqual(s3Error(await without('X-Amz-Algorithm')), missing);
  for (const name of ['X-Amz-Signature', 'X-Amz-Credential', 'X-Amz-Date', 'X-Amz-SignedHeaders']) {
    assert.deepEqual(s3Error(await without(name)), missing, `without ${name}`);
  }
  const whole = await sendRaw(endpoint, 'GET', url.pathname + url.search, {});
  assert.deepEqual([whole.status, whole.body], [200, 'v']);
  const none = await sendRaw(endpoint, 'GET', `/${bucket}/k`, {});
  assert.deepEqual([s3Error(none).status, s3Error(none).code], [403, 'AccessDenied'], 'no signature at all is still AccessDenied');
});

test('a session token (temporary credentials) is 400 InvalidToken, in a header or a presigned URL, and nothing is written', { timeout: 10_000 }, async (t) => {
  const { client, bucket, endpoint } = await startS3(t);
  const temporary = new S3Client({
    endpoint,
    region: 'auto',
    forcePathStyle: true,
    credentials: { accessKeyId: ACCESS_KEY_ID, secretAccessKey: SECRET, sessionToken: 'FwoGZXIvYXdzEBYaDEXAMPLE' },
  });
  t.after(() => temporary.destroy());
  await assert.rejects(temporary.send(new PutObjectCommand({ Bucket: bucket, Key: 'k', Body: 'v' })), s3ErrorCode('InvalidToken', 400));
  await assert.rejects(client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'k' })), s3ErrorCode('NotFound', 404));
  const presigned = new URL(await getSignedUrl(temporary, new PutObjectCommand({ Bucket: bucket, Key: 'k' }), { expiresIn: 60 }));
  assert.ok(presigned.searchParams.has('X-Amz-Security-Token'));
  const answer = await sendRaw(endpoint, 'PUT', presigned.pathname + presigned.search, {}, 'v');
  const error = s3Error(answer);
  assert.deepEqual([error.status, error.code], [400, 'InvalidToken']);
  assert.match(error.message, /edgeport access keys are long-lived and have no session token/);
  await assert.rejects(client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'k' })), s3ErrorCode('NotFound', 404));
});

test('SignatureDoesNotMatch shows the canonical request and the string to sign the signature was checked against', { timeout: 10_000 }, async (t) => {
  const { client, bucket, endpoint } = await startS3(t);
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'presigned.txt', Body: 'v' }));
  const url = new URL(await getSignedUrl(client, new GetObjectCommand({ Bucket: bucket, Key: 'presigned.txt' }), { expiresIn: 60 }));
  url.pathname = url.pathname.replace('presigned', 'evil');
  const answer = await sendRaw(endpoint, 'GET', url.pathname + url.search, {});
  assert.deepEqual([s3Error(answer).status, s3Error(answer).code], [403, 'SignatureDoesNotMatch']);
  const field = (name: string) => decodeXmlText(new RegExp(`<${name}>(.*?)</${name}>`, 's').exec(answer.body)?.[1] ?? '');
  assert.equal(field('AWSAccessKeyId'), ACCESS_KEY_ID);
  assert.equal(field('SignatureProvided'), url.searchParams.get('X-Amz-Signature'));
  const canonical = field('CanonicalRequest');
  assert.equal(canonical.split('\n').slice(0, 2).join('\n'), `GET\n/${bucket}/evil.txt`, 'the path the server saw');
  assert.equal(canonical.split('\n').at(-1), 'UNSIGNED-PAYLOAD');
  const [algorithm, amzDate, scope, hash] = field('StringToSign').split('\n');
  assert.deepEqual(
    [algorithm, amzDate, scope, hash],
    [
      'AWS4-HMAC-SHA256',
      url.searchParams.get('X-Amz-Date'),
      url.searchParams.get('X-Amz-Credential')!.split('/').slice(1).join('/'),
      createHash('sha256').update(canonical).digest('hex'),
    ],
  );

  // Header-signed with another secret: the same fields.
  const path = `/${bucket}/presigned.txt`;
  const wrong = await sendRaw(endpoint, 'GET', path, signRaw(endpoint, { method: 'GET', path, headers: {}, at: new Date() }, 'not-the-secret'));
  assert.equal(s3Error(wrong).code, 'SignatureDoesNotMatch');
  assert.match(wrong.body, /<CanonicalRequest>GET&#10;\/[^<]*presigned\.txt&#10;/);
  assert.match(wrong.body, /<StringToSign>AWS4-HMAC-SHA256&#10;/);

  // A signed SSE-C key is a secret: its line is shown without it.
  const key = Buffer.alloc(32, 7).toString('base64');
  const sseC = {
    'x-amz-server-side-encryption-customer-algorithm': 'AES256',
    'x-amz-server-side-encryption-customer-key': key,
    'x-amz-server-side-encryption-customer-key-md5': createHash('md5').update(Buffer.alloc(32, 7)).digest('base64'),
  };
  const keyed = await sendRaw(endpoint, 'GET', path, signRaw(endpoint, { method: 'GET', path, headers: sseC, at: new Date() }, 'not-the-secret'));
  assert.equal(s3Error(keyed).code, 'SignatureDoesNotMatch');
  assert.ok(!keyed.body.includes(key), 'the key is not in the answer');
  assert.match(
    keyed.body,
    /&#10;x-amz-server-side-encryption-customer-key:&lt;an SSE-C key is never shown&gt;&#10;x-amz-server-side-encryption-customer-key-md5:/,
  );
});

test('authentication comes first: a wrong signature on a bucket that does not exist is 403, and HEAD refusals have no body', { timeout: 10_000 }, async (t) => {
  const { bucket, endpoint } = await startS3(t);
  const signed = (method: string, path: string, secret?: string) =>
    sendRaw(endpoint, method, path, signRaw(endpoint, { method, path, headers: {}, at: new Date() }, secret));
  assert.deepEqual(s3Error(await signed('GET', '/no-such-bucket/k', 'not-the-secret')).code, 'SignatureDoesNotMatch');
  assert.deepEqual(s3Error(await signed('GET', '/no-such-bucket/k')).code, 'NoSuchBucket');
  for (const [path, secret, status] of [
    ['/no-such-bucket/k', undefined, 404],
    [`/${bucket}/missing`, undefined, 404],
    [`/${bucket}/missing`, 'not-the-secret', 403],
  ] as const) {
    const head = await signed('HEAD', path, secret);
    assert.deepEqual([head.status, head.body], [status, ''], `HEAD ${path}`);
  }
});
