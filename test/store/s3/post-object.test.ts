/**
 * POST Object (browser form uploads) end to end: forms made by @aws-sdk/s3-presigned-post's
 * createPresignedPost, sent by Node's fetch as multipart/form-data to a real S3 listener, read
 * back with the AWS SDK. Policies are checked on the server's (injected) clock.
 */
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { createServer, request as httpRequest } from 'node:http';
import { test, type TestContext } from 'node:test';
import { GetObjectCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { createPresignedPost, type PresignedPostOptions } from '@aws-sdk/s3-presigned-post';
import type { FailureLimits } from '../../../src/core/auth/credential-guard.ts';
import { silentLogger } from '../../../src/core/log.ts';
import { accountStore } from '../../../src/store/engine/account-store.ts';
import { AccessKeys, type AccessKeyOptions } from '../../../src/store/s3/access-keys.ts';
import { POST_PRE_DATA_MAX } from '../../../src/store/s3/operations/post-object.ts';
import { createS3Handler } from '../../../src/store/s3/s3-handler.ts';
import { decodeXmlText } from '../../../src/store/s3/xml.ts';
import { openTestEngine } from '../../helpers/engine.ts';
import { s3ErrorCode } from './helpers.ts';
import { listen } from '../../helpers/listen.ts';

const A = 'a'.repeat(32);
const B = 'b'.repeat(32);
const BUCKET = 'uploads';

async function startPostS3(t: TestContext, failureLimits?: FailureLimits) {
  const fixture = await openTestEngine(t);
  // The SDK signs with the real time; the server's clock starts there and is moved by the tests.
  fixture.clock.set(Date.now());
  const keys = new AccessKeys(fixture.engine.metadata, fixture.clock);
  const handler = createS3Handler({
    engine: fixture.engine,
    clock: fixture.clock,
    logger: silentLogger,
    keys: (id) => keys.keyFor(id),
    ...(failureLimits ? { failureLimits } : {}),
  });
  const server = createServer((req, res) => {
    void handler(req, res);
  });
  const port = await listen(server, t);
  const endpoint = `http://127.0.0.1:${port}`;
  const clientFor = async (accountId: string, options?: AccessKeyOptions) => {
    const made = await keys.create(accountId, options);
    const client = new S3Client({
      endpoint,
      region: 'auto',
      forcePathStyle: true,
      credentials: { accessKeyId: made.accessKeyId, secretAccessKey: made.secretAccessKey },
    });
    t.after(() => client.destroy());
    return client;
  };
  await accountStore(fixture.engine, A).createBucket(BUCKET);
  const client = await clientFor(A);
  /** A form for `client` (default: account A's admin key) to the uploads bucket. */
  const presign = (options: Partial<PresignedPostOptions> & { Key: string }, as: S3Client = client) =>
    // The package pins its own copy of the client: same shape, a distinct type.
    createPresignedPost(as as unknown as Parameters<typeof createPresignedPost>[0], { Bucket: BUCKET, ...options });
  return { ...fixture, endpoint, port, client, clientFor, presign };
}

interface Upload {
  data: string | Uint8Array;
  filename?: string;
  /** The file part's Content-Type. */
  type?: string;
}

/** Sends the form as a browser would: fields in order, then the file, then any `after` fields. */
function send(url: string, fields: Record<string, string> | Array<[string, string]>, file: Upload | undefined, after: Array<[string, string]> = []) {
  const form = new FormData();
  for (const [name, value] of Array.isArray(fields) ? fields : Object.entries(fields)) form.append(name, value);
  if (file) form.append('file', new Blob([file.data as BlobPart], file.type ? { type: file.type } : {}), file.filename ?? 'upload.bin');
  for (const [name, value] of after) form.append(name, value);
  return fetch(url, { method: 'POST', body: form, redirect: 'manual' });
}

async function assertS3Error(response: Response, status: number, code: string, message?: RegExp): Promise<void> {
  const text = await response.text();
  assert.equal(response.status, status, text);
  assert.equal(/<Code>(.*?)<\/Code>/.exec(text)?.[1], code, text);
  if (message) assert.match(decodeXmlText(/<Message>(.*?)<\/Message>/s.exec(text)?.[1] ?? ''), message);
}

async function bodyOf(client: S3Client, key: string): Promise<string> {
  const got = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
  return got.Body!.transformToString();
}

const missing = s3ErrorCode('NoSuchKey', 404);

test('a createPresignedPost form stores the file with its metadata, key from ${filename}; GetObject reads it back', { timeout: 20_000 }, async (t) => {
  const { client, presign } = await startPostS3(t);
  const { url, fields } = await presign({
    Key: 'photos/${filename}',
    Fields: {
      'Content-Type': 'text/plain',
      'x-amz-meta-Owner': 'ann',
      'Cache-Control': 'max-age=60',
      'Content-Disposition': 'attachment; filename="notes.txt"',
      'Content-Encoding': 'identity',
      Expires: 'Wed, 01 Jan 2031 00:00:00 GMT',
    },
    Conditions: [['content-length-range', 1, 1024]],
  });
  assert.match(url, /\/uploads$/);
  const response = await send(url, fields, { data: 'hello, form', filename: 'notes.txt' });
  assert.equal(response.status, 204, await response.clone().text());
  const etag = response.headers.get('etag');
  assert.match(etag ?? '', /^"[0-9a-f]{32}"$/);
  assert.equal(response.headers.get('location'), `${url}/photos/notes.txt`);

  const got = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'photos/notes.txt' }));
  assert.equal(await got.Body!.transformToString(), 'hello, form');
  assert.equal(got.ETag, etag);
  assert.equal(got.ContentType, 'text/plain');
  assert.equal(got.CacheControl, 'max-age=60');
  assert.equal(got.ContentDisposition, 'attachment; filename="notes.txt"');
  assert.equal(got.ContentEncoding, 'identity');
  assert.equal(got.ExpiresString ?? got.Expires?.toUTCString(), 'Wed, 01 Jan 2031 00:00:00 GMT');
  assert.deepEqual(got.Metadata, { owner: 'ann' });
});

test(
  'each condition kind: exact-match object and eq, starts-with (empty prefix: anything), content-length-range; a failing one stores nothing',
  { timeout: 30_000 },
  async (t) => {
    const { client, presign } = await startPostS3(t);
    const form = await presign({
      Key: 'docs/${filename}',
      Conditions: [
        { 'x-amz-meta-team': 'blue' },
        ['eq', '$x-amz-meta-kind', 'report'],
        ['starts-with', '$Content-Type', 'text/'],
        ['starts-with', '$x-amz-meta-note', ''],
        ['content-length-range', 3, 10],
      ],
    });
    const fields = (overrides: Record<string, string> = {}) => ({
      ...form.fields,
      'x-amz-meta-team': 'blue',
      'x-amz-meta-kind': 'report',
      'Content-Type': 'text/csv',
      'x-amz-meta-note': 'anything at all',
      ...overrides,
    });
    const ok = await send(form.url, fields(), { data: 'a,b,c', filename: 'ok.csv' });
    assert.equal(ok.status, 204, await ok.clone().text());
    assert.equal(await bodyOf(client, 'docs/ok.csv'), 'a,b,c');
    // Several types in Content-Type: each must start with the prefix.
    const listed = await send(form.url, fields({ 'Content-Type': 'text/csv, text/plain' }), { data: 'abc', filename: 'two.csv' });
    assert.equal(listed.status, 204);

    const refusals: Array<[string, Record<string, string>, Upload, number, string, RegExp]> = [
      [
        'exact-match object',
        { 'x-amz-meta-team': 'red' },
        { data: 'abcd', filename: 'f1' },
        403,
        'AccessDenied',
        /^Invalid according to Policy: Policy Condition failed: \{"x-amz-meta-team":"blue"\}$/,
      ],
      [
        'eq',
        { 'x-amz-meta-kind': 'memo' },
        { data: 'abcd', filename: 'f2' },
        403,
        'AccessDenied',
        /^Invalid according to Policy: Policy Condition failed: \["eq", "\$x-amz-meta-kind", "report"\]$/,
      ],
      [
        'starts-with',
        { 'Content-Type': 'image/png' },
        { data: 'abcd', filename: 'f3' },
        403,
        'AccessDenied',
        /Policy Condition failed: \["starts-with", "\$Content-Type", "text\/"\]/,
      ],
      ['starts-with on each listed type', { 'Content-Type': 'text/csv,image/png' }, { data: 'abcd', filename: 'f4' }, 403, 'AccessDenied', /starts-with/],
      [
        'starts-with on the key (after ${filename})',
        { key: 'other/${filename}' },
        { data: 'abcd', filename: 'f5' },
        403,
        'AccessDenied',
        /Policy Condition failed: \["starts-with", "\$key", "docs\/"\]/,
      ],
      ['content-length-range: too small', {}, { data: 'ab', filename: 'f6' }, 400, 'EntityTooSmall', /at least 3/],
      ['content-length-range: too large', {}, { data: 'abcdefghijk', filename: 'f7' }, 400, 'EntityTooLarge', /at most 10 bytes/],
    ];
    for (const [what, overrides, file, status, code, message] of refusals) {
      await t.test(what, { timeout: 10_000 }, async () => {
        await assertS3Error(await send(form.url, fields(overrides), file), status, code, message);
        for (const key of [`docs/${file.filename}`, `other/${file.filename}`]) {
          await assert.rejects(client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key })), (e: unknown) => (e as { name?: string }).name === 'NotFound');
        }
      });
    }
    // The boundary values of the range are inside it.
    assert.equal((await send(form.url, fields(), { data: 'abc', filename: 'min' })).status, 204);
    assert.equal((await send(form.url, fields(), { data: '0123456789', filename: 'max' })).status, 204);
    assert.equal(await bodyOf(client, 'docs/max'), '0123456789');
  },
);

test('every field needs a condition (x-ignore-* and fields after the file excepted); a missing field fails its condition', { timeout: 20_000 }, async (t) => {
  const { client, presign } = await startPostS3(t);
  const form = await presign({ Key: 'a.txt', Conditions: [['starts-with', '$x-amz-meta-tag', 't']] });
  await assertS3Error(
    await send(form.url, { ...form.fields, 'x-amz-meta-tag': 'top', 'x-amz-meta-extra': 'no' }, { data: 'x' }),
    403,
    'AccessDenied',
    /^Invalid according to Policy: Extra input fields: x-amz-meta-extra$/,
  );
  await assertS3Error(
    await send(form.url, form.fields, { data: 'x' }),
    403,
    'AccessDenied',
    /Policy Condition failed: \["starts-with", "\$x-amz-meta-tag", "t"\]/,
  );
  await assert.rejects(client.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'a.txt' })), missing);

  const ignored = await send(form.url, { ...form.fields, 'x-amz-meta-tag': 'tea', 'x-ignore-trace': 'abc' }, { data: 'kept' }, [
    ['x-amz-meta-late', 'after the file'],
    ['key', 'elsewhere.txt'],
  ]);
  assert.equal(ignored.status, 204, await ignored.clone().text());
  const got = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'a.txt' }));
  assert.equal(await got.Body!.transformToString(), 'kept');
  assert.deepEqual(got.Metadata, { tag: 'tea' });
  // A field sent twice is refused rather than one of them picked.
  const twice = [...Object.entries(form.fields), ['x-amz-meta-tag', 'one'], ['X-Amz-Meta-Tag', 'two']] as Array<[string, string]>;
  await assertS3Error(await send(form.url, twice, { data: 'x' }), 400, 'InvalidArgument', /appears more than once/);
});

test(
  'the policy expires on the server clock; a changed policy or a wrong secret is SignatureDoesNotMatch; an unknown key InvalidAccessKeyId',
  { timeout: 20_000 },
  async (t) => {
    const { clock, presign, clientFor } = await startPostS3(t);
    const form = await presign({ Key: 'late.txt', Expires: 60 });
    const policy = JSON.parse(Buffer.from(form.fields.Policy!, 'base64').toString('utf8')) as { conditions: unknown[] };
    policy.conditions.push(['starts-with', '$x-amz-meta-any', '']);
    const tampered = { ...form.fields, Policy: Buffer.from(JSON.stringify(policy)).toString('base64'), 'x-amz-meta-any': 'x' };
    await assertS3Error(await send(form.url, tampered, { data: 'x' }), 403, 'SignatureDoesNotMatch');
    const other = await clientFor(A);
    const otherForm = await presign({ Key: 'late.txt' }, other);
    await assertS3Error(
      await send(form.url, { ...form.fields, 'X-Amz-Signature': otherForm.fields['X-Amz-Signature']! }, { data: 'x' }),
      403,
      'SignatureDoesNotMatch',
    );
    const unknownId = form.fields['X-Amz-Credential']!.replace(/^[^/]+/, 'EPNOSUCHKEY0000000');
    await assertS3Error(await send(form.url, { ...form.fields, 'X-Amz-Credential': unknownId }, { data: 'x' }), 403, 'InvalidAccessKeyId');

    clock.advance(59_000);
    assert.equal((await send(form.url, form.fields, { data: 'in time' })).status, 204);
    clock.advance(2_000);
    await assertS3Error(await send(form.url, form.fields, { data: 'too late' }), 403, 'AccessDenied', /^Invalid according to Policy: Policy expired\.$/);
  },
);

test(
  'success_action_status 200, 201 (PostResponse), 204 and others; success_action_redirect and redirect answer 303 with bucket, key and etag',
  { timeout: 20_000 },
  async (t) => {
    const { presign } = await startPostS3(t);
    const withField = async (name: string, value: string) => {
      const form = await presign({ Key: 'status/${filename}', Fields: { [name]: value } });
      return send(form.url, form.fields, { data: `${name}=${value}`, filename: 'f & g.txt' });
    };
    const ok = await withField('success_action_status', '200');
    assert.equal(ok.status, 200);
    assert.equal(await ok.text(), '');
    const created = await withField('success_action_status', '201');
    assert.equal(created.status, 201);
    assert.equal(created.headers.get('content-type'), 'application/xml');
    const document = await created.text();
    const etag = created.headers.get('etag')!;
    assert.match(document, /^<\?xml version="1.0" encoding="UTF-8"\?>\n<PostResponse>/);
    assert.ok(
      document.includes(
        `<Location>${created.headers.get('location')}</Location><Bucket>uploads</Bucket><Key>status/f &amp; g.txt</Key><ETag>&quot;${etag.slice(1, -1)}&quot;</ETag>`,
      ),
      document,
    );
    assert.match(created.headers.get('location')!, /\/uploads\/status\/f%20%26%20g\.txt$/);
    assert.equal((await withField('success_action_status', '204')).status, 204);
    assert.equal((await withField('success_action_status', '302')).status, 204, 'any other value: the default');

    for (const name of ['success_action_redirect', 'redirect']) {
      const redirected = await withField(name, 'https://app.example/done?from=form');
      assert.equal(redirected.status, 303);
      const target = new URL(redirected.headers.get('location')!);
      assert.equal(`${target.origin}${target.pathname}`, 'https://app.example/done');
      assert.deepEqual(Object.fromEntries(target.searchParams), {
        from: 'form',
        bucket: 'uploads',
        key: 'status/f & g.txt',
        etag: redirected.headers.get('etag'),
      });
    }
    // Not an absolute http(s) URL: ignored, as S3 does.
    assert.equal((await withField('success_action_redirect', 'javascript:alert(1)')).status, 204);
  },
);

test(
  "another account's bucket answers like a missing one; a read-only key or another bucket's key is AccessDenied; acl only private",
  { timeout: 20_000 },
  async (t) => {
    const { engine, presign, clientFor, client } = await startPostS3(t);
    const otherAccount = await clientFor(B);
    const foreign = await presign({ Key: 'x.txt' }, otherAccount);
    await assertS3Error(await send(foreign.url, foreign.fields, { data: 'x' }), 404, 'NoSuchBucket');
    await accountStore(engine, B).createBucket('theirs');
    const nowhere = await createPresignedPost(otherAccount as unknown as Parameters<typeof createPresignedPost>[0], { Bucket: 'nothing-here', Key: 'x.txt' });
    await assertS3Error(await send(nowhere.url, nowhere.fields, { data: 'x' }), 404, 'NoSuchBucket');
    await assert.rejects(client.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'x.txt' })), missing);

    for (const options of [{ permission: 'object_read_only' }, { permission: 'object_read_write', buckets: ['elsewhere'] }] as const) {
      const form = await presign({ Key: 'x.txt' }, await clientFor(A, options));
      await assertS3Error(await send(form.url, form.fields, { data: 'x' }), 403, 'AccessDenied', /^Access Denied$/);
    }
    const limited = await presign({ Key: 'mine.txt' }, await clientFor(A, { permission: 'object_read_write', buckets: [BUCKET] }));
    assert.equal((await send(limited.url, limited.fields, { data: 'x' })).status, 204);

    const priv = await presign({ Key: 'private.txt', Fields: { acl: 'private' } });
    assert.equal((await send(priv.url, priv.fields, { data: 'x' })).status, 204);
    const pub = await presign({ Key: 'public.txt', Fields: { acl: 'public-read' } });
    await assertS3Error(await send(pub.url, pub.fields, { data: 'x' }), 400, 'AccessControlListNotSupported', /acl field/);
  },
);

test('the form before the file is bounded (MaxPostPreDataLengthExceeded); no file, no key or no policy are refused', { timeout: 20_000 }, async (t) => {
  const { presign, client } = await startPostS3(t);
  const form = await presign({ Key: 'big-form.txt', Conditions: [['starts-with', '$x-ignore-pad', '']] });
  const padded = { ...form.fields, 'x-ignore-pad': 'p'.repeat(POST_PRE_DATA_MAX) };
  await assertS3Error(await send(form.url, padded, { data: 'x' }), 400, 'MaxPostPreDataLengthExceeded', /at most 20480 bytes/);
  await assert.rejects(client.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'big-form.txt' })), missing);
  // Just under the limit is fine.
  const fits = await send(form.url, { ...form.fields, 'x-ignore-pad': 'p'.repeat(POST_PRE_DATA_MAX - 3000) }, { data: 'x' });
  assert.equal(fits.status, 204, await fits.clone().text());

  await assertS3Error(await send(form.url, form.fields, undefined), 400, 'InvalidArgument', /exactly one file/);
  const { key: _key, ...noKey } = form.fields;
  await assertS3Error(await send(form.url, noKey, { data: 'x' }), 400, 'InvalidArgument', /field named 'key'/);
  await assertS3Error(await send(form.url, { key: 'anon.txt' }, { data: 'x' }), 403, 'AccessDenied', /Missing authentication/);
  await assertS3Error(
    await send(form.url, { key: 'v2.txt', AWSAccessKeyId: 'EXAMPLEKEY0001', policy: form.fields.Policy!, signature: 'c2lnbmF0dXJl' }, { data: 'x' }),
    400,
    'InvalidRequest',
    /^The authorization mechanism you have provided is not supported\. Please use AWS4-HMAC-SHA256\.$/,
  );
  // The file first and the key after it: the key is not seen.
  const late = await send(
    form.url,
    Object.entries(form.fields).filter(([name]) => name !== 'key'),
    { data: 'x' },
    [['key', 'big-form.txt']],
  );
  await assertS3Error(late, 400, 'InvalidArgument', /order of the fields/);
});

test('a policy that is not valid JSON or lacks expiration is InvalidPolicyDocument; checksums are verified', { timeout: 20_000 }, async (t) => {
  const { presign, client } = await startPostS3(t);
  const form = await presign({ Key: 'sum.txt', Conditions: [['starts-with', '$x-amz-checksum-sha256', '']] });
  const sha256 = (text: string) => createHash('sha256').update(text).digest('base64');
  const good = await send(form.url, { ...form.fields, 'x-amz-checksum-sha256': sha256('summed') }, { data: 'summed' });
  assert.equal(good.status, 204, await good.clone().text());
  assert.equal(good.headers.get('x-amz-checksum-sha256'), sha256('summed'));
  const bad = await send(form.url, { ...form.fields, 'x-amz-checksum-sha256': sha256('other') }, { data: 'changed' });
  await assertS3Error(bad, 400, 'BadDigest');
  const malformed = await send(form.url, { ...form.fields, 'x-amz-checksum-sha256': 'bad' }, { data: 'changed' });
  await assertS3Error(malformed, 400, 'InvalidRequest', /^Value for x-amz-checksum-sha256 header is invalid\.$/);
  assert.equal(await bodyOf(client, 'sum.txt'), 'summed');
  const md5Form = await presign({ Key: 'md5.txt', Conditions: [['starts-with', '$Content-MD5', '']] });
  const md5 = (text: string) => createHash('md5').update(text).digest('base64');
  await assertS3Error(await send(md5Form.url, { ...md5Form.fields, 'Content-MD5': md5('other') }, { data: 'mine' }), 400, 'BadDigest');
  await assertS3Error(await send(md5Form.url, { ...md5Form.fields, 'Content-MD5': 'not-base64-md5' }, { data: 'mine' }), 400, 'InvalidDigest');
  assert.equal((await send(md5Form.url, { ...md5Form.fields, 'Content-MD5': md5('mine') }, { data: 'mine' })).status, 204);
  assert.equal(await bodyOf(client, 'md5.txt'), 'mine');

  // Policies signed properly (the signing key derived as SigV4 does) but not well-formed.
  const [accessKeyId, date, region] = form.fields['X-Amz-Credential']!.split('/') as [string, string, string];
  const secret = (await client.config.credentials()).secretAccessKey;
  assert.ok(accessKeyId);
  const signed = (document: string) => {
    const policy = Buffer.from(document).toString('base64');
    let key: Buffer = createHmac('sha256', `AWS4${secret}`).update(date).digest();
    for (const part of [region, 's3', 'aws4_request']) key = createHmac('sha256', key).update(part).digest();
    return { ...form.fields, Policy: policy, 'X-Amz-Signature': createHmac('sha256', key).update(policy).digest('hex') };
  };
  // The tool's own form is accepted when re-signed by hand: the derivation above is the one the server uses.
  assert.equal((await send(form.url, signed(Buffer.from(form.fields.Policy!, 'base64').toString('utf8')), { data: 'summed' })).status, 204);
  const conditions = JSON.parse(Buffer.from(form.fields.Policy!, 'base64').toString('utf8')).conditions as unknown[];
  const refused: Array<[string, RegExp]> = [
    ['{"expiration": ', /^Invalid Policy: Invalid JSON/],
    [JSON.stringify({ conditions }), /^Invalid Policy: Policy missing expiration\.$/],
    [JSON.stringify({ expiration: 'tomorrow', conditions }), /^Invalid Policy: Invalid 'expiration' value/],
    [JSON.stringify({ expiration: '2099-01-01T00:00:00Z' }), /^Invalid Policy: Policy missing conditions\.$/],
    [JSON.stringify({ expiration: '2099-01-01T00:00:00Z', conditions: [...conditions, ['matches', '$key', '.*']] }), /unknown operator "matches"/],
    [JSON.stringify({ expiration: '2099-01-01T00:00:00Z', conditions: [...conditions, { a: 'x', b: 'y' }] }), /exactly one property/],
    [JSON.stringify({ expiration: '2099-01-01T00:00:00Z', conditions: [...conditions, ['content-length-range', 10, 1]] }), /content-length-range/],
  ];
  for (const [document, message] of refused) await assertS3Error(await send(form.url, signed(document), { data: 'x' }), 400, 'InvalidPolicyDocument', message);
});

test('virtual-hosted style: a form posted to <bucket>.localhost; a large file streams into the store', { timeout: 30_000 }, async (t) => {
  const { port, presign, client } = await startPostS3(t);
  const form = await presign({ Key: 'vhost.txt' });
  const encoded = new Request('http://unused/', { method: 'POST', body: toFormData(form.fields, 'by host') });
  const bytes = Buffer.from(await encoded.arrayBuffer());
  const answer = await new Promise<{ status: number; location: string | undefined }>((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/',
        headers: { host: `${BUCKET}.localhost:${port}`, 'content-type': encoded.headers.get('content-type')!, 'content-length': bytes.length },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode!, location: res.headers.location }));
      },
    );
    req.on('error', reject);
    req.end(bytes);
  });
  assert.deepEqual(answer, { status: 204, location: `http://${BUCKET}.localhost:${port}/vhost.txt` });
  assert.equal(await bodyOf(client, 'vhost.txt'), 'by host');

  const size = 6 * 1024 * 1024 + 17;
  const large = await presign({ Key: 'large.bin', Conditions: [['content-length-range', size, size]] });
  const data = Buffer.alloc(size);
  for (let i = 0; i < size; i += 4096) data.writeUInt32BE(i, i);
  const stored = await send(large.url, large.fields, { data });
  assert.equal(stored.status, 204, await stored.clone().text());
  const got = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'large.bin' }));
  assert.ok(Buffer.from(await got.Body!.transformToByteArray()).equals(data));
});

function toFormData(fields: Record<string, string>, content: string): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  form.append('file', new Blob([content]), 'f.txt');
  return form;
}

test('a large file refused part-way (content-length-range, expired policy) gets its error answer; nothing is stored', { timeout: 30_000 }, async (t) => {
  const { clock, presign, client } = await startPostS3(t);
  const data = Buffer.alloc(8 * 1024 * 1024, 7);
  const small = await presign({ Key: 'refused.bin', Conditions: [['content-length-range', 0, 1000]] });
  await assertS3Error(await send(small.url, small.fields, { data }), 400, 'EntityTooLarge', /at most 1000 bytes/);
  const expiring = await presign({ Key: 'refused.bin', Expires: 1 });
  clock.advance(5_000);
  await assertS3Error(await send(expiring.url, expiring.fields, { data }), 403, 'AccessDenied', /Policy expired/);
  await assert.rejects(
    client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'refused.bin' })),
    (e: unknown) => (e as { name?: string }).name === 'NotFound',
  );
});

test("wrong signatures count against the failed-authentication limits as the header form's do: past them 429 SlowDown", { timeout: 20_000 }, async (t) => {
  // Per address (the S3 API never limits per access key id: a valid signature is cheap to check).
  const { presign } = await startPostS3(t, { windowMs: 60_000, maxPerAddress: 2, maxPerIdentity: 2 });
  const form = await presign({ Key: 'limited.txt' });
  const wrong = { ...form.fields, 'X-Amz-Signature': '0'.repeat(64) };
  for (let i = 0; i < 2; i++) await assertS3Error(await send(form.url, wrong, { data: 'x' }), 403, 'SignatureDoesNotMatch');
  const refused = await send(form.url, form.fields, { data: 'x' });
  assert.ok(Number(refused.headers.get('retry-after')) >= 1);
  await assertS3Error(refused, 429, 'SlowDown', /from this address/);
});

test("a form shaped as boto3's generate_presigned_post makes it (lower-case field names, no bucket field) is accepted", { timeout: 20_000 }, async (t) => {
  const { client, clientFor, endpoint } = await startPostS3(t);
  const credentials = await (await clientFor(A)).config.credentials();
  const amzDate = new Date(Date.now())
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
  const credential = `${credentials.accessKeyId}/${amzDate.slice(0, 8)}/us-east-1/s3/aws4_request`;
  const expiration = new Date(Date.now() + 3600_000).toISOString().replace(/\.\d{3}/, '');
  // json.dumps' separators, botocore's order of conditions.
  const policy = Buffer.from(
    `{"expiration": "${expiration}", "conditions": [{"acl": "private"}, {"bucket": "${BUCKET}"}, ["starts-with", "$key", "py/"], ` +
      `{"x-amz-algorithm": "AWS4-HMAC-SHA256"}, {"x-amz-credential": "${credential}"}, {"x-amz-date": "${amzDate}"}]}`,
  ).toString('base64');
  let key: Buffer = createHmac('sha256', `AWS4${credentials.secretAccessKey}`).update(amzDate.slice(0, 8)).digest();
  for (const part of ['us-east-1', 's3', 'aws4_request']) key = createHmac('sha256', key).update(part).digest();
  const fields = {
    acl: 'private',
    key: 'py/${filename}',
    'x-amz-algorithm': 'AWS4-HMAC-SHA256',
    'x-amz-credential': credential,
    'x-amz-date': amzDate,
    policy,
    'x-amz-signature': createHmac('sha256', key).update(policy).digest('hex'),
  };
  const response = await send(`${endpoint}/${BUCKET}`, fields, { data: 'from python', filename: 'data.json', type: 'application/json' });
  assert.equal(response.status, 204, await response.clone().text());
  const got = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'py/data.json' }));
  assert.equal(await got.Body!.transformToString(), 'from python');
  // No Content-Type field: not the file part's type, S3's default.
  assert.equal(got.ContentType, 'application/octet-stream');
});

test(
  "a form asking for encryption or tagging, or with a session token, is refused as PutObject's headers are, and stores nothing",
  { timeout: 20_000 },
  async (t) => {
    const { client, presign } = await startPostS3(t);
    const cases: Array<[Record<string, string>, number, string]> = [
      [{ 'x-amz-server-side-encryption': 'AES256' }, 501, 'NotImplemented'],
      [{ 'x-amz-server-side-encryption-customer-algorithm': 'AES256' }, 501, 'NotImplemented'],
      [{ tagging: '<Tagging><TagSet><Tag><Key>a</Key><Value>b</Value></Tag></TagSet></Tagging>' }, 501, 'NotImplemented'],
      [{ 'x-amz-object-lock-mode': 'GOVERNANCE' }, 400, 'InvalidRequest'],
      // Temporary credentials' session token, as createPresignedPost adds it for them: edgeport issues none.
      [{ 'x-amz-security-token': 'FwoGZXIvYXdzEBYaDOr' }, 400, 'InvalidToken'],
    ];
    for (const [i, [extra, status, code]] of cases.entries()) {
      const { url, fields } = await presign({ Key: `refused-${i}.txt`, Fields: extra });
      await assertS3Error(await send(url, fields, { data: 'secret' }), status, code);
      await assert.rejects(client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: `refused-${i}.txt` })), /NotFound|404/);
    }
  },
);
