import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GetObjectCommand, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { silentLogger } from '../../../src/core/log.ts';
import { AccessKeys } from '../../../src/store/s3/access-keys.ts';
import { createS3Handler } from '../../../src/store/s3/s3-handler.ts';
import { openTestEngine } from '../../helpers/engine.ts';

test('bootstrap key from the environment, generated keys, revocation through the S3 API', async (t) => {
  const { engine, clock, bucket } = await openTestEngine(t);
  const keys = new AccessKeys(engine.metadata, clock);
  assert.equal(await keys.ensureBootstrap({ EDGEPORT_S3_ACCESS_KEY_ID: 'ENVKEY0001', EDGEPORT_S3_SECRET_ACCESS_KEY: 'env-secret-0123456789' }), undefined);
  assert.equal(await keys.secretFor('ENVKEY0001'), 'env-secret-0123456789');
  assert.equal(await keys.ensureBootstrap({}), undefined, 'a key exists, nothing is generated');
  const made = await keys.create();
  assert.match(made.accessKeyId, /^EP[0-9A-F]{18}$/);

  const handler = createS3Handler({ engine, clock: { now: () => Date.now() }, logger: silentLogger, secrets: (id) => keys.secretFor(id) });
  const server = createServer((req, res) => { void handler(req, res); });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));
  const client = new S3Client({ endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, region: 'auto', forcePathStyle: true,
    credentials: { accessKeyId: made.accessKeyId, secretAccessKey: made.secretAccessKey } });
  t.after(() => client.destroy());
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'k', Body: 'v' }));
  assert.equal(await keys.revoke(made.accessKeyId), true);
  await assert.rejects(client.send(new GetObjectCommand({ Bucket: bucket, Key: 'k' })), (e: unknown) => e instanceof S3ServiceException && e.name === 'InvalidAccessKeyId');
  assert.deepEqual((await keys.list()).map((k) => [k.accessKeyId, k.revoked !== null]), [['ENVKEY0001', false], [made.accessKeyId, true]]);
});

test('a fresh store generates one bootstrap key', async (t) => {
  const { engine, clock } = await openTestEngine(t);
  const keys = new AccessKeys(engine.metadata, clock);
  const made = await keys.ensureBootstrap({});
  assert.ok(made);
  assert.equal(await keys.secretFor(made.accessKeyId), made.secretAccessKey);
  assert.equal(await keys.ensureBootstrap({}), undefined);
});
