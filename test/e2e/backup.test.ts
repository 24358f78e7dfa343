/**
 * `edgeport backup` / `edgeport restore` through the real CLI beside a real `edgeport start`: a
 * backup taken while S3 PUTs keep arriving holds every object acknowledged before it began, byte
 * for byte (bodies inline in the database and in blob files alike), and a server started on the
 * restore serves them; restore refuses a data dir a server holds, and one with data unless --force.
 * Links planted in the data dir, a shared blobs dir or the backup are never followed nor written
 * through, and a restore killed (-9) while copying leaves the previous data serving.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { GetObjectCommand, PutObjectCommand, CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { exitOf, spawnNode, stopChild } from '../helpers/child-processes.ts';
import { onTestEnd } from '../helpers/cleanup.ts';
import { runEdgeport, type CliRun } from '../helpers/edgeport-cli.ts';
import { startEdgeport } from '../helpers/edgeport-server.ts';
import { filesHolding, outsideFile, type OutsideFile } from '../helpers/outside-file.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const EDGEPORT = new URL('../../bin/edgeport.js', import.meta.url).pathname;

const KEY = { EDGEPORT_S3_ACCESS_KEY_ID: 'EDGEPORTBACKUP01', EDGEPORT_S3_SECRET_ACCESS_KEY: 'backup-secret-0123456789abcdef' };
const ENV = { ...KEY, EDGEPORT_ADMIN_EMAIL: 'ops@example.com', EDGEPORT_ADMIN_KEY: 'backup-admin-key-0123456789' };

function s3(endpoint: string): S3Client {
  return new S3Client({
    endpoint,
    region: 'auto',
    forcePathStyle: true,
    credentials: { accessKeyId: KEY.EDGEPORT_S3_ACCESS_KEY_ID, secretAccessKey: KEY.EDGEPORT_S3_SECRET_ACCESS_KEY },
  });
}

test('backup under write load, restore, serve: every object acknowledged before the backup began, byte for byte', { timeout: 150_000 }, async (t) => {
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
  // The secrets key stays out of a backup: the restored data dir gets it apart (docs/operations.md).
  copyFileSync(join(dataDir, 'secrets.key'), join(restored, 'secrets.key'));

  const again = await startEdgeport({ owner: t, dataDir: restored, env: ENV });
  const reader = s3(again.urls['S3-compatible API']!);
  t.after(() => reader.destroy());
  for (const [key, body] of acknowledged) {
    const got = Buffer.from(await (await reader.send(new GetObjectCommand({ Bucket: 'kept', Key: key }))).Body!.transformToByteArray());
    assert.ok(got.equals(body), `${key}: byte for byte`);
  }
});

/** Prints what a command run printed, line by line, with its exit code. */
function saw(t: TestContext, what: string, run: CliRun): void {
  t.diagnostic(`${what}: exit ${run.code}`);
  for (const line of `${run.stdout}${run.stderr}`.trim().split('\n')) t.diagnostic(`  ${line}`);
}

function sawOutside(t: TestContext, outside: OutsideFile): void {
  t.diagnostic(
    `the file outside: ${outside.unchanged() ? 'unchanged' : 'CHANGED'}, ${outside.readTracked ? (outside.read() ? 'READ' : 'not read (access time as set)') : 'reads not recorded here (noatime)'}`,
  );
}

/** How many entries `dir` holds (0 while it does not exist yet). */
function entriesIn(dir: string): number {
  try {
    return readdirSync(dir).length;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
}

async function read(client: S3Client, key: string): Promise<Buffer> {
  return Buffer.from(await (await client.send(new GetObjectCommand({ Bucket: 'kept', Key: key }))).Body!.transformToByteArray());
}

test(
  'links, a fifo and a socket in blobs/ and gateway/ are skipped and named, never followed; folders under gateway/ are backed up',
  { timeout: 120_000 },
  async (t) => {
    const dir = tempDir(t);
    const outside = outsideFile(tempDir(t));
    const dataDir = join(dir, 'data');
    const server = await startEdgeport({ owner: t, dataDir, env: ENV });
    const client = s3(server.urls['S3-compatible API']!);
    t.after(() => client.destroy());
    await client.send(new CreateBucketCommand({ Bucket: 'kept' }));
    const body = randomBytes(150_000);
    await client.send(new PutObjectCommand({ Bucket: 'kept', Key: 'big', Body: body }));
    // What a hostile process with access to the data dir plants: links at a blob id and a chain journal, a fifo, a socket.
    symlinkSync(outside.path, join(dataDir, 'blobs', 'ffffffffffffffffffffffffffffffff'));
    symlinkSync(outside.path, join(dataDir, 'gateway', 'evil.chain.ndjson'));
    execFileSync('mkfifo', [join(dataDir, 'blobs', 'a-fifo')]);
    const socket = createServer();
    await new Promise<void>((resolve) => socket.listen(join(dataDir, 'gateway', 'a.sock'), resolve));
    t.after(() => socket.close());
    mkdirSync(join(dataDir, 'gateway', 'folder', 'nested'), { recursive: true });
    writeFileSync(join(dataDir, 'gateway', 'folder', 'nested', 'notes.txt'), 'nested notes');

    const backupDir = join(dir, 'backup');
    const backup = await runEdgeport(['backup', backupDir, '--data-dir', dataDir]);
    saw(t, 'backup', backup);
    assert.equal(backup.code, 0, backup.stderr);
    assert.match(backup.stdout, /^edgeport: backed up .* the database, 1 body files \(150000 bytes\), the embedded chains\.$/m);
    assert.match(
      backup.stdout,
      /^edgeport: skipped 4 entries that are not files or folders \(a link is never followed\): blobs\/a-fifo \(fifo\), blobs\/f{32} \(symbolic link\), gateway\/a\.sock \(socket\), gateway\/evil\.chain\.ndjson \(symbolic link\); edgeport-backup\.json lists them\.$/m,
    );
    const manifest = JSON.parse(readFileSync(join(backupDir, 'edgeport-backup.json'), 'utf8'));
    assert.deepEqual(manifest.skipped, {
      count: 4,
      entries: [
        { path: 'blobs/a-fifo', kind: 'fifo' },
        { path: 'blobs/ffffffffffffffffffffffffffffffff', kind: 'symbolic link' },
        { path: 'gateway/a.sock', kind: 'socket' },
        { path: 'gateway/evil.chain.ndjson', kind: 'symbolic link' },
      ],
    });
    assert.deepEqual(filesHolding(backupDir, outside.marker), [], 'the backup holds nothing of the file the links point at');
    sawOutside(t, outside);
    assert.ok(outside.unchanged());
    if (outside.readTracked) assert.equal(outside.read(), false, 'the file the links point at was not even read');
    assert.equal(readFileSync(join(backupDir, 'gateway', 'folder', 'nested', 'notes.txt'), 'utf8'), 'nested notes');
    assert.equal(await server.stop(), 0);

    const restored = join(dir, 'restored');
    const done = await runEdgeport(['restore', backupDir, '--data-dir', restored]);
    saw(t, 'restore', done);
    assert.equal(done.code, 0, done.stderr);
    assert.equal(readFileSync(join(restored, 'gateway', 'folder', 'nested', 'notes.txt'), 'utf8'), 'nested notes');
    copyFileSync(join(dataDir, 'secrets.key'), join(restored, 'secrets.key'));
    const again = await startEdgeport({ owner: t, dataDir: restored, env: ENV });
    const reader = s3(again.urls['S3-compatible API']!);
    t.after(() => reader.destroy());
    assert.ok((await read(reader, 'big')).equals(body));
  },
);

test('a restore killed (-9) while copying a large backup leaves the previous data serving; the next restore works', { timeout: 180_000 }, async (t) => {
  const dir = tempDir(t);
  const dataDir = join(dir, 'data');
  const first = await startEdgeport({ owner: t, dataDir, env: ENV });
  const client = s3(first.urls['S3-compatible API']!);
  t.after(() => client.destroy());
  await client.send(new CreateBucketCommand({ Bucket: 'kept' }));
  const body = randomBytes(200_000);
  await client.send(new PutObjectCommand({ Bucket: 'kept', Key: 'before', Body: body }));
  const backupDir = join(dir, 'backup');
  assert.equal((await runEdgeport(['backup', backupDir, '--data-dir', dataDir])).code, 0);
  // Only in the previous data: it reads back after the killed restore, and not after a whole one.
  await client.send(new PutObjectCommand({ Bucket: 'kept', Key: 'after', Body: 'written after the backup' }));
  assert.equal(await first.stop(), 0);
  // A large backup (512 MiB more of bodies no object refers to, which a start sweeps away), so the copy takes a while.
  const filler = randomBytes(4 * 1024 * 1024);
  for (let i = 0; i < 128; i++) writeFileSync(join(backupDir, 'blobs', i.toString(16).padStart(32, 'f')), filler);

  const restore = spawnNode([EDGEPORT, 'restore', backupDir, '--data-dir', dataDir, '--force'], { env: { ...process.env, EDGEPORT_DATA_DIR: '' } });
  onTestEnd(t, () => stopChild(restore));
  let stdout = '';
  restore.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  restore.stderr!.resume();
  // Killed once it has copied a few bodies into its staging folder.
  let staged = 0;
  for (const began = Date.now(); Date.now() - began < 120_000; await sleep(2)) {
    const staging = readdirSync(dataDir).find((name) => name.startsWith('.restore-staging-'));
    staged = staging === undefined ? 0 : entriesIn(join(dataDir, staging, 'blobs'));
    if (staged >= 4 || restore.exitCode !== null) break;
  }
  restore.kill('SIGKILL');
  await exitOf(restore);
  const left = readdirSync(dataDir).sort();
  t.diagnostic(`restore killed by ${restore.signalCode} with ${staged} bodies staged; it had printed ${JSON.stringify(stdout)}; data dir: ${left.join(' ')}`);
  assert.equal(restore.signalCode, 'SIGKILL', 'killed while it ran');
  assert.equal(stdout, '', 'killed before it was done');
  assert.ok(
    left.some((name) => name.startsWith('.restore-staging-')),
    'killed while copying',
  );

  const second = await startEdgeport({ owner: t, dataDir, env: ENV });
  const reader = s3(second.urls['S3-compatible API']!);
  t.after(() => reader.destroy());
  assert.equal((await read(reader, 'after')).toString(), 'written after the backup', 'the previous data, whole');
  assert.ok((await read(reader, 'before')).equals(body));
  assert.deepEqual(
    readdirSync(dataDir).filter((name) => name.startsWith('.restore')),
    [],
    'the start removed what the killed restore left',
  );
  assert.equal(await second.stop(), 0);

  const done = await runEdgeport(['restore', backupDir, '--data-dir', dataDir, '--force']);
  saw(t, 'the next restore', done);
  assert.equal(done.code, 0, done.stderr);
  const third = await startEdgeport({ owner: t, dataDir, env: ENV });
  const after = s3(third.urls['S3-compatible API']!);
  t.after(() => after.destroy());
  assert.ok((await read(after, 'before')).equals(body));
  await assert.rejects(read(after, 'after'), (error: Error) => error.name === 'NoSuchKey', "the backup's data now");
});

test('restore into a shared blobs dir holding a link, from a backup holding one: nothing outside is written or read', { timeout: 120_000 }, async (t) => {
  const dir = tempDir(t);
  const outside = outsideFile(tempDir(t));
  const shared = join(dir, 'shared');
  const env = { ...ENV, EDGEPORT_BLOBS_URL: `file://${shared}` };
  const dataDir = join(dir, 'data');
  const server = await startEdgeport({ owner: t, dataDir, env });
  const client = s3(server.urls['S3-compatible API']!);
  t.after(() => client.destroy());
  await client.send(new CreateBucketCommand({ Bucket: 'kept' }));
  const bodies = [randomBytes(120_000), randomBytes(130_000)];
  for (const [i, body] of bodies.entries()) await client.send(new PutObjectCommand({ Bucket: 'kept', Key: `object-${i}`, Body: body }));
  const backupDir = join(dir, 'backup');
  const backup = await runEdgeport(['backup', backupDir, '--data-dir', dataDir], { env });
  assert.equal(backup.code, 0, backup.stderr);
  assert.match(backup.stdout, / 2 body files \(250000 bytes\)/);
  assert.equal(await server.stop(), 0);

  // The shared dir's copy of a body the backup holds is now a link to a file outside; the backup holds a link too.
  const [bodyId] = readdirSync(join(backupDir, 'blobs'));
  rmSync(join(shared, 'blobs', bodyId!));
  symlinkSync(outside.path, join(shared, 'blobs', bodyId!));
  symlinkSync(outside.path, join(backupDir, 'blobs', 'eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee'));

  const done = await runEdgeport(['restore', backupDir, '--data-dir', dataDir, '--force'], { env });
  saw(t, 'restore', done);
  assert.equal(done.code, 0, done.stderr);
  assert.match(done.stdout, /the database, 1 body files \(1 more were in .*shared\/blobs already\)\./);
  assert.match(
    done.stdout,
    /^edgeport: skipped 1 entries of the backup that are not files or folders \(a link is never followed\): blobs\/e{32} \(symbolic link\)\.$/m,
  );
  assert.match(
    done.stdout,
    new RegExp(
      `^edgeport: replaced 1 links or other non-files in .*shared/blobs by the backup's bodies \\(nothing was written through them\\): .*shared/blobs/${bodyId}\\.$`,
      'm',
    ),
  );
  sawOutside(t, outside);
  assert.ok(outside.unchanged(), 'the file the link pointed at was not written');
  if (outside.readTracked) assert.equal(outside.read(), false, 'nor read');
  assert.ok(lstatSync(join(shared, 'blobs', bodyId!)).isFile(), 'the link was replaced by the body');
  assert.deepEqual([...filesHolding(shared, outside.marker), ...filesHolding(dataDir, outside.marker)], []);

  const again = await startEdgeport({ owner: t, dataDir, env });
  const reader = s3(again.urls['S3-compatible API']!);
  t.after(() => reader.destroy());
  for (const [i, body] of bodies.entries()) assert.ok((await read(reader, `object-${i}`)).equals(body), `object-${i}`);
});
