/**
 * `edgeport backup` / `edgeport restore` through the real CLI beside a real `edgeport start`: a
 * backup taken while S3 PUTs keep arriving holds every object acknowledged before it began, byte
 * for byte (bodies inline in the database and in blob files alike), and a server started on the
 * restore serves them; restore refuses a data dir a server holds, and one with data unless --force.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { GetObjectCommand, PutObjectCommand, CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { runEdgeport } from '../helpers/edgeport-cli.ts';
import { startEdgeport } from '../helpers/edgeport-server.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const KEY = { EDGEPORT_S3_ACCESS_KEY_ID: 'EDGEPORTBACKUP01', EDGEPORT_S3_SECRET_ACCESS_KEY: 'backup-secret-0123456789abcdef' };
const ENV = { ...KEY, EDGEPORT_ADMIN_EMAIL: 'ops@example.com', EDGEPORT_ADMIN_KEY: 'backup-admin-key-0123456789' };

function s3(endpoint: string): S3Client {
  return new S3Client({ endpoint, region: 'auto', forcePathStyle: true, credentials: { accessKeyId: KEY.EDGEPORT_S3_ACCESS_KEY_ID, secretAccessKey: KEY.EDGEPORT_S3_SECRET_ACCESS_KEY } });
}

test('backup under write load, restore, serve: every object acknowledged before the backup began, byte for byte', { timeout: 240_000 }, async (t) => {
  const dir = tempDir(t);
  const dataDir = join(dir, 'data');
  const server = await startEdgeport({ owner: t, dataDir, env: ENV });
  const client = s3(server.urls['S3-compatible API']!);
  t.after(() => client.destroy());
  await client.send(new CreateBucketCommand({ Bucket: 'kept' }));
  // Small bodies live inline in the database, large ones in blob files: both must come back.
  const acknowledged = new Map<string, Buffer>();
  for (let i = 0; i < 40; i++) {
    const body = randomBytes(i % 2 === 0 ? 1_000 + i : 100_000 + i);
    await client.send(new PutObjectCommand({ Bucket: 'kept', Key: `before/${i}`, Body: body }));
    acknowledged.set(`before/${i}`, body);
  }
  // Writers keep going for the whole backup: new keys, and overwrites of keys of their own.
  let writing = true;
  let writes = 0;
  const writers = [0, 1, 2].map(async (writer) => {
    while (writing) {
      await client.send(new PutObjectCommand({ Bucket: 'kept', Key: `during/${writer}/${writes % 7}`, Body: randomBytes(writes % 2 === 0 ? 500 : 90_000) }));
      await client.send(new PutObjectCommand({ Bucket: 'kept', Key: `during/${writer}/new-${writes}`, Body: randomBytes(70_000) }));
      writes += 2;
    }
  });
  const backupDir = join(dir, 'backup');
  const writesBefore = writes;
  const backup = await runEdgeport(['backup', backupDir, '--data-dir', dataDir]);
  const writesDuring = writes - writesBefore;
  writing = false;
  await Promise.all(writers);
  assert.equal(backup.code, 0, backup.stderr);
  assert.match(backup.stdout, /^edgeport: backed up .* into .*backup \(snapshot at .*\): the database, \d+ body files \(\d+ bytes\), the embedded chains\.$/m);
  assert.ok(writesDuring > 0, 'the backup ran while PUTs were being acknowledged');
  t.diagnostic(`${writesDuring} PUTs acknowledged while the backup ran (${Math.round(backup.ms)} ms, the CLI's start included)`);
  assert.equal((await runEdgeport(['backup', backupDir, '--data-dir', dataDir])).code, 1, 'a non-empty backup dir is refused');

  // Restore: refused on the data dir the server holds, and on one with data without --force.
  const refusedInUse = await runEdgeport(['restore', backupDir, '--data-dir', dataDir, '--force']);
  assert.equal(refusedInUse.code, 1);
  assert.match(refusedInUse.stderr, /edgeport start/);
  assert.equal(await server.stop(), 0);
  const restored = join(dir, 'restored');
  mkdirSync(restored);
  writeFileSync(join(restored, 'something.txt'), 'x');
  const refusedNotEmpty = await runEdgeport(['restore', backupDir, '--data-dir', restored]);
  assert.equal(refusedNotEmpty.code, 1);
  assert.match(refusedNotEmpty.stderr, /holds data already \(something\.txt\).*--force/);
  const done = await runEdgeport(['restore', backupDir, '--data-dir', restored, '--force']);
  assert.equal(done.code, 0, done.stderr);
  assert.match(done.stdout, /^edgeport: restored the backup of .* into .*restored: the database, \d+ body files\. Start edgeport on it\.$/m);

  const again = await startEdgeport({ owner: t, dataDir: restored, env: ENV });
  const reader = s3(again.urls['S3-compatible API']!);
  t.after(() => reader.destroy());
  for (const [key, body] of acknowledged) {
    const got = Buffer.from(await (await reader.send(new GetObjectCommand({ Bucket: 'kept', Key: key }))).Body!.transformToByteArray());
    assert.ok(got.equals(body), `${key}: byte for byte`);
  }
});
