/**
 * S3 access keys end to end through the S3 face: each key reaches only its account's buckets
 * (another account's bucket of the same name is a different bucket, and one that exists only in
 * the other account answers NoSuchBucket), and a key's permission and bucket list limit it further.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import {
  CopyObjectCommand,
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  ListBucketsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { createServer } from 'node:http';
import { silentLogger } from '../../../src/core/log.ts';
import { accountStore } from '../../../src/store/engine/account-store.ts';
import { AccessKeys, type AccessKeyOptions } from '../../../src/store/s3/access-keys.ts';
import { createS3Handler } from '../../../src/store/s3/s3-handler.ts';
import { openTestEngine } from '../../helpers/engine.ts';
import { s3ErrorCode } from './helpers.ts';
import { listen } from '../../helpers/listen.ts';

const A = 'a'.repeat(32);
const B = 'b'.repeat(32);

async function startKeyedS3(t: TestContext) {
  const fixture = await openTestEngine(t);
  const keys = new AccessKeys(fixture.engine.metadata, fixture.clock);
  const handler = createS3Handler({ engine: fixture.engine, clock: { now: () => Date.now() }, logger: silentLogger, keys: (id) => keys.keyFor(id) });
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
    return { client, accessKeyId: made.accessKeyId };
  };
  return { ...fixture, keys, clientFor };
}

const denied = s3ErrorCode('AccessDenied', 403);

test('bootstrap key from the environment belongs to the given account; generated keys; revocation through the S3 API', { timeout: 10_000 }, async (t) => {
  const { engine, clock, keys, clientFor } = await startKeyedS3(t);
  assert.deepEqual(await keys.ensureBootstrap({ EDGEPORT_S3_ACCESS_KEY_ID: 'ENVKEY0001', EDGEPORT_S3_SECRET_ACCESS_KEY: 'env-secret-0123456789' }, A), {
    kind: 'given',
    accessKeyId: 'ENVKEY0001',
    replaced: [],
  });
  assert.deepEqual(await keys.keyFor('ENVKEY0001'), { secret: 'env-secret-0123456789', accountId: A, permission: 'admin_read_write', buckets: null });
  assert.deepEqual(await keys.ensureBootstrap({}, A), { kind: 'kept' }, 'a key exists, nothing is generated');
  await accountStore(engine, A).createBucket('data');
  const { client, accessKeyId } = await clientFor(A);
  assert.match(accessKeyId, /^EP[0-9A-F]{18}$/);
  await client.send(new PutObjectCommand({ Bucket: 'data', Key: 'k', Body: 'v' }));
  assert.equal(await keys.revoke(B, accessKeyId), false, 'another account cannot revoke it');
  assert.equal(await keys.revoke(A, accessKeyId), true);
  clock.advance(1001);
  await assert.rejects(
    client.send(new GetObjectCommand({ Bucket: 'data', Key: 'k' })),
    (e: unknown) => e instanceof S3ServiceException && e.name === 'InvalidAccessKeyId',
  );
  assert.deepEqual(
    (await keys.list(A)).map((k) => [k.accessKeyId, k.revoked !== null]),
    [
      ['ENVKEY0001', false],
      [accessKeyId, true],
    ],
  );
  assert.deepEqual(await keys.list(B), []);
});

test('a fresh store generates one bootstrap key for the first account; a key of no account reaches nothing until adopted', { timeout: 10_000 }, async (t) => {
  const { engine, keys } = await startKeyedS3(t);
  const made = await keys.ensureBootstrap({}, A);
  assert.equal(made.kind, 'generated');
  assert.match(made.accessKeyId, /^EPSTART[0-9A-F]{14}$/, 'its id says a start generated it');
  assert.equal((await keys.keyFor(made.accessKeyId))?.secret, made.secretAccessKey);
  assert.deepEqual(await keys.ensureBootstrap({}, A), { kind: 'kept' });
  await engine.metadata.putAccessKey({
    accessKeyId: 'OLDKEY0001',
    secret: 'old-secret-0123456789',
    accountId: null,
    permission: 'admin_read_write',
    buckets: null,
    created: 1,
    revoked: null,
  });
  assert.equal(await keys.keyFor('OLDKEY0001'), undefined);
});

test("two accounts: each sees only its own buckets, and another account's bucket answers like a missing one", { timeout: 10_000 }, async (t) => {
  const { clientFor } = await startKeyedS3(t);
  const { client: a } = await clientFor(A);
  const { client: b } = await clientFor(B);
  await a.send(new CreateBucketCommand({ Bucket: 'photos' }));
  await a.send(new CreateBucketCommand({ Bucket: 'a-only' }));
  await a.send(new PutObjectCommand({ Bucket: 'a-only', Key: 'secret.txt', Body: 'A' }));
  await b.send(new CreateBucketCommand({ Bucket: 'photos' }));
  await a.send(new PutObjectCommand({ Bucket: 'photos', Key: 'cat.jpg', Body: 'A cat' }));
  await b.send(new PutObjectCommand({ Bucket: 'photos', Key: 'cat.jpg', Body: 'B cat' }));
  assert.equal(await (await a.send(new GetObjectCommand({ Bucket: 'photos', Key: 'cat.jpg' }))).Body!.transformToString(), 'A cat');
  assert.equal(await (await b.send(new GetObjectCommand({ Bucket: 'photos', Key: 'cat.jpg' }))).Body!.transformToString(), 'B cat');
  assert.deepEqual(
    (await b.send(new ListBucketsCommand({}))).Buckets!.map((x) => x.Name),
    ['photos'],
  );
  const missing = s3ErrorCode('NoSuchBucket', 404);
  await assert.rejects(b.send(new GetObjectCommand({ Bucket: 'a-only', Key: 'secret.txt' })), missing);
  await assert.rejects(b.send(new PutObjectCommand({ Bucket: 'a-only', Key: 'secret.txt', Body: 'B' })), missing);
  await assert.rejects(b.send(new ListObjectsV2Command({ Bucket: 'a-only' })), missing);
  await assert.rejects(b.send(new DeleteBucketCommand({ Bucket: 'a-only' })), missing);
  await assert.rejects(b.send(new CopyObjectCommand({ Bucket: 'photos', Key: 'stolen', CopySource: 'a-only/secret.txt' })), missing);
  await assert.rejects(
    b.send(new HeadBucketCommand({ Bucket: 'a-only' })),
    (e: unknown) => e instanceof S3ServiceException && e.$metadata.httpStatusCode === 404,
  );
  // A percent-encoded slash cannot name a bucket under another account's id either.
  await assert.rejects(
    b.send(new GetObjectCommand({ Bucket: `${A}%2Fa-only`, Key: 'secret.txt' })),
    (e: unknown) => e instanceof S3ServiceException && (e.$metadata.httpStatusCode ?? 0) >= 400 && (e.$metadata.httpStatusCode ?? 0) < 500,
  );
  await b.send(new DeleteObjectsCommand({ Bucket: 'photos', Delete: { Objects: [{ Key: 'cat.jpg' }] } }));
  assert.equal(
    await (await a.send(new GetObjectCommand({ Bucket: 'photos', Key: 'cat.jpg' }))).Body!.transformToString(),
    'A cat',
    "B's delete touched only B's bucket",
  );
  assert.equal(await (await a.send(new GetObjectCommand({ Bucket: 'a-only', Key: 'secret.txt' }))).Body!.transformToString(), 'A');
});

test('a read-only key limited to one bucket reads it and nothing else, and writes nowhere', { timeout: 10_000 }, async (t) => {
  const { clientFor } = await startKeyedS3(t);
  const { client: admin } = await clientFor(A);
  for (const bucket of ['photos', 'private']) {
    await admin.send(new CreateBucketCommand({ Bucket: bucket }));
    await admin.send(new PutObjectCommand({ Bucket: bucket, Key: 'k', Body: bucket }));
  }
  const { client: reader } = await clientFor(A, { permission: 'object_read_only', buckets: ['photos'] });
  assert.equal(await (await reader.send(new GetObjectCommand({ Bucket: 'photos', Key: 'k' }))).Body!.transformToString(), 'photos');
  assert.deepEqual(
    (await reader.send(new ListObjectsV2Command({ Bucket: 'photos' }))).Contents!.map((o) => o.Key),
    ['k'],
  );
  assert.deepEqual(
    (await reader.send(new ListBucketsCommand({}))).Buckets!.map((x) => x.Name),
    ['photos'],
    'it lists only the buckets it may use',
  );
  await assert.rejects(reader.send(new PutObjectCommand({ Bucket: 'photos', Key: 'k', Body: 'overwritten' })), denied);
  await assert.rejects(reader.send(new DeleteObjectCommand({ Bucket: 'photos', Key: 'k' })), denied);
  await assert.rejects(reader.send(new DeleteObjectsCommand({ Bucket: 'photos', Delete: { Objects: [{ Key: 'k' }] } })), denied);
  await assert.rejects(reader.send(new GetObjectCommand({ Bucket: 'private', Key: 'k' })), denied);
  await assert.rejects(reader.send(new ListObjectsV2Command({ Bucket: 'private' })), denied);
  await assert.rejects(reader.send(new CreateBucketCommand({ Bucket: 'new-one' })), denied);
  await assert.rejects(reader.send(new DeleteBucketCommand({ Bucket: 'photos' })), denied);
  assert.equal(await (await admin.send(new GetObjectCommand({ Bucket: 'photos', Key: 'k' }))).Body!.transformToString(), 'photos', 'nothing changed');

  const { client: writer } = await clientFor(A, { permission: 'object_read_write', buckets: ['photos'] });
  await writer.send(new PutObjectCommand({ Bucket: 'photos', Key: 'w', Body: 'written' }));
  await assert.rejects(
    writer.send(new CopyObjectCommand({ Bucket: 'photos', Key: 'copied', CopySource: 'private/k' })),
    denied,
    'the copy source is checked too',
  );
  await assert.rejects(writer.send(new PutObjectCommand({ Bucket: 'private', Key: 'w', Body: 'x' })), denied);
  await assert.rejects(writer.send(new CreateBucketCommand({ Bucket: 'new-one' })), denied, 'object keys never create buckets');

  const { client: adminReader } = await clientFor(A, { permission: 'admin_read_only' });
  assert.deepEqual(
    (await adminReader.send(new ListBucketsCommand({}))).Buckets!.map((x) => x.Name),
    ['photos', 'private'],
  );
  assert.equal(await (await adminReader.send(new GetObjectCommand({ Bucket: 'private', Key: 'k' }))).Body!.transformToString(), 'private');
  await assert.rejects(adminReader.send(new PutObjectCommand({ Bucket: 'private', Key: 'k', Body: 'x' })), denied);
  await assert.rejects(adminReader.send(new DeleteBucketCommand({ Bucket: 'photos' })), denied);
});

test("the operator's variables replace the key a start generated: it is revoked, keys made otherwise stay", { timeout: 10_000 }, async (t) => {
  const { clock, keys } = await startKeyedS3(t);
  const generated = await keys.ensureBootstrap({}, A);
  assert.equal(generated.kind, 'generated');
  const made = await keys.create(A);
  const env = { EDGEPORT_S3_ACCESS_KEY_ID: 'ENVKEY0002', EDGEPORT_S3_SECRET_ACCESS_KEY: 'env-secret-0123456789' };
  assert.deepEqual(await keys.ensureBootstrap(env, A), { kind: 'given', accessKeyId: 'ENVKEY0002', replaced: [generated.accessKeyId] });
  clock.advance(1001);
  assert.equal(await keys.keyFor(generated.accessKeyId), undefined, 'the generated key no longer signs anything');
  assert.ok(await keys.keyFor(made.accessKeyId), 'a key made through the API stays');
  assert.ok(await keys.keyFor('ENVKEY0002'));
  assert.deepEqual(
    await keys.ensureBootstrap(env, A),
    { kind: 'given', accessKeyId: 'ENVKEY0002', replaced: [] },
    'said once: the next start has nothing to revoke',
  );
  const revoked = Object.fromEntries((await keys.list(A)).map((k) => [k.accessKeyId, k.revoked !== null]));
  assert.deepEqual(revoked, { [generated.accessKeyId]: true, [made.accessKeyId]: false, ENVKEY0002: false });
});
