/**
 * Headers that change what a write means (ACLs, grants, tagging, object lock, SSE-S3/KMS) are
 * refused with S3's answer for the case, never accepted and dropped, and nothing is stored. SSE-C
 * is honoured (sse-c.test.ts); here, its parameters for something stored without them are refused.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { test } from 'node:test';
import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  GetObjectAttributesCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  PutObjectCommand,
  UploadPartCommand,
  UploadPartCopyCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { SignatureV4 } from '@smithy/signature-v4';
import fc from 'fast-check';
import { S3Error } from '../../../src/store/s3/s3-error.ts';
import { applyHoistedHeaders } from '../../../src/store/s3/presigned-headers.ts';
import { refuseUnsupportedWriteHeaders } from '../../../src/store/s3/write-headers.ts';
import { ACCESS_KEY_ID, SECRET, s3ErrorCode, startS3 } from './helpers.ts';
import { createHash } from 'node:crypto';
import { NodeSha256 } from '../../helpers/node-sha256.ts';

const code = s3ErrorCode;
const SSE_C_KEY = 'k'.repeat(32);
const SSE_C = { SSECustomerAlgorithm: 'AES256', SSECustomerKey: SSE_C_KEY };

/** Each asked-for feature, as PutObject / CreateMultipartUpload / CopyObject input, and S3's answer. */
const OBJECT_CASES: Array<[name: string, input: Record<string, unknown>, code: string, status: number]> = [
  ['canned ACL public-read', { ACL: 'public-read' }, 'AccessControlListNotSupported', 400],
  ['canned ACL authenticated-read', { ACL: 'authenticated-read' }, 'AccessControlListNotSupported', 400],
  ['an unknown canned ACL', { ACL: 'everyone' }, 'InvalidArgument', 400],
  ['x-amz-grant-read', { GrantRead: 'uri="http://acs.amazonaws.com/groups/global/AllUsers"' }, 'AccessControlListNotSupported', 400],
  ['x-amz-grant-full-control', { GrantFullControl: 'id="someone-else"' }, 'AccessControlListNotSupported', 400],
  ['x-amz-tagging', { Tagging: 'team=blue' }, 'NotImplemented', 501],
  ['object lock mode and date', { ObjectLockMode: 'GOVERNANCE', ObjectLockRetainUntilDate: new Date(Date.now() + 86_400_000) }, 'InvalidRequest', 400],
  ['object lock legal hold', { ObjectLockLegalHoldStatus: 'ON' }, 'InvalidRequest', 400],
  ['SSE-S3 (AES256)', { ServerSideEncryption: 'AES256' }, 'NotImplemented', 501],
  ['SSE-KMS with a key id and context', { ServerSideEncryption: 'aws:kms', SSEKMSKeyId: 'alias/mine', SSEKMSEncryptionContext: 'e30=' }, 'NotImplemented', 501],
  ['an S3 bucket key alone', { BucketKeyEnabled: true }, 'NotImplemented', 501],
  ['an unknown SSE method', { ServerSideEncryption: 'rot13' }, 'InvalidArgument', 400],
];

type Write = (client: S3Client, bucket: string, key: string, input: Record<string, unknown>) => Promise<unknown>;

const OBJECT_WRITES: Array<[operation: string, write: Write]> = [
  ['PutObject', (client, Bucket, Key, input) => client.send(new PutObjectCommand({ Bucket, Key, Body: 'secret body', ...input }))],
  ['CreateMultipartUpload', (client, Bucket, Key, input) => client.send(new CreateMultipartUploadCommand({ Bucket, Key, ...input }))],
  ['CopyObject', (client, Bucket, Key, input) => client.send(new CopyObjectCommand({ Bucket, Key, CopySource: `${Bucket}/source`, ...input }))],
];

async function assertAbsent(client: S3Client, Bucket: string, Key: string): Promise<void> {
  await assert.rejects(client.send(new HeadObjectCommand({ Bucket, Key })), code('NotFound', 404), `${Key} was stored`);
  const uploads = await client.send(new ListMultipartUploadsCommand({ Bucket, Prefix: Key }));
  assert.deepEqual(uploads.Uploads ?? [], [], `an upload of ${Key} was created`);
}

test('PutObject, CreateMultipartUpload and CopyObject refuse every feature they cannot honour, and store nothing', { timeout: 20_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'source', Body: 'the source' }));
  for (const [operation, write] of OBJECT_WRITES) {
    for (const [name, input, s3Code, status] of OBJECT_CASES) {
      const key = `${operation}-${name}`;
      await assert.rejects(
        write(client, bucket, key, input),
        (error) => {
          assert.ok(code(s3Code, status)(error), `${operation} with ${name}`);
          assert.ok((error as Error).message.length > 20, 'the message says what to change');
          return true;
        },
        `${operation} with ${name}`,
      );
      await assertAbsent(client, bucket, key);
    }
  }
});

test('the owner-only canned ACLs (private, bucket-owner-full-control) change nothing and are accepted', { timeout: 10_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'source', Body: 'the source' }));
  for (const ACL of ['private', 'bucket-owner-full-control'] as const) {
    for (const [operation, write] of OBJECT_WRITES) {
      const key = `${operation}-${ACL}`;
      await write(client, bucket, key, { ACL });
      if (operation !== 'CreateMultipartUpload')
        assert.equal((await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }))).$metadata.httpStatusCode, 200);
    }
  }
  // A tagging directive without tags asks for none, which is what every object has.
  await client.send(new CopyObjectCommand({ Bucket: bucket, Key: 'replaced-tags', CopySource: `${bucket}/source`, TaggingDirective: 'REPLACE' }));
});

test('SSE-C parameters for parts, copy sources and reads of what was stored without them: InvalidRequest', { timeout: 20_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'plain', Body: 'not encrypted' }));
  const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'mpu' }));
  await assert.rejects(
    client.send(new UploadPartCommand({ Bucket: bucket, Key: 'mpu', UploadId, PartNumber: 1, Body: 'part', ...SSE_C })),
    code('InvalidRequest', 400),
  );
  await assert.rejects(
    client.send(new UploadPartCopyCommand({ Bucket: bucket, Key: 'mpu', UploadId, PartNumber: 1, CopySource: `${bucket}/plain`, ...SSE_C })),
    code('InvalidRequest', 400),
  );
  const sourceSseC = { CopySourceSSECustomerAlgorithm: 'AES256', CopySourceSSECustomerKey: SSE_C_KEY };
  await assert.rejects(
    client.send(new UploadPartCopyCommand({ Bucket: bucket, Key: 'mpu', UploadId, PartNumber: 1, CopySource: `${bucket}/plain`, ...sourceSseC })),
    code('InvalidRequest', 400),
  );
  const { ListPartsCommand } = await import('@aws-sdk/client-s3');
  assert.deepEqual((await client.send(new ListPartsCommand({ Bucket: bucket, Key: 'mpu', UploadId }))).Parts ?? [], [], 'no part was stored');
  const part = await client.send(new UploadPartCommand({ Bucket: bucket, Key: 'mpu', UploadId, PartNumber: 1, Body: 'part' }));
  await assert.rejects(
    client.send(
      new CompleteMultipartUploadCommand({ Bucket: bucket, Key: 'mpu', UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] }, ...SSE_C }),
    ),
    code('InvalidRequest', 400),
  );
  await assert.rejects(client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'mpu' })), code('NotFound', 404), 'the refused completion completed nothing');
  await client.send(
    new CompleteMultipartUploadCommand({ Bucket: bucket, Key: 'mpu', UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] } }),
  );

  await assert.rejects(
    client.send(new CopyObjectCommand({ Bucket: bucket, Key: 'copy', CopySource: `${bucket}/plain`, ...sourceSseC })),
    code('InvalidRequest', 400),
  );
  await assertAbsent(client, bucket, 'copy');
  await assert.rejects(
    client.send(new CopyObjectCommand({ Bucket: bucket, Key: 'copy', CopySource: `${bucket}/missing`, ...sourceSseC })),
    code('NoSuchKey', 404),
  );

  // A read with a key is refused, never answered with the plaintext; a missing object is still missing.
  await assert.rejects(client.send(new GetObjectCommand({ Bucket: bucket, Key: 'plain', ...SSE_C })), code('InvalidRequest', 400));
  // HEAD answers carry no body, so the SDK sees the status alone.
  await assert.rejects(client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'plain', ...SSE_C })), code('Unknown', 400));
  await assert.rejects(
    client.send(new GetObjectAttributesCommand({ Bucket: bucket, Key: 'plain', ObjectAttributes: ['ETag'], ...SSE_C })),
    code('InvalidRequest', 400),
  );
  await assert.rejects(client.send(new GetObjectCommand({ Bucket: bucket, Key: 'missing', ...SSE_C })), code('NoSuchKey', 404));
  await assert.rejects(client.send(new HeadObjectCommand({ Bucket: bucket, Key: 'missing', ...SSE_C })), code('NotFound', 404));
  const plain = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'plain' }));
  assert.equal(await plain.Body!.transformToString(), 'not encrypted');
});

test('CreateBucket refuses ACLs other than private, grants, object lock and other object ownership; creates nothing', { timeout: 10_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  const cases: Array<[Record<string, unknown>, string, number]> = [
    [{ ACL: 'public-read' }, 'InvalidBucketAclWithObjectOwnership', 400],
    [{ GrantWrite: 'id="someone"' }, 'InvalidBucketAclWithObjectOwnership', 400],
    [{ ObjectLockEnabledForBucket: true }, 'NotImplemented', 501],
    [{ ObjectOwnership: 'ObjectWriter' }, 'NotImplemented', 501],
  ];
  for (const [n, [input, s3Code, status]] of cases.entries()) {
    const name = `${bucket}-refused-${n}`;
    await assert.rejects(client.send(new CreateBucketCommand({ Bucket: name, ...input })), code(s3Code, status), JSON.stringify(input));
    await assert.rejects(client.send(new HeadBucketCommand({ Bucket: name })), code('NotFound', 404), `${name} was created`);
  }
  await client.send(
    new CreateBucketCommand({ Bucket: `${bucket}-private`, ACL: 'private', ObjectLockEnabledForBucket: false, ObjectOwnership: 'BucketOwnerEnforced' }),
  );
  await client.send(new HeadBucketCommand({ Bucket: `${bucket}-private` }));
});

test('a presigned URL carrying the headers in its query is refused the same', { timeout: 10_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  for (const [name, input, s3Code, status] of [
    ['ACL', { ACL: 'public-read' }, 'AccessControlListNotSupported', 400],
    ['tagging', { Tagging: 'a=b' }, 'NotImplemented', 501],
  ] as const) {
    const url = await getSignedUrl(client, new PutObjectCommand({ Bucket: bucket, Key: name, ...input }), { expiresIn: 60 });
    assert.match(url, /x-amz-(acl|tagging)=/, 'the presigner hoists the header into the query');
    const response = await fetch(url, { method: 'PUT', body: 'presigned body' });
    assert.equal(response.status, status);
    assert.match(await response.text(), new RegExp(`<Code>${s3Code}</Code>`));
    await assertAbsent(client, bucket, name);
  }
});

/**
 * A signed request declaring a large body of which only the first KiB is sent: the answer must
 * come back while the rest is still owed, so the refusal did not wait for (or store) the body.
 */
async function answerBeforeBody(endpoint: string, path: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  const url = new URL(path, endpoint);
  const signer = new SignatureV4({ service: 's3', region: 'auto', credentials: { accessKeyId: ACCESS_KEY_ID, secretAccessKey: SECRET }, sha256: NodeSha256 });
  const declared = 64 * 1024 * 1024;
  const query = Object.fromEntries(url.searchParams);
  const signed = await signer.sign({
    method: 'PUT',
    protocol: 'http:',
    hostname: url.hostname,
    port: Number(url.port),
    path: url.pathname,
    query,
    headers: { host: url.host, 'content-length': String(declared), 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD', ...headers },
  });
  return new Promise((resolve, reject) => {
    const req = request({ method: 'PUT', host: url.hostname, port: url.port, path: url.pathname + url.search, headers: signed.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => {
        req.destroy();
        resolve({ status: res.statusCode!, body });
      });
    });
    req.on('error', reject);
    req.write(Buffer.alloc(1024, 1));
  });
}

test('the refusal is answered before the body is read', { timeout: 10_000 }, async (t) => {
  const { client, bucket, endpoint } = await startS3(t);
  const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'mpu' }));
  const sseC = {
    'x-amz-server-side-encryption-customer-algorithm': 'AES256',
    'x-amz-server-side-encryption-customer-key': Buffer.from(SSE_C_KEY).toString('base64'),
    'x-amz-server-side-encryption-customer-key-md5': createHash('md5').update(SSE_C_KEY).digest('base64'),
  };
  const acl = await answerBeforeBody(endpoint, `/${bucket}/acl`, { 'x-amz-acl': 'public-read' });
  assert.deepEqual([acl.status, /<Code>AccessControlListNotSupported<\/Code>/.test(acl.body)], [400, true]);
  const put = await answerBeforeBody(endpoint, `/${bucket}/sse-c`, { ...sseC, 'x-amz-server-side-encryption-customer-key-md5': 'AAAAAAAAAAAAAAAAAAAAAA==' });
  assert.deepEqual([put.status, /<Code>InvalidArgument<\/Code>/.test(put.body)], [400, true], 'an SSE-C key whose MD5 does not match');
  const part = await answerBeforeBody(endpoint, `/${bucket}/mpu?partNumber=1&uploadId=${encodeURIComponent(UploadId!)}`, sseC);
  assert.deepEqual([part.status, /<Code>InvalidRequest<\/Code>/.test(part.body)], [400, true]);
  await assertAbsent(client, bucket, 'acl');
  await assertAbsent(client, bucket, 'sse-c');
});

/** Headers a PutObject may carry that change nothing edgeport cannot do. */
const HARMLESS: Array<[string, string]> = [
  ['x-amz-acl', 'private'],
  ['x-amz-acl', 'bucket-owner-full-control'],
  ['content-type', 'text/plain'],
  ['x-amz-meta-colour', 'blue'],
  ['x-amz-storage-class', 'STANDARD_IA'],
  ['x-amz-tagging', ''],
  ['x-amz-checksum-crc32', 'AAAAAA=='],
  ['cache-control', 'no-store'],
];
/** Headers that ask for a feature edgeport has not, each with the code it is refused with. */
const REFUSED: Array<[string, string, string]> = [
  ['x-amz-acl', 'public-read', 'AccessControlListNotSupported'],
  ['x-amz-acl', 'nonsense', 'InvalidArgument'],
  ['x-amz-grant-read-acp', 'id="x"', 'AccessControlListNotSupported'],
  ['x-amz-tagging', 'a=b', 'NotImplemented'],
  ['x-amz-object-lock-legal-hold', 'OFF', 'InvalidRequest'],
  ['x-amz-object-lock-mode', 'COMPLIANCE', 'InvalidRequest'],
  ['x-amz-server-side-encryption', 'aws:kms', 'NotImplemented'],
  ['x-amz-server-side-encryption-context', 'e30=', 'NotImplemented'],
];

test(
  'property: an object write is refused exactly when a header asks for a feature, the same whether a header or a presigned query carries it',
  { timeout: 10_000 },
  () => {
    const entries = fc.uniqueArray(
      fc.oneof(
        fc.constantFrom(...HARMLESS).map(([name, value]) => ({ name, value, code: undefined as string | undefined })),
        fc.constantFrom(...REFUSED).map(([name, value, code]) => ({ name, value, code: code as string | undefined })),
      ),
      { selector: (entry) => entry.name, maxLength: 6 },
    );
    fc.assert(
      fc.property(entries, fc.boolean(), (chosen, inQuery) => {
        const headers = Object.fromEntries(chosen.filter(() => !inQuery).map((entry) => [entry.name, entry.value]));
        const query = new URLSearchParams(inQuery ? chosen.map((entry) => [entry.name.toUpperCase(), entry.value]) : []);
        // As the S3 handler does once a presigned URL's signature is verified.
        applyHoistedHeaders(headers, query);
        const refusals = chosen.filter((entry) => entry.code !== undefined);
        let thrown: unknown;
        try {
          refuseUnsupportedWriteHeaders('object', headers);
        } catch (error) {
          thrown = error;
        }
        if (refusals.length === 0) return thrown === undefined;
        return thrown instanceof S3Error && refusals.some((entry) => entry.code === thrown.s3Code) && (thrown.status === 400 || thrown.status === 501);
      }),
      { numRuns: 300 },
    );
  },
);
