/**
 * SigV4 requests as S3 takes them, over a real listener: header values signed as the bytes
 * received, `Date` as the request time when there is no X-Amz-Date, presigned X-Amz-Expires
 * checked as S3 checks it, SigV2 refused as S3 refuses it where it takes SigV4 only, and
 * expectations other than 100-continue ignored.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { SignatureV4 } from '@smithy/signature-v4';
import { listen } from '../../../src/cli/listener.ts';
import { silentLogger } from '../../../src/core/log.ts';
import { adminKey } from '../../../src/store/s3/key-grant.ts';
import { createS3Listener } from '../../../src/store/s3/s3-handler.ts';
import { openTestEngine } from '../../helpers/engine.ts';
import { NodeSha256 } from '../../helpers/node-sha256.ts';
import { onTestEnd } from '../../helpers/cleanup.ts';
import { ACCESS_KEY_ID, SECRET, startS3 } from './helpers.ts';
import { s3Error, sendRaw, signRaw, utf8Bytes } from './raw-signing.ts';

const V2_REFUSED = 'The authorization mechanism you have provided is not supported. Please use AWS4-HMAC-SHA256.';

test('a signed header value is hashed as the bytes received: UTF-8, Latin-1 or any other, and never trimmed inside', { timeout: 10_000 }, async (t) => {
  const { client, bucket, endpoint } = await startS3(t);
  const url = new URL(endpoint);
  const signer = new SignatureV4({ service: 's3', region: 'auto', credentials: { accessKeyId: ACCESS_KEY_ID, secretAccessKey: SECRET }, sha256: NodeSha256 });
  // The AWS SDK's signer hashes a header value's UTF-8 (as botocore does): sent as those bytes, it verifies.
  const text = 'Hello Worldé, voilà';
  const signed = await signer.sign({
    method: 'PUT',
    protocol: 'http:',
    hostname: url.hostname,
    port: Number(url.port),
    path: `/${bucket}/sdk`,
    headers: { host: url.host, 'x-amz-meta-note': text, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' },
  });
  const asUtf8 = await sendRaw(endpoint, 'PUT', `/${bucket}/sdk`, { ...signed.headers, 'x-amz-meta-note': utf8Bytes(text) }, 'body');
  assert.equal(asUtf8.status, 200, asUtf8.body);
  // The same signature, the value sent as other bytes (node's default, Latin-1: E9 for é): not what was signed.
  const asLatin1 = await sendRaw(endpoint, 'PUT', `/${bucket}/sdk-latin1`, { ...signed.headers, 'x-amz-meta-note': text }, 'body');
  assert.deepEqual([s3Error(asLatin1).status, s3Error(asLatin1).code], [403, 'SignatureDoesNotMatch']);

  // Signed by the definition over bytes that are no UTF-8 (Latin-1 é), a lone 0xA0 (no white space
  // to S3: only ASCII spaces and tabs are trimmed and collapsed), and runs of spaces (collapsed).
  const headers = { 'x-amz-meta-latin1': '\xe9t\xe9', 'x-amz-meta-nbsp': 'a\xa0\xa0b\xa0', 'x-amz-meta-spaces': 'a  \t b' };
  const raw = await sendRaw(endpoint, 'PUT', `/${bucket}/raw`, signRaw(endpoint, { method: 'PUT', path: `/${bucket}/raw`, headers, at: new Date() }), 'body');
  assert.equal(raw.status, 200, raw.body);
  const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'raw' }));
  assert.equal(head.Metadata?.spaces, 'a  \t b', 'the value is stored as sent: only the signature collapses its spaces');
});

test('Date stands for X-Amz-Date when a header-signed request has none; neither is refused as S3 refuses it', { timeout: 10_000 }, async (t) => {
  const { client, bucket, endpoint } = await startS3(t);
  const put = (key: string, spec: Partial<Parameters<typeof signRaw>[1]>, extra: Record<string, string> = {}) =>
    sendRaw(
      endpoint,
      'PUT',
      `/${bucket}/${key}`,
      { ...signRaw(endpoint, { method: 'PUT', path: `/${bucket}/${key}`, headers: {}, at: new Date(), ...spec }), ...extra },
      key,
    );

  assert.equal((await put('by-date', { timeIn: 'date' })).status, 200);
  // Python's email.utils.formatdate (what botocore writes) gives -0000 for UTC.
  const now = new Date();
  assert.equal((await put('by-python-date', { timeIn: 'date', at: now, timeHeaderValue: now.toUTCString().replace('GMT', '-0000') })).status, 200);
  assert.equal(
    (await put('by-offset-date', { timeIn: 'date', at: now, timeHeaderValue: new Date(now.getTime() + 3600_000).toUTCString().replace('GMT', '+0100') }))
      .status,
    200,
  );
  assert.equal(await (await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'by-date' }))).Body!.transformToString(), 'by-date');

  // The same clock-skew window as X-Amz-Date's.
  assert.deepEqual(s3Error(await put('stale', { timeIn: 'date', at: new Date(Date.now() - 20 * 60_000) })).code, 'RequestTimeTooSkewed');
  // X-Amz-Date wins: a Date beside it is only a signed header.
  assert.equal((await put('both', { timeIn: 'x-amz-date' }, {})).status, 200);
  const both = signRaw(endpoint, {
    method: 'PUT',
    path: `/${bucket}/both-dates`,
    headers: { date: new Date(Date.now() - 3600_000).toUTCString() },
    at: new Date(),
  });
  assert.equal((await sendRaw(endpoint, 'PUT', `/${bucket}/both-dates`, both, 'x')).status, 200);

  const refused = { status: 403, code: 'AccessDenied', message: 'AWS authentication requires a valid Date or x-amz-date header' };
  assert.deepEqual(s3Error(await put('no-date', { timeIn: 'none' })), refused);
  assert.deepEqual(s3Error(await put('bad-date', { timeIn: 'date', timeHeaderValue: 'yesterday' })), refused);
  assert.deepEqual(s3Error(await put('bad-amz-date', { timeIn: 'x-amz-date', timeHeaderValue: now.toUTCString() })), refused, 'an X-Amz-Date in the HTTP form');
});

test('Signature Version 2, in a header or a query, is refused as S3 refuses it where it takes SigV4 only', { timeout: 10_000 }, async (t) => {
  const { client, bucket, endpoint } = await startS3(t);
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'k', Body: 'v' }));
  const v2Header = await sendRaw(endpoint, 'GET', `/${bucket}/k`, {
    date: new Date().toUTCString(),
    authorization: `AWS ${ACCESS_KEY_ID}:c2lnbmF0dXJlIG9mIHNvbWV0aGluZw==`,
  });
  assert.deepEqual(s3Error(v2Header), { status: 400, code: 'InvalidRequest', message: V2_REFUSED });
  const query = `AWSAccessKeyId=${ACCESS_KEY_ID}&Expires=${Math.floor(Date.now() / 1000) + 60}&Signature=c2lnbmF0dXJl`;
  for (const accept of ['*/*', 'text/html']) {
    const v2Query = await sendRaw(endpoint, 'GET', `/${bucket}/k?${query}`, { accept });
    assert.deepEqual(s3Error(v2Query), { status: 400, code: 'InvalidRequest', message: V2_REFUSED }, `Accept: ${accept}`);
    assert.ok(v2Query.headers['x-amz-request-id'], 'an S3 answer, with its request id');
  }
});

test('a presigned X-Amz-Expires is refused as S3 refuses it: negative, over a week, not a number, missing; 0 has expired', { timeout: 10_000 }, async (t) => {
  const { client, bucket, endpoint } = await startS3(t);
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'k', Body: 'v' }));
  const week = await getSignedUrl(client, new GetObjectCommand({ Bucket: bucket, Key: 'k' }), { expiresIn: 604800 });
  const answer = await fetch(week);
  assert.deepEqual([answer.status, await answer.text()], [200, 'v'], 'a week exactly is allowed');
  const withExpires = (value: string | undefined) => {
    const url = new URL(week);
    if (value === undefined) url.searchParams.delete('X-Amz-Expires');
    else url.searchParams.set('X-Amz-Expires', value);
    return sendRaw(endpoint, 'GET', url.pathname + url.search, {});
  };
  const parameterError = (message: string) => ({ status: 400, code: 'AuthorizationQueryParametersError', message });
  assert.deepEqual(s3Error(await withExpires('-1')), parameterError('X-Amz-Expires must be non-negative'));
  assert.deepEqual(s3Error(await withExpires('-1000')), parameterError('X-Amz-Expires must be non-negative'));
  assert.deepEqual(
    s3Error(await withExpires('604801')),
    parameterError('X-Amz-Expires must be less than a week (in seconds); that is, the given X-Amz-Expires must be less than 604800 seconds'),
  );
  assert.deepEqual(s3Error(await withExpires('1.5')), parameterError('X-Amz-Expires should be a number'));
  assert.deepEqual(s3Error(await withExpires('soon')), parameterError('X-Amz-Expires should be a number'));
  assert.deepEqual(
    s3Error(await withExpires(undefined)),
    parameterError(
      'Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters.',
    ),
  );
  assert.deepEqual(s3Error(await withExpires('0')), { status: 403, code: 'AccessDenied', message: 'Request has expired' });
  const otherAlgorithm = new URL(week);
  otherAlgorithm.searchParams.set('X-Amz-Algorithm', 'AWS4-ECDSA-P256-SHA256');
  assert.deepEqual(
    s3Error(await sendRaw(endpoint, 'GET', otherAlgorithm.pathname + otherAlgorithm.search, {})),
    parameterError('X-Amz-Algorithm only supports "AWS4-HMAC-SHA256"'),
  );
});

test('behind the S3 listener, an Expect other than 100-continue is ignored: the request is served, and refusals are S3 XML', { timeout: 20_000 }, async (t) => {
  const fixture = await openTestEngine(t);
  const handler = createS3Listener({
    engine: fixture.engine,
    clock: { now: () => Date.now() },
    logger: silentLogger,
    keys: (id) => (id === ACCESS_KEY_ID ? adminKey(SECRET) : undefined),
  });
  // As `edgeport start` listens (load shedding off: the machine is shared).
  const listener = await listen(handler, '127.0.0.1', 0, 'S3-compatible API', {
    surface: 's3',
    handlesExpectContinue: true,
    limits: { maxEventLoopDelayMs: 0 },
  });
  onTestEnd(t, () => listener.close());
  const endpoint = listener.url;
  const bucket = fixture.bucket;
  for (const [i, expect] of ['200', '', 'teapot'].entries()) {
    const path = `/${bucket}/expect-${i}`;
    const answer = await sendRaw(endpoint, 'PUT', path, { ...signRaw(endpoint, { method: 'PUT', path, headers: {}, at: new Date() }), expect }, `body ${i}`);
    assert.equal(answer.status, 200, `Expect: ${JSON.stringify(expect)}: ${answer.body}`);
  }
  const created = await sendRaw(endpoint, 'PUT', '/expected-bucket', {
    ...signRaw(endpoint, { method: 'PUT', path: '/expected-bucket', headers: {}, at: new Date() }),
    expect: '200',
  });
  assert.equal(created.status, 200, created.body);
  const client = new S3Client({ endpoint, region: 'auto', forcePathStyle: true, credentials: { accessKeyId: ACCESS_KEY_ID, secretAccessKey: SECRET } });
  t.after(() => client.destroy());
  assert.equal(await (await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'expect-1' }))).Body!.transformToString(), 'body 1');
  await client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'expect-2' }));

  const unsigned = await sendRaw(endpoint, 'PUT', `/${bucket}/anonymous`, { expect: 'teapot' }, 'x');
  assert.deepEqual([s3Error(unsigned).status, s3Error(unsigned).code], [403, 'AccessDenied']);
  assert.ok(unsigned.headers['x-amz-request-id'], 'an S3 answer, with its request id');
});
