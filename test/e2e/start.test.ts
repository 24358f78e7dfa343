/**
 * `edgeport start` end to end: the real CLI serves the S3-compatible API on its port, prints the
 * bootstrap S3 key once (or takes it from the environment, which then replaces a generated one),
 * keeps data across a restart, refuses a bad config (a script route onto the dev domain too) or a
 * taken port with exit code 1, and stops cleanly (exit 0) on SIGTERM.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CreateBucketCommand, GetObjectCommand, ListBucketsCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { startEdgeport } from '../helpers/edgeport-server.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const S3 = 'S3-compatible API';

function client(endpoint: string, key: { accessKeyId: string; secretAccessKey: string }): S3Client {
  return new S3Client({ endpoint, region: 'auto', forcePathStyle: true, credentials: key });
}

test('first start prints an S3 key once; the data and the key survive a restart', { timeout: 60_000 }, async (t) => {
  const dataDir = join(tempDir(t), 'data');
  const first = await startEdgeport({ owner: t, dataDir, env: { EDGEPORT_S3_ACCESS_KEY_ID: '', EDGEPORT_S3_SECRET_ACCESS_KEY: '' } });
  assert.ok(first.urls[S3], first.banner);
  const key = first.s3Key;
  assert.ok(key, `a generated key is printed:\n${first.banner}`);
  const s3 = client(first.urls[S3]!, key);
  await s3.send(new CreateBucketCommand({ Bucket: 'kept' }));
  await s3.send(new PutObjectCommand({ Bucket: 'kept', Key: 'a/b.txt', Body: 'hello', ContentType: 'text/plain' }));
  s3.destroy();

  const unsigned = await fetch(`${first.urls[S3]}/kept/a/b.txt`);
  assert.equal(unsigned.status, 403);
  assert.match(await unsigned.text(), /<Code>AccessDenied<\/Code>/);
  assert.equal(await first.stop(), 0);

  const second = await startEdgeport({ owner: t, dataDir, env: { EDGEPORT_S3_ACCESS_KEY_ID: '', EDGEPORT_S3_SECRET_ACCESS_KEY: '' } });
  assert.equal(second.s3Key, undefined, 'the key is printed only on the first start');
  const again = client(second.urls[S3]!, key);
  const object = await again.send(new GetObjectCommand({ Bucket: 'kept', Key: 'a/b.txt' }));
  assert.equal(await object.Body!.transformToString(), 'hello');
  assert.equal(object.ContentType, 'text/plain');
  again.destroy();
  assert.equal(await second.stop(), 0);
});

test('the S3 key comes from EDGEPORT_S3_ACCESS_KEY_ID / EDGEPORT_S3_SECRET_ACCESS_KEY when set', { timeout: 60_000 }, async (t) => {
  const key = { accessKeyId: 'EDGEPORTCIKEY0001', secretAccessKey: 'ci-secret-0123456789abcdef' };
  const server = await startEdgeport({
    owner: t,
    dataDir: join(tempDir(t), 'data'),
    env: { EDGEPORT_S3_ACCESS_KEY_ID: key.accessKeyId, EDGEPORT_S3_SECRET_ACCESS_KEY: key.secretAccessKey },
  });
  assert.equal(server.s3Key, undefined);
  assert.doesNotMatch(server.banner, /ci-secret/, 'a given secret is never printed');
  const s3 = client(server.urls[S3]!, key);
  const listed = await s3.send(new ListBucketsCommand({}));
  assert.deepEqual(listed.Buckets ?? [], []);
  s3.destroy();
});

test(
  "the operator's EDGEPORT_S3_* variables replace the key the first start generated: the banner says so, the old key stops working",
  { timeout: 90_000 },
  async (t) => {
    const dataDir = join(tempDir(t), 'data');
    const first = await startEdgeport({ owner: t, dataDir, env: { EDGEPORT_S3_ACCESS_KEY_ID: '', EDGEPORT_S3_SECRET_ACCESS_KEY: '' } });
    const generated = first.s3Key;
    assert.ok(generated, first.banner);
    const before = client(first.urls[S3]!, generated);
    await before.send(new CreateBucketCommand({ Bucket: 'kept' }));
    before.destroy();
    assert.equal(await first.stop(), 0);

    const chosen = { accessKeyId: 'EDGEPORTCHOSEN01', secretAccessKey: 'chosen-secret-0123456789abcdef' };
    const second = await startEdgeport({
      owner: t,
      dataDir,
      env: { EDGEPORT_S3_ACCESS_KEY_ID: chosen.accessKeyId, EDGEPORT_S3_SECRET_ACCESS_KEY: chosen.secretAccessKey },
    });
    assert.ok(
      second.banner.includes(
        `edgeport: revoked the S3 access key ${generated.accessKeyId} that a start generated: EDGEPORT_S3_ACCESS_KEY_ID / EDGEPORT_S3_SECRET_ACCESS_KEY replace it (the buckets stay)\n`,
      ),
      second.banner,
    );
    const old = client(second.urls[S3]!, generated);
    await assert.rejects(old.send(new ListBucketsCommand({})), (error: Error) => error.name === 'InvalidAccessKeyId');
    old.destroy();
    const now = client(second.urls[S3]!, chosen);
    assert.deepEqual(
      (await now.send(new ListBucketsCommand({}))).Buckets?.map((bucket) => bucket.Name),
      ['kept'],
      'the same account: its buckets stay',
    );
    now.destroy();
    assert.equal(await second.stop(), 0);
  },
);

function runStartSync(args: string[]) {
  return spawnSync(process.execPath, [join(ROOT, 'bin/edgeport.js'), 'start', ...args], { encoding: 'utf8', timeout: 20_000 });
}

test('a bad config, an unusable database or blobs URL, a bad flag or a taken port exit with a message', { timeout: 120_000 }, async (t) => {
  const dir = tempDir(t);
  const missing = runStartSync(['--config', join(dir, 'nope.toml'), '--data-dir', join(dir, 'd1')]);
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /nope\.toml does not exist/);

  const startWith = (env: NodeJS.ProcessEnv) =>
    spawnSync(process.execPath, [join(ROOT, 'bin/edgeport.js'), 'start', '--data-dir', join(dir, 'd2')], {
      encoding: 'utf8',
      timeout: 20_000,
      env: { ...process.env, ...env },
    });
  const blobs = startWith({ EDGEPORT_BLOBS_URL: 'ftp://x' });
  assert.equal(blobs.status, 1);
  assert.match(blobs.stderr, /\[blobs\] url "ftp:\/\/x": use file:\/\/\/absolute\/dir/);
  const db = startWith({ EDGEPORT_DB_URL: 'postgres://edgeport:secret@127.0.0.1:1/nowhere' });
  assert.equal(db.status, 1);
  assert.match(db.stderr, /\[db\] url \(EDGEPORT_DB_URL\): Could not open PostgreSQL at postgres:\/\/edgeport:\*\*\*@127\.0\.0\.1:1\/nowhere/);
  assert.doesNotMatch(db.stderr, /secret/);

  // A [[scripts]] route that would match hosts of the dev domain: the platform's hosts are no config's.
  writeFileSync(join(dir, 'w.mjs'), 'export default { fetch() { return new Response("w"); } };');
  writeFileSync(join(dir, 'dev-route.toml'), '[[scripts]]\nname = "w"\nmain = "w.mjs"\ncompatibility_date = "2025-01-01"\nroutes = ["*.localhost/*"]\n');
  const devRoute = runStartSync(['--config', join(dir, 'dev-route.toml'), '--data-dir', join(dir, 'd4')]);
  assert.equal(devRoute.status, 1);
  assert.match(devRoute.stderr, /Script "w": route "\*\.localhost\/\*" would match hosts of workers\.localhost \(\[workers\] dev_domain\)/);

  const badFlag = runStartSync(['--s3-port', 'abc']);
  assert.equal(badFlag.status, 2);
  assert.match(badFlag.stderr, /--s3-port must be a port number/);

  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => holder.close(() => resolve())));
  const taken = (holder.address() as { port: number }).port;
  const busy = runStartSync(['--data-dir', join(dir, 'd3'), '--s3-port', String(taken), '--api-port', '0', '--edge-port', '0', '--gateway-port', '0']);
  assert.equal(busy.status, 1);
  assert.match(busy.stderr, new RegExp(`Port ${taken} .*already in use`));
});
