/**
 * Bucket CORS on the S3 API: Put/Get/DeleteBucketCors through the AWS SDK (round trip, S3's
 * validation errors, the Content-MD5/checksum requirement), and the headers browsers see, sent raw:
 * preflights (allowed, refused, and the same refusal for a bucket that does not exist or is
 * another account's) and the Access-Control-* headers of actual requests, errors included.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { test } from 'node:test';
import {
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteBucketCorsCommand,
  GetBucketCorsCommand,
  GetObjectCommand,
  PutBucketCorsCommand,
  PutObjectCommand,
  S3Client,
  type S3ServiceException,
  type CORSRule,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { silentLogger } from '../../../src/core/log.ts';
import { accountStore } from '../../../src/store/engine/account-store.ts';
import { AccessKeys } from '../../../src/store/s3/access-keys.ts';
import { createS3Handler } from '../../../src/store/s3/s3-handler.ts';
import { openTestEngine } from '../../helpers/engine.ts';
import { s3ErrorCode, startS3 } from './helpers.ts';
import { listen } from '../../helpers/listen.ts';

const A = 'a'.repeat(32);
const B = 'b'.repeat(32);
const PAGE = 'https://app.example.com';

const RULES: CORSRule[] = [
  {
    ID: 'uploads',
    AllowedOrigins: ['https://*.example.com'],
    AllowedMethods: ['PUT', 'POST'],
    AllowedHeaders: ['Content-Type', 'x-amz-meta-*'],
    ExposeHeaders: ['ETag', 'x-amz-request-id'],
    MaxAgeSeconds: 600,
  },
  { AllowedOrigins: ['*'], AllowedMethods: ['GET', 'HEAD'] },
];

/** The SDK's S3 error message, for asserting S3's text. */
const s3Error = (name: string, status: number, message: RegExp) => (error: unknown) => {
  assert.ok(s3ErrorCode(name, status)(error));
  assert.match((error as S3ServiceException).message, message);
  return true;
};

/** Replaces the serialized request document before checksums and the signature are computed over it. */
function replaceBody(client: S3Client): (body: string | undefined) => void {
  let replacement: string | undefined;
  client.middlewareStack.add(
    (next) => async (args) => {
      if (replacement !== undefined) (args.request as { body: unknown }).body = replacement;
      return next(args);
    },
    { step: 'build', priority: 'high', name: 'replaceCorsDocument' },
  );
  return (body) => {
    replacement = body;
  };
}

async function preflight(endpoint: string, path: string, headers: Record<string, string>): Promise<Response> {
  return fetch(`${endpoint}${path}`, { method: 'OPTIONS', headers });
}

test('PutBucketCors, GetBucketCors and DeleteBucketCors round-trip the rules through the AWS SDK', { timeout: 10_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  await assert.rejects(
    client.send(new GetBucketCorsCommand({ Bucket: bucket })),
    s3Error('NoSuchCORSConfiguration', 404, /^The CORS configuration does not exist$/),
  );
  const put = await client.send(new PutBucketCorsCommand({ Bucket: bucket, CORSConfiguration: { CORSRules: RULES } }));
  assert.equal(put.$metadata.httpStatusCode, 200);
  const got = await client.send(new GetBucketCorsCommand({ Bucket: bucket }));
  assert.deepEqual(got.CORSRules, [
    {
      ID: 'uploads',
      AllowedOrigins: ['https://*.example.com'],
      AllowedMethods: ['PUT', 'POST'],
      AllowedHeaders: ['Content-Type', 'x-amz-meta-*'],
      ExposeHeaders: ['ETag', 'x-amz-request-id'],
      MaxAgeSeconds: 600,
    },
    { AllowedOrigins: ['*'], AllowedMethods: ['GET', 'HEAD'] },
  ]);
  // A second PUT replaces the rules whole.
  await client.send(new PutBucketCorsCommand({ Bucket: bucket, CORSConfiguration: { CORSRules: [{ AllowedOrigins: [PAGE], AllowedMethods: ['DELETE'] }] } }));
  assert.deepEqual((await client.send(new GetBucketCorsCommand({ Bucket: bucket }))).CORSRules, [{ AllowedOrigins: [PAGE], AllowedMethods: ['DELETE'] }]);
  const deleted = await client.send(new DeleteBucketCorsCommand({ Bucket: bucket }));
  assert.equal(deleted.$metadata.httpStatusCode, 204);
  await assert.rejects(client.send(new GetBucketCorsCommand({ Bucket: bucket })), s3ErrorCode('NoSuchCORSConfiguration', 404));
  await client.send(new DeleteBucketCorsCommand({ Bucket: bucket }));

  await assert.rejects(
    client.send(new PutBucketCorsCommand({ Bucket: 'no-such-bucket', CORSConfiguration: { CORSRules: RULES } })),
    s3ErrorCode('NoSuchBucket', 404),
  );
  await assert.rejects(client.send(new GetBucketCorsCommand({ Bucket: 'no-such-bucket' })), s3ErrorCode('NoSuchBucket', 404));
  await assert.rejects(client.send(new DeleteBucketCorsCommand({ Bucket: 'no-such-bucket' })), s3ErrorCode('NoSuchBucket', 404));
});

test('PutBucketCors validates as S3 does and a refused document changes nothing', { timeout: 10_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  await client.send(new PutBucketCorsCommand({ Bucket: bucket, CORSConfiguration: { CORSRules: RULES } }));
  const refused = async (rules: CORSRule[], check: (error: unknown) => boolean) => {
    await assert.rejects(client.send(new PutBucketCorsCommand({ Bucket: bucket, CORSConfiguration: { CORSRules: rules } })), check);
  };
  await refused(
    [{ AllowedOrigins: ['*'], AllowedMethods: ['GET', 'PATCH'] }],
    s3Error('InvalidRequest', 400, /^Found unsupported HTTP method in CORS config\. Unsupported method is PATCH$/),
  );
  await refused([{ AllowedOrigins: ['*'], AllowedMethods: ['get'] }], s3Error('InvalidRequest', 400, /Unsupported method is get$/));
  await refused(
    [{ AllowedOrigins: ['https://*.*.example.com'], AllowedMethods: ['GET'] }],
    s3Error('InvalidRequest', 400, /^AllowedOrigin "https:\/\/\*\.\*\.example\.com" can not have more than one wildcard\.$/),
  );
  await refused([{ AllowedOrigins: ['*'], AllowedMethods: ['GET'], AllowedHeaders: ['x-*-*'] }], s3Error('InvalidRequest', 400, /AllowedHeader "x-\*-\*"/));
  await refused(
    [{ AllowedOrigins: ['*'], AllowedMethods: ['GET'], ExposeHeaders: ['*'] }],
    s3Error('InvalidRequest', 400, /ExposeHeader "\*" contains wildcard/),
  );
  await refused(
    Array.from({ length: 101 }, () => ({ AllowedOrigins: ['*'], AllowedMethods: ['GET'] })),
    s3Error('InvalidRequest', 400, /at most 100 rules; this one has 101/),
  );
  // 100 rules are fine (and replace the two).
  await client.send(
    new PutBucketCorsCommand({
      Bucket: bucket,
      CORSConfiguration: { CORSRules: Array.from({ length: 100 }, (_, i) => ({ ID: `r${i}`, AllowedOrigins: ['*'], AllowedMethods: ['GET'] })) },
    }),
  );
  assert.equal((await client.send(new GetBucketCorsCommand({ Bucket: bucket }))).CORSRules?.length, 100);
  await client.send(new PutBucketCorsCommand({ Bucket: bucket, CORSConfiguration: { CORSRules: RULES } }));

  const replace = replaceBody(client);
  const put = () => client.send(new PutBucketCorsCommand({ Bucket: bucket, CORSConfiguration: { CORSRules: RULES } }));
  for (const document of [
    'not xml at all',
    '<CORSConfiguration></CORSConfiguration>',
    '<Other><CORSRule/></Other>',
    '<CORSConfiguration><CORSRule><AllowedMethod>GET</AllowedMethod></CORSRule></CORSConfiguration>',
    '<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin></CORSRule></CORSConfiguration>',
    '<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod><Unknown>1</Unknown></CORSRule></CORSConfiguration>',
    '<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod><MaxAgeSeconds>ten</MaxAgeSeconds></CORSRule></CORSConfiguration>',
    '<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod><ID>a</ID><ID>b</ID></CORSRule></CORSConfiguration>',
  ]) {
    replace(document);
    await assert.rejects(put(), s3ErrorCode('MalformedXML', 400), document);
  }
  replace(
    `<CORSConfiguration><CORSRule><AllowedOrigin>${'o'.repeat(64 * 1024)}</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule></CORSConfiguration>`,
  );
  await assert.rejects(put(), s3Error('MaxMessageLengthExceeded', 400, /at most 65536 bytes/));
  // Pretty-printed, with a declaration: as other clients write it.
  replace(
    `<?xml version="1.0" encoding="UTF-8"?>\n<CORSConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">\n  <CORSRule>\n    <AllowedOrigin>${PAGE}</AllowedOrigin>\n` +
      '    <AllowedMethod>GET</AllowedMethod>\n    <AllowedHeader>*</AllowedHeader>\n    <MaxAgeSeconds> 30 </MaxAgeSeconds>\n  </CORSRule>\n</CORSConfiguration>\n',
  );
  await put();
  replace(undefined);
  assert.deepEqual((await client.send(new GetBucketCorsCommand({ Bucket: bucket }))).CORSRules, [
    { AllowedOrigins: [PAGE], AllowedMethods: ['GET'], AllowedHeaders: ['*'], MaxAgeSeconds: 30 },
  ]);
});

test('PutBucketCors needs Content-MD5 or a checksum, and a wrong one is BadDigest', { timeout: 10_000 }, async (t) => {
  const { client, bucket } = await startS3(t);
  let rewrite: ((headers: Record<string, string>) => void) | undefined;
  // After the SDK's checksum middleware (build step, normal priority), before signing (finalizeRequest).
  client.middlewareStack.add(
    (next) => async (args) => {
      rewrite?.((args.request as { headers: Record<string, string> }).headers);
      return next(args);
    },
    { step: 'build', priority: 'low', name: 'rewriteChecksumHeaders' },
  );
  const put = () => client.send(new PutBucketCorsCommand({ Bucket: bucket, CORSConfiguration: { CORSRules: RULES } }));
  const checksumNames = (headers: Record<string, string>) =>
    Object.keys(headers).filter((name) => /^(content-md5|x-amz-checksum-|x-amz-sdk-checksum-)/i.test(name));
  let sent: string[] = [];
  rewrite = (headers) => {
    sent = checksumNames(headers);
  };
  await put();
  assert.ok(sent.length > 0, 'the SDK sends a checksum of the document');

  rewrite = (headers) => {
    for (const name of checksumNames(headers)) delete headers[name];
  };
  await assert.rejects(put(), s3Error('InvalidRequest', 400, /^Missing required header for this request: Content-Md5\.$/));
  rewrite = (headers) => {
    for (const name of checksumNames(headers)) delete headers[name];
    headers['content-md5'] = Buffer.alloc(16).toString('base64');
  };
  await assert.rejects(put(), s3ErrorCode('BadDigest', 400));
  rewrite = (headers) => {
    for (const name of checksumNames(headers)) if (name.toLowerCase().startsWith('x-amz-checksum-')) headers[name] = 'AAAAAA==';
  };
  await assert.rejects(put(), s3ErrorCode('BadDigest', 400));
  rewrite = undefined;
});

test('preflights: allowed by a matching rule with the Access-Control-* headers S3 sends, refused otherwise', { timeout: 10_000 }, async (t) => {
  const { client, bucket, endpoint } = await startS3(t);
  const path = `/${bucket}/photos/cat.jpg`;
  const asking = {
    origin: 'https://app.example.com',
    'access-control-request-method': 'PUT',
    'access-control-request-headers': 'Content-Type, X-Amz-Meta-Owner',
  };
  const forbidden = async (response: Response, why: string) => {
    assert.equal(response.status, 403, why);
    const body = await response.text();
    assert.match(body, /<Code>AccessForbidden<\/Code>/, why);
    assert.match(
      body,
      /<Message>CORSResponse: This CORS request is not allowed\. This is usually because the evalution of Origin, request method \/ Access-Control-Request-Method or Access-Control-Request-Headers are not whitelisted by the resource&apos;s CORS spec\.<\/Message>/,
      why,
    );
    assert.equal(response.headers.get('access-control-allow-origin'), null, why);
  };
  await forbidden(await preflight(endpoint, path, asking), 'no CORS configuration');
  await forbidden(await preflight(endpoint, '/no-such-bucket/k', asking), 'no such bucket: the same answer');

  await client.send(new PutBucketCorsCommand({ Bucket: bucket, CORSConfiguration: { CORSRules: RULES } }));
  const allowed = await preflight(endpoint, path, asking);
  assert.equal(allowed.status, 200);
  assert.equal(await allowed.text(), '');
  assert.deepEqual(Object.fromEntries([...allowed.headers].filter(([name]) => name.startsWith('access-control-') || name === 'vary')), {
    'access-control-allow-origin': 'https://app.example.com',
    'access-control-allow-credentials': 'true',
    'access-control-allow-methods': 'PUT, POST',
    'access-control-allow-headers': 'Content-Type, X-Amz-Meta-Owner',
    'access-control-expose-headers': 'ETag, x-amz-request-id',
    'access-control-max-age': '600',
    vary: 'Origin, Access-Control-Request-Headers, Access-Control-Request-Method',
  });
  // The `*` rule: any origin, GET and HEAD, no request headers (it allows none).
  const anyOrigin = await preflight(endpoint, path, { origin: 'http://elsewhere.test', 'access-control-request-method': 'GET' });
  assert.equal(anyOrigin.status, 200);
  assert.equal(anyOrigin.headers.get('access-control-allow-origin'), '*');
  assert.equal(anyOrigin.headers.get('access-control-allow-credentials'), null);
  assert.equal(anyOrigin.headers.get('access-control-allow-methods'), 'GET, HEAD');
  // Also on the bucket itself (a POST Object form targets the bucket).
  assert.equal((await preflight(endpoint, `/${bucket}`, { origin: 'https://app.example.com', 'access-control-request-method': 'POST' })).status, 200);

  await forbidden(await preflight(endpoint, path, { ...asking, 'access-control-request-headers': 'content-type, authorization' }), 'a header no rule allows');
  await forbidden(await preflight(endpoint, path, { ...asking, 'access-control-request-method': 'DELETE' }), 'a method no rule allows');
  await forbidden(await preflight(endpoint, path, { ...asking, origin: 'https://example.com' }), 'an origin no rule allows (the wildcard needs a subdomain)');
  await forbidden(
    await preflight(endpoint, path, { origin: 'http://elsewhere.test', 'access-control-request-method': 'GET', 'access-control-request-headers': 'range' }),
    'the * rule allows no request header',
  );

  const noOrigin = await preflight(endpoint, path, { 'access-control-request-method': 'PUT' });
  assert.equal(noOrigin.status, 400);
  assert.match(await noOrigin.text(), /<Code>BadRequest<\/Code><Message>Insufficient information\. Origin request header needed\.<\/Message>/);
  const noMethod = await preflight(endpoint, path, { origin: PAGE });
  assert.equal(noMethod.status, 400);
  assert.match(await noMethod.text(), /<Code>BadRequest<\/Code><Message>Invalid Access-Control-Request-Method: null<\/Message>/);

  // Deleting the rules (and the bucket) takes effect at once.
  await client.send(new DeleteBucketCorsCommand({ Bucket: bucket }));
  await forbidden(await preflight(endpoint, path, asking), 'rules deleted');
  await client.send(new PutBucketCorsCommand({ Bucket: bucket, CORSConfiguration: { CORSRules: RULES } }));
  assert.equal((await preflight(endpoint, path, asking)).status, 200);
  const empty = `${bucket}-gone`;
  await client.send(new CreateBucketCommand({ Bucket: empty }));
  await client.send(new PutBucketCorsCommand({ Bucket: empty, CORSConfiguration: { CORSRules: RULES } }));
  assert.equal((await preflight(endpoint, `/${empty}/k`, asking)).status, 200);
  await client.send(new DeleteBucketCommand({ Bucket: empty }));
  await forbidden(await preflight(endpoint, `/${empty}/k`, asking), 'bucket deleted');
  await client.send(new CreateBucketCommand({ Bucket: empty }));
  await forbidden(await preflight(endpoint, `/${empty}/k`, asking), 'a new bucket of the name has no rules');
});

test('actual requests with a matching Origin get the Access-Control-* headers, errors included; others get none', { timeout: 10_000 }, async (t) => {
  const { client, bucket, endpoint } = await startS3(t);
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'k', Body: 'hello' }));
  await client.send(
    new PutBucketCorsCommand({
      Bucket: bucket,
      CORSConfiguration: { CORSRules: [{ AllowedOrigins: [PAGE], AllowedMethods: ['GET'], ExposeHeaders: ['ETag'], MaxAgeSeconds: 60 }] },
    }),
  );
  const signed = async (key: string, expiresIn = 600) => getSignedUrl(client, new GetObjectCommand({ Bucket: bucket, Key: key }), { expiresIn });
  const corsHeaders = (response: Response) =>
    Object.fromEntries([...response.headers].filter(([name]) => name.startsWith('access-control-') || name === 'vary'));
  const expected = {
    'access-control-allow-origin': PAGE,
    'access-control-allow-credentials': 'true',
    'access-control-allow-methods': 'GET',
    'access-control-expose-headers': 'ETag',
    'access-control-max-age': '60',
    vary: 'Origin, Access-Control-Request-Headers, Access-Control-Request-Method',
  };

  const ok = await fetch(await signed('k'), { headers: { origin: PAGE } });
  assert.equal(ok.status, 200);
  assert.equal(await ok.text(), 'hello');
  assert.deepEqual(corsHeaders(ok), expected);
  const missing = await fetch(await signed('missing'), { headers: { origin: PAGE } });
  assert.equal(missing.status, 404);
  assert.deepEqual(corsHeaders(missing), expected, 'an error answer carries them too, so the page can read it');
  const unsigned = await fetch(`${endpoint}/${bucket}/k`, { headers: { origin: PAGE } });
  assert.equal(unsigned.status, 403);
  assert.deepEqual(corsHeaders(unsigned), expected, 'also when authentication fails');

  const otherOrigin = await fetch(await signed('k'), { headers: { origin: 'https://evil.test' } });
  assert.equal(otherOrigin.status, 200, 'CORS never refuses a request; the browser decides');
  assert.deepEqual(corsHeaders(otherOrigin), {});
  const noOrigin = await fetch(await signed('k'));
  assert.deepEqual(corsHeaders(noOrigin), {});
  const put = await fetch(await getSignedUrl(client, new PutObjectCommand({ Bucket: bucket, Key: 'k2' })), {
    method: 'PUT',
    body: 'x',
    headers: { origin: PAGE },
  });
  assert.equal(put.status, 200);
  assert.deepEqual(corsHeaders(put), {}, 'PUT is not a method the rule allows');
});

test("a preflight or a signed request never sees another account's rules", { timeout: 10_000 }, async (t) => {
  const fixture = await openTestEngine(t);
  const keys = new AccessKeys(fixture.engine.metadata, fixture.clock);
  const handler = createS3Handler({ engine: fixture.engine, clock: { now: () => Date.now() }, logger: silentLogger, keys: (id) => keys.keyFor(id) });
  const server = createServer((req, res) => {
    void handler(req, res);
  });
  const port = await listen(server, t);
  const endpoint = `http://127.0.0.1:${port}`;
  const clientOf = async (account: string) => {
    const made = await keys.create(account);
    const client = new S3Client({
      endpoint,
      region: 'auto',
      forcePathStyle: true,
      credentials: { accessKeyId: made.accessKeyId, secretAccessKey: made.secretAccessKey },
    });
    t.after(() => client.destroy());
    return client;
  };
  const [a, b] = [await clientOf(A), await clientOf(B)];
  await accountStore(fixture.engine, A).createBucket('shared');
  await accountStore(fixture.engine, B).createBucket('shared');
  await accountStore(fixture.engine, A).createBucket('only-a');
  await b.send(new PutObjectCommand({ Bucket: 'shared', Key: 'k', Body: 'b' }));
  await a.send(new PutBucketCorsCommand({ Bucket: 'shared', CORSConfiguration: { CORSRules: [{ AllowedOrigins: [PAGE], AllowedMethods: ['GET'] }] } }));

  // B cannot read, replace or delete A's rules: its bucket of the name has none.
  await assert.rejects(b.send(new GetBucketCorsCommand({ Bucket: 'shared' })), s3ErrorCode('NoSuchCORSConfiguration', 404));
  await assert.rejects(b.send(new GetBucketCorsCommand({ Bucket: 'only-a' })), s3ErrorCode('NoSuchBucket', 404));
  await assert.rejects(b.send(new PutBucketCorsCommand({ Bucket: 'only-a', CORSConfiguration: { CORSRules: RULES } })), s3ErrorCode('NoSuchBucket', 404));
  await b.send(new DeleteBucketCorsCommand({ Bucket: 'shared' }));
  assert.equal((await a.send(new GetBucketCorsCommand({ Bucket: 'shared' }))).CORSRules?.length, 1);

  // A preflight names no account: A's published rule allows it; a bucket of B only, or none, answers the same 403.
  const ask = { origin: PAGE, 'access-control-request-method': 'GET' };
  assert.equal((await preflight(endpoint, '/shared/k', ask)).status, 200);
  await b.send(new CreateBucketCommand({ Bucket: 'only-b' }));
  const onlyB = await preflight(endpoint, '/only-b/k', ask);
  const none = await preflight(endpoint, '/nowhere/k', ask);
  assert.deepEqual([onlyB.status, none.status], [403, 403]);
  const strip = (text: string) => text.replace(/<RequestId>[^<]*<\/RequestId>/, '').replace(/<Resource>[^<]*<\/Resource>/, '');
  assert.equal(strip(await onlyB.text()), strip(await none.text()));

  // B's signed GET gets B's bucket's headers: none, though A's bucket of the name has a rule.
  const response = await fetch(await getSignedUrl(b, new GetObjectCommand({ Bucket: 'shared', Key: 'k' })), { headers: { origin: PAGE } });
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('access-control-allow-origin'), null);
});

test('the rules are read from the database only for requests with an Origin, once per name until they change', { timeout: 10_000 }, async (t) => {
  const { client, bucket, engine } = await startS3(t);
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'k', Body: 'hello' }));
  await client.send(new PutBucketCorsCommand({ Bucket: bucket, CORSConfiguration: { CORSRules: [{ AllowedOrigins: [PAGE], AllowedMethods: ['GET'] }] } }));
  // Counts the reads of the real metadata store (it still answers them).
  const meta = engine.metadata;
  const read = meta.corsByName.bind(meta);
  let reads = 0;
  meta.corsByName = (name) => {
    reads++;
    return read(name);
  };
  t.after(() => {
    meta.corsByName = read;
  });
  const url = await getSignedUrl(client, new GetObjectCommand({ Bucket: bucket, Key: 'k' }));
  for (let i = 0; i < 10; i++) assert.equal((await fetch(url)).status, 200);
  assert.equal(reads, 0, 'no Origin, no read');
  for (let i = 0; i < 5; i++) assert.equal((await fetch(url, { headers: { origin: PAGE } })).headers.get('access-control-allow-origin'), PAGE);
  assert.equal(reads, 1, 'read once, then from memory');
  await client.send(new PutBucketCorsCommand({ Bucket: bucket, CORSConfiguration: { CORSRules: [{ AllowedOrigins: ['*'], AllowedMethods: ['GET'] }] } }));
  assert.equal((await fetch(url, { headers: { origin: PAGE } })).headers.get('access-control-allow-origin'), '*', 'a change applies at once');
  assert.equal(reads, 2);
});
