/**
 * Failed-authentication limits of the S3 API, each client bound to its own loopback address: per
 * client address, 429 SlowDown with an honest Retry-After, decided before the secret is looked up;
 * never per access key id (a valid signature passes from any new address while others fail on
 * the key id); signatures checked at the end of the body (curl) count too; expiry by the FakeClock.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { Agent as HttpAgent, createServer } from 'node:http';
import { test, type TestContext } from 'node:test';
import { promisify } from 'node:util';
import { GetObjectCommand, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { Agent, fetch } from 'undici';
import { silentLogger } from '../../../src/core/log.ts';
import { adminKey } from '../../../src/store/s3/key-grant.ts';
import { createS3Handler } from '../../../src/store/s3/s3-handler.ts';
import { openTestEngine } from '../../helpers/engine.ts';
import { ACCESS_KEY_ID, SECRET } from './helpers.ts';
import { listen } from '../../helpers/listen.ts';

async function startLimitedS3(t: TestContext) {
  const fixture = await openTestEngine(t);
  fixture.clock.set(Date.now());
  let lookups = 0;
  const handler = createS3Handler({
    engine: fixture.engine,
    clock: fixture.clock,
    logger: silentLogger,
    keys: (id) => {
      lookups++;
      return id === ACCESS_KEY_ID ? adminKey(SECRET) : undefined;
    },
  });
  const server = createServer((req, res) => {
    void handler(req, res);
  });
  const port = await listen(server, t);
  const endpoint = `http://127.0.0.1:${port}`;
  /** An AWS SDK client bound to `address`, without retries (they would hide the answers). */
  const clientAt = (address: string, secretAccessKey = SECRET, accessKeyId = ACCESS_KEY_ID) => {
    const client = new S3Client({
      endpoint,
      region: 'auto',
      forcePathStyle: true,
      maxAttempts: 1,
      credentials: { accessKeyId, secretAccessKey },
      requestHandler: { httpAgent: new HttpAgent({ localAddress: address }) },
    });
    t.after(() => client.destroy());
    return client;
  };
  /** A GET by presigned URL (signed by `signer`) from `address`, answered raw. */
  const presignedGet = async (address: string, signer: S3Client, key = 'k') => {
    const url = await getSignedUrl(signer, new GetObjectCommand({ Bucket: fixture.bucket, Key: key }), {
      expiresIn: 600,
      signingDate: new Date(fixture.clock.now()),
    });
    const agent = new Agent({ localAddress: address });
    t.after(() => agent.close());
    const response = await fetch(url, { dispatcher: agent });
    return { status: response.status, retryAfter: response.headers.get('retry-after'), text: await response.text() };
  };
  return { ...fixture, endpoint, clientAt, presignedGet, lookups: () => lookups };
}

const code = (name: string, status: number) => (error: unknown) => {
  assert.ok(error instanceof S3ServiceException, String(error));
  assert.equal(error.name, name);
  assert.equal(error.$metadata.httpStatusCode, status);
  return true;
};

function assertSlowDown(answer: { status: number; retryAfter: string | null; text: string }, scope: string, seconds: number): void {
  assert.equal(answer.status, 429, answer.text);
  assert.equal(answer.retryAfter, String(seconds));
  assert.match(answer.text, /<Code>SlowDown<\/Code>/);
  assert.match(
    answer.text,
    new RegExp(`<Message>Please reduce your request rate: too many failed authentications ${scope}; retry after ${seconds} s.</Message>`),
  );
}

test(
  'per access key id: no limit; after 30 failed signatures from 6 addresses a valid one passes from any new address, the guessers are limited each',
  { timeout: 60_000 },
  async (t) => {
    const s3 = await startLimitedS3(t);
    const home = s3.clientAt('127.0.0.60');
    await home.send(new PutObjectCommand({ Bucket: s3.bucket, Key: 'k', Body: 'v' }));
    // Three times the old per-key limit (10), from addresses that each stay within their own 20.
    for (let i = 0; i < 30; i++) {
      const guesser = s3.clientAt(`127.0.0.${61 + (i % 6)}`, `guess-${i}`);
      await assert.rejects(guesser.send(new GetObjectCommand({ Bucket: s3.bucket, Key: 'k' })), code('SignatureDoesNotMatch', 403));
    }
    assert.equal((await s3.presignedGet('127.0.0.67', s3.clientAt('127.0.0.67'))).status, 200, 'a presigned URL works from an address never seen');
    const got = await s3.clientAt('127.0.0.68').send(new GetObjectCommand({ Bucket: s3.bucket, Key: 'k' }));
    assert.equal(await got.Body!.transformToString(), 'v', 'so does the SDK');
    assert.equal((await s3.presignedGet('127.0.0.69', s3.clientAt('127.0.0.69', 'guess-x'))).status, 403, 'a wrong one is still checked and refused');

    // One guessing address goes on to its own limit: 20 failures, then one every 60 s / 20 = 3 s.
    for (let i = 5; i < 20; i++) {
      await assert.rejects(
        s3.clientAt('127.0.0.61', `more-${i}`).send(new GetObjectCommand({ Bucket: s3.bucket, Key: 'k' })),
        code('SignatureDoesNotMatch', 403),
      );
    }
    const lookupsBefore = s3.lookups();
    assertSlowDown(await s3.presignedGet('127.0.0.61', s3.clientAt('127.0.0.61', 'guess-y')), 'from this address', 3);
    assertSlowDown(await s3.presignedGet('127.0.0.61', s3.clientAt('127.0.0.61')), 'from this address', 3);
    assert.equal(s3.lookups(), lookupsBefore, 'refused before the secret was looked up, even with the secret: nothing is learnt from there');
    assert.equal((await s3.presignedGet('127.0.0.70', s3.clientAt('127.0.0.70'))).status, 200);
    s3.clock.advance(3_000);
    assert.equal((await s3.presignedGet('127.0.0.61', s3.clientAt('127.0.0.61', 'guess-z'))).status, 403, 'after Retry-After one attempt is let through');
    assertSlowDown(await s3.presignedGet('127.0.0.61', s3.clientAt('127.0.0.61', 'guess-w')), 'from this address', 3);
  },
);

test('per address: 20 failures (unknown key ids count), then 429 SlowDown from that address only, even with a valid key', { timeout: 60_000 }, async (t) => {
  const s3 = await startLimitedS3(t);
  for (let i = 0; i < 20; i++) {
    const guesser = s3.clientAt('127.0.0.70', 'x', `GUESSEDKEY${String(i).padStart(4, '0')}`);
    await assert.rejects(guesser.send(new GetObjectCommand({ Bucket: s3.bucket, Key: 'k' })), code('InvalidAccessKeyId', 403));
  }
  // One attempt comes back every 60 s / 20 = 3 s.
  assertSlowDown(await s3.presignedGet('127.0.0.70', s3.clientAt('127.0.0.70', 'x', 'GUESSEDKEY9999')), 'from this address', 3);
  assertSlowDown(await s3.presignedGet('127.0.0.70', s3.clientAt('127.0.0.70')), 'from this address', 3);
  const head = await s3
    .clientAt('127.0.0.70')
    .send(new PutObjectCommand({ Bucket: s3.bucket, Key: 'k', Body: 'v' }))
    .catch((error: unknown) => error);
  assert.ok(code('SlowDown', 429)(head));
  await s3.clientAt('127.0.0.71').send(new PutObjectCommand({ Bucket: s3.bucket, Key: 'k', Body: 'v' }));
  s3.clock.advance(3_000);
  assert.equal((await s3.presignedGet('127.0.0.70', s3.clientAt('127.0.0.70'))).status, 200);
});

test('signatures checked at the end of the body (curl, hash not declared) count as failures', { timeout: 60_000 }, async (t) => {
  const s3 = await startLimitedS3(t);
  const curlPut = async (secret: string, key: string, from = '127.0.0.80') =>
    (
      await promisify(execFile)('curl', [
        '-s',
        '-o',
        '/dev/null',
        '-w',
        '%{http_code}',
        '--interface',
        from,
        '--aws-sigv4',
        'aws:amz:auto:s3',
        '--user',
        `${ACCESS_KEY_ID}:${secret}`,
        '-X',
        'PUT',
        '--data-binary',
        'body',
        `${s3.endpoint}/${s3.bucket}/${key}`,
      ])
    ).stdout;
  assert.equal(await curlPut(SECRET, 'fine.txt', '127.0.0.82'), '200', 'a correct deferred signature succeeds (and trusts 127.0.0.82)');
  for (let i = 0; i < 20; i++) assert.equal(await curlPut(`wrong-${i}`, `forged-${i}.txt`), '403');
  assertSlowDown(await s3.presignedGet('127.0.0.80', s3.clientAt('127.0.0.80', 'guess')), 'from this address', 3);
  assert.equal(await curlPut(SECRET, 'refused.txt'), '429', 'the guessing address is refused, even with the secret');
  assert.equal(await curlPut(SECRET, 'new-address.txt', '127.0.0.81'), '200', 'a new address is not');
  assert.equal(await curlPut(SECRET, 'still-fine.txt', '127.0.0.82'), '200', 'the trusted address still gets through');
});
