/**
 * No request body can end the process: the real `edgeport start`, driven over raw sockets (an SDK
 * would refuse to send these), gets every S3 operation that reads its body with an oversized body,
 * a truncated one (Content-Length larger than what is sent, then the client half-closes), an
 * aborted one (the socket destroyed mid-body), a malformed one (validly signed garbage) and a bad
 * signature over a body whose hash is not declared (so the signature is checked from the body).
 * Each is answered 4xx, or the connection is closed, and afterwards the process is still running
 * and an honest signed request succeeds. The request that used to crash the server (a 3 MB
 * POST ?delete with a garbage signature) and CR/LF in GetObject's response-* parameters are here too.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { CreateBucketCommand, CreateMultipartUploadCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { SignatureV4 } from '@smithy/signature-v4';
import { hasExited } from '../helpers/child-processes.ts';
import { startEdgeport } from '../helpers/edgeport-server.ts';
import { bodyOf, statusOf } from '../helpers/raw-connections.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { NodeSha256 } from '../helpers/node-sha256.ts';

const KEY_ID = 'EDGEPORTHOSTILE00001';
const SECRET = 'hostile-bodies-secret-0123456789abcdef';
const BUCKET = 'photos';
const MiB = 1024 * 1024;
const OVERSIZE = 3 * MiB;

// applyChecksum: false sends no x-amz-content-sha256, so the server checks the signature from the body (deferred).
const signer = new SignatureV4({
  service: 's3',
  region: 'auto',
  credentials: { accessKeyId: KEY_ID, secretAccessKey: SECRET },
  sha256: NodeSha256,
  applyChecksum: false,
});

/** One S3 operation that reads a request body, as a raw request. */
interface Operation {
  name: string;
  method: string;
  /** Path and query. */
  target: string;
  headers?: Record<string, string>;
  /** The status of a validly signed request carrying `malformed` (garbage for this operation). */
  malformed: { body: Buffer; status: number };
}

/** Headers for `body`: signed with the real key, or (`badSignature`) with its key id and a garbage signature. No x-amz-content-sha256 either way, so the signature is checked from the body. */
async function headersFor(port: number, op: Operation, body: Buffer, declared: number, badSignature: boolean): Promise<Record<string, string>> {
  const url = new URL(op.target, `http://127.0.0.1:${port}`);
  const base = { host: url.host, 'content-length': String(declared), ...op.headers };
  if (op.name === 'PostObject form') return base;
  if (badSignature) {
    const amzDate = new Date().toISOString().replace(/[-:]|\.\d{3}/g, '');
    return {
      ...base,
      'x-amz-date': amzDate,
      authorization: `AWS4-HMAC-SHA256 Credential=${KEY_ID}/${amzDate.slice(0, 8)}/auto/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=${'0'.repeat(64)}`,
    };
  }
  const signed = await signer.sign({
    method: op.method,
    protocol: 'http:',
    hostname: url.hostname,
    port,
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    headers: { ...base },
    body,
  });
  return signed.headers;
}

type Mode = 'whole' | 'truncated' | 'aborted';

/**
 * Sends a raw request and resolves with what the server answered (latin1; '' when it closed
 * without an answer). `whole` sends the body; `truncated` declares 1 MiB more than it sends, then
 * half-closes; `aborted` destroys the socket after part of the body.
 */
function rawRequest(port: number, method: string, target: string, headers: Record<string, string>, body: Buffer, mode: Mode): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => {
      /* a reset is a close; 'close' follows */
    });
    socket.once('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.setTimeout(20_000, () => socket.destroy());
    socket.once('connect', () => {
      const head = `${method} ${target} HTTP/1.1\r\n${Object.entries({ ...headers, connection: 'close' })
        .map(([n, v]) => `${n}: ${v}\r\n`)
        .join('')}\r\n`;
      socket.write(head);
      if (mode === 'aborted') {
        socket.write(body.subarray(0, Math.min(body.length, 64 * 1024)), () => setTimeout(() => socket.destroy(), 20));
        return;
      }
      socket.write(body);
      if (mode === 'truncated') socket.end();
    });
  });
}

/** A multipart/form-data body for the POST Object form, with a garbage signature over a policy, and a file of `fileSize` bytes. */
function postForm(fileSize: number): { body: Buffer; contentType: string } {
  const boundary = '----hostile';
  const amzDate = new Date().toISOString().replace(/[-:]|\.\d{3}/g, '');
  const policy = Buffer.from(JSON.stringify({ expiration: new Date(Date.now() + 600_000).toISOString(), conditions: [{ bucket: BUCKET }] })).toString('base64');
  const fields = {
    key: 'form-upload',
    'x-amz-algorithm': 'AWS4-HMAC-SHA256',
    'x-amz-credential': `${KEY_ID}/${amzDate.slice(0, 8)}/auto/s3/aws4_request`,
    'x-amz-date': amzDate,
    policy,
    'x-amz-signature': '0'.repeat(64),
  };
  const head =
    Object.entries(fields)
      .map(([n, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${n}"\r\n\r\n${v}\r\n`)
      .join('') + `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="f"\r\nContent-Type: application/octet-stream\r\n\r\n`;
  return {
    body: Buffer.concat([Buffer.from(head), Buffer.alloc(fileSize, 0x61), Buffer.from(`\r\n--${boundary}--\r\n`)]),
    contentType: `multipart/form-data; boundary=${boundary}`,
  };
}

const GARBAGE = Buffer.from('<Delete><Object><Key>a</Key></Obj\u0000ect>>>garbage</Nothing>');

test('every S3 operation that reads a body survives oversized, truncated, aborted, malformed and badly signed bodies', { timeout: 300_000 }, async (t) => {
  const dataDir = tempDir(t, 'edgeport-s3-hostile-');
  const config = join(dataDir, '..', `${dataDir.split('/').pop()}.toml`);
  // The failed-authentication limits are not under test here: dozens of bad signatures come from one address.
  writeFileSync(config, '[auth]\nmax_failures_per_address = 100000\nmax_failures_per_identity = 100000\n');
  const server = await startEdgeport({
    dataDir,
    owner: t,
    args: ['--config', config],
    env: { EDGEPORT_S3_ACCESS_KEY_ID: KEY_ID, EDGEPORT_S3_SECRET_ACCESS_KEY: SECRET },
    shedding: false,
  });
  const endpoint = server.urls['S3-compatible API']!;
  const port = Number(new URL(endpoint).port);
  const client = new S3Client({ endpoint, region: 'auto', forcePathStyle: true, credentials: { accessKeyId: KEY_ID, secretAccessKey: SECRET } });
  t.after(() => client.destroy());
  await client.send(new CreateBucketCommand({ Bucket: BUCKET }));
  await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'kept', Body: 'still here' }));
  const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: 'mpu' }));
  const upload = encodeURIComponent(UploadId!);
  const form = postForm(16);

  const operations: Operation[] = [
    { name: 'DeleteObjects', method: 'POST', target: `/${BUCKET}?delete`, malformed: { body: GARBAGE, status: 400 } },
    { name: 'CompleteMultipartUpload', method: 'POST', target: `/${BUCKET}/mpu?uploadId=${upload}`, malformed: { body: GARBAGE, status: 400 } },
    { name: 'PutBucketCors', method: 'PUT', target: `/${BUCKET}?cors`, malformed: { body: GARBAGE, status: 400 } },
    { name: 'CreateBucket with a location body', method: 'PUT', target: '/another-bucket', malformed: { body: GARBAGE, status: 400 } },
    // A GET's body means nothing to S3: validly signed, garbage in it is ignored.
    { name: 'ListBuckets with a body', method: 'GET', target: '/', malformed: { body: GARBAGE, status: 200 } },
    { name: 'ListObjectsV2 with a body', method: 'GET', target: `/${BUCKET}?list-type=2`, malformed: { body: GARBAGE, status: 200 } },
    { name: 'PostObject form', method: 'POST', target: `/${BUCKET}`, headers: { 'content-type': form.contentType }, malformed: { body: GARBAGE, status: 400 } },
    // A streamed body's garbage is an aws-chunked framing that does not parse.
    {
      name: 'PutObject',
      method: 'PUT',
      target: `/${BUCKET}/streamed`,
      headers: { 'content-encoding': 'aws-chunked', 'x-amz-decoded-content-length': '10' },
      malformed: { body: Buffer.from('zz;garbage\r\nxx'), status: 400 },
    },
    {
      name: 'UploadPart',
      method: 'PUT',
      target: `/${BUCKET}/mpu?partNumber=1&uploadId=${upload}`,
      headers: { 'content-encoding': 'aws-chunked', 'x-amz-decoded-content-length': '10' },
      malformed: { body: Buffer.from('zz;garbage\r\nxx'), status: 400 },
    },
  ];
  const oversized = Buffer.alloc(OVERSIZE, 0x3c);
  const stillServing = async (after: string): Promise<void> => {
    assert.equal(hasExited(server.child), false, `the server exited after ${after}`);
    const got = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'kept' }));
    assert.equal(await got.Body!.transformToString(), 'still here', `an honest request after ${after}`);
  };

  for (const op of operations) {
    const streamed = op.name === 'PutObject' || op.name === 'UploadPart';
    const plain = { ...op, headers: Object.fromEntries(Object.entries(op.headers ?? {}).filter(([name]) => name === 'content-type')) };
    const oversizeBody = op.name === 'PostObject form' ? postForm(OVERSIZE).body : oversized;
    // Oversized, with a garbage signature: refused (a read-first body at the limit, a streamed one once its signature fails).
    const big = await rawRequest(port, op.method, op.target, await headersFor(port, plain, oversizeBody, oversizeBody.length, true), oversizeBody, 'whole');
    assert.ok(statusOf(big) >= 400 && statusOf(big) < 500, `${op.name}, oversized: ${big.slice(0, 400)}`);
    assert.match(bodyOf(big), /^<\?xml/, `${op.name}, oversized: an S3 XML error`);
    if (!streamed && op.name !== 'PostObject form') assert.match(bodyOf(big), /<Code>MaxMessageLengthExceeded<\/Code>/, `${op.name}, oversized`);
    // Truncated and aborted, signed or not: a 4xx or a closed connection, never a 5xx.
    for (const badSignature of [false, true]) {
      const body = op.name === 'PostObject form' ? form.body : Buffer.from('<Delete><Object><Key>kept</Key></Object></Delete>');
      const short = await rawRequest(port, op.method, op.target, await headersFor(port, plain, body, body.length + MiB, badSignature), body, 'truncated');
      assert.ok(short === '' || (statusOf(short) >= 400 && statusOf(short) < 500), `${op.name}, truncated: ${short.slice(0, 400)}`);
      const aborted = await rawRequest(
        port,
        op.method,
        op.target,
        await headersFor(port, plain, oversizeBody, oversizeBody.length, badSignature),
        oversizeBody,
        'aborted',
      );
      assert.ok(aborted === '' || (statusOf(aborted) >= 400 && statusOf(aborted) < 500), `${op.name}, aborted: ${aborted.slice(0, 400)}`);
    }
    // Malformed, validly signed (the form's signature is in its body: its garbage is unsigned).
    const bad = await rawRequest(
      port,
      op.method,
      op.target,
      await headersFor(port, op, op.malformed.body, op.malformed.body.length, false),
      op.malformed.body,
      'whole',
    );
    assert.equal(statusOf(bad), op.malformed.status, `${op.name}, malformed: ${bad.slice(0, 400)}`);
    // A small body with a bad signature, verified from the body: refused.
    const small = op.name === 'PostObject form' ? form.body : Buffer.from('<Delete><Object><Key>kept</Key></Object></Delete>');
    const forged = await rawRequest(port, op.method, op.target, await headersFor(port, plain, small, small.length, true), small, 'whole');
    assert.equal(statusOf(forged), 403, `${op.name}, bad signature: ${forged.slice(0, 400)}`);
    assert.match(bodyOf(forged), /<Code>SignatureDoesNotMatch<\/Code>/, `${op.name}, bad signature`);
    if (streamed) {
      // aws-chunked framing with no payload hash: the signature still covers the body as sent.
      const chunked = Buffer.from('5\r\nhello\r\n0\r\n\r\n');
      const headers = { ...op.headers, 'x-amz-decoded-content-length': '5' };
      const forgedChunks = await rawRequest(
        port,
        op.method,
        op.target,
        await headersFor(port, { ...op, headers }, chunked, chunked.length, true),
        chunked,
        'whole',
      );
      assert.equal(statusOf(forgedChunks), 403, `${op.name}, bad signature, aws-chunked: ${forgedChunks.slice(0, 400)}`);
      const honestChunks = await rawRequest(
        port,
        op.method,
        op.target,
        await headersFor(port, { ...op, headers }, chunked, chunked.length, false),
        chunked,
        'whole',
      );
      assert.equal(statusOf(honestChunks), 200, `${op.name}, signed, aws-chunked: ${honestChunks.slice(0, 400)}`);
    }
    await stillServing(op.name);
  }
  // Nothing a refused request sent was stored.
  await assert.rejects(client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'form-upload' })), { name: 'NotFound' });
  const streamed = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'streamed' }));
  assert.equal(await streamed.Body!.transformToString(), 'hello', 'only the honest aws-chunked PUT was stored');
});

test('the request that crashed the server: a 3 MB POST ?delete with a garbage signature is 400 MaxMessageLengthExceeded', { timeout: 120_000 }, async (t) => {
  const server = await startEdgeport({
    dataDir: tempDir(t, 'edgeport-s3-crash-'),
    owner: t,
    env: { EDGEPORT_S3_ACCESS_KEY_ID: KEY_ID, EDGEPORT_S3_SECRET_ACCESS_KEY: SECRET },
    shedding: false,
  });
  const endpoint = server.urls['S3-compatible API']!;
  const port = Number(new URL(endpoint).port);
  const amzDate = new Date().toISOString().replace(/[-:]|\.\d{3}/g, '');
  const headers = {
    host: `127.0.0.1:${port}`,
    'content-length': String(3_000_000),
    'content-type': 'application/x-www-form-urlencoded',
    'x-amz-date': amzDate,
    authorization: `AWS4-HMAC-SHA256 Credential=${KEY_ID}/${amzDate.slice(0, 8)}/auto/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=${'0'.repeat(64)}`,
  };
  // As curl sends it (Expect: 100-continue for a large body), and without the Expect.
  for (const expect of [{ expect: '100-continue' }, {}] as Array<Record<string, string>>) {
    const answer = await rawRequest(port, 'POST', '/photos?delete', { ...headers, ...expect }, Buffer.alloc(3_000_000, 0x61), 'whole');
    assert.equal(statusOf(answer.replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, '')), 400, answer.slice(0, 400));
    assert.match(
      bodyOf(answer),
      /<Code>MaxMessageLengthExceeded<\/Code><Message>Your request was too big: a request body read whole may have at most 2097152 bytes/,
    );
  }
  assert.equal(hasExited(server.child), false);
  const client = new S3Client({ endpoint, region: 'auto', forcePathStyle: true, credentials: { accessKeyId: KEY_ID, secretAccessKey: SECRET } });
  t.after(() => client.destroy());
  await client.send(new CreateBucketCommand({ Bucket: BUCKET }));
});

test('CR or LF in a response-* parameter of GetObject is 400 InvalidArgument naming it, never 500', { timeout: 120_000 }, async (t) => {
  const server = await startEdgeport({
    dataDir: tempDir(t, 'edgeport-s3-crlf-'),
    owner: t,
    env: { EDGEPORT_S3_ACCESS_KEY_ID: KEY_ID, EDGEPORT_S3_SECRET_ACCESS_KEY: SECRET },
    shedding: false,
  });
  const endpoint = server.urls['S3-compatible API']!;
  const client = new S3Client({ endpoint, region: 'auto', forcePathStyle: true, credentials: { accessKeyId: KEY_ID, secretAccessKey: SECRET } });
  t.after(() => client.destroy());
  await client.send(new CreateBucketCommand({ Bucket: BUCKET }));
  await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'kept', Body: 'still here' }));
  const overrides = {
    ResponseContentType: 'text/plain\r\nSet-Cookie: a=b',
    ResponseContentDisposition: 'attachment\nx: y',
    ResponseCacheControl: 'no\rcache',
    ResponseContentLanguage: 'en\u0000',
    ResponseContentEncoding: 'gzip\r\n',
    ResponseExpires: new Date(0),
  } as const;
  const params = {
    ResponseContentType: 'response-content-type',
    ResponseContentDisposition: 'response-content-disposition',
    ResponseCacheControl: 'response-cache-control',
    ResponseContentLanguage: 'response-content-language',
    ResponseContentEncoding: 'response-content-encoding',
  } as const;
  for (const [name, param] of Object.entries(params) as Array<[keyof typeof params, string]>) {
    const url = await getSignedUrl(client, new GetObjectCommand({ Bucket: BUCKET, Key: 'kept', [name]: overrides[name] }), { expiresIn: 60 });
    const response = await fetch(url);
    const body = await response.text();
    assert.equal(response.status, 400, `${param}: ${body}`);
    assert.match(body, /<Code>InvalidArgument<\/Code>/, param);
    assert.ok(body.includes(`<Message>${param} must be a valid HTTP header value`), `${param}: ${body}`);
    assert.equal(response.headers.get('set-cookie'), null);
  }
  // A value that is a header value still overrides.
  const url = await getSignedUrl(client, new GetObjectCommand({ Bucket: BUCKET, Key: 'kept', ResponseContentType: 'text/x-fine; charset=latin1' }), {
    expiresIn: 60,
  });
  const fine = await fetch(url);
  assert.deepEqual([fine.status, fine.headers.get('content-type'), await fine.text()], [200, 'text/x-fine; charset=latin1', 'still here']);
  assert.equal(hasExited(server.child), false);
});
