/**
 * Secrets sealed at rest, through the real `edgeport start` and CLI: after a worker secret is put
 * as wrangler puts it, an S3 key is made and a log job ships to s3:// with that key, no byte search
 * of the database, its WAL or a backup finds any of them; a restart with the key serves the secret
 * to its script and verifies S3 signatures; a start with another key, or without its key file, is
 * refused (exit code 1, one line saying what to do); `edgeport secrets rotate-key` reseals
 * everything, after which the old key is refused and the new one serves; a backup from before the
 * rotation restores with the old key supplied apart. On PostgreSQL: no key, no start; the rows
 * hold no clear value; a rotation is refused while an instance runs.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { CreateBucketCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import pg from 'pg';
import { parsePgUrl } from '../../src/db/postgres/pg-database.ts';
import { runEdgeport } from '../helpers/edgeport-cli.ts';
import { startEdgeport, type EdgeportServer } from '../helpers/edgeport-server.ts';
import { pgTestUrl } from '../helpers/postgres.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { moduleFile, sdkFor, servedWithin } from '../helpers/workers-upload.ts';

const ADMIN = { EDGEPORT_ADMIN_EMAIL: 'keeper@example.test', EDGEPORT_ADMIN_KEY: 'secrets-at-rest-admin-key-0123' };
const HEADERS = { 'x-auth-email': ADMIN.EDGEPORT_ADMIN_EMAIL, 'x-auth-key': ADMIN.EDGEPORT_ADMIN_KEY, 'content-type': 'application/json' };
const SCRIPT = 'export default { async fetch(request, env) { return new Response(env.MY_SECRET ?? "no secret"); } };';
const PORTS = ['--edge-port', '0', '--api-port', '0', '--gateway-port', '0', '--s3-port', '0'];

/** Every file below `dir`, with its path. */
function filesBelow(dir: string): Array<{ path: string; bytes: Buffer }> {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => ({ path: join(entry.parentPath, entry.name), bytes: readFileSync(join(entry.parentPath, entry.name)) }));
}

/** The files among `files` holding any of `values` (as UTF-8 bytes). */
function holding(files: ReadonlyArray<{ path: string; bytes: Buffer }>, values: readonly string[]): string[] {
  return files.filter(({ bytes }) => values.some((value) => bytes.includes(Buffer.from(value)))).map(({ path }) => path);
}

function s3(server: EdgeportServer, key: { accessKeyId: string; secretAccessKey: string }): S3Client {
  return new S3Client({ endpoint: server.urls['S3-compatible API']!, region: 'auto', forcePathStyle: true, maxAttempts: 1, credentials: key });
}

/** Deploys the script, its route, the secret (PUT .../secrets as `wrangler secret put` sends it), an S3 key and a log job shipping to s3:// with it. */
async function putSecrets(
  t: TestContext,
  server: EdgeportServer,
  workerSecret: string,
): Promise<{ accountId: string; s3Key: { accessKeyId: string; secretAccessKey: string }; conf: string }> {
  const apiUrl = server.urls['management API']!;
  const client = sdkFor(apiUrl, ADMIN.EDGEPORT_ADMIN_EMAIL, ADMIN.EDGEPORT_ADMIN_KEY);
  const accountId = (await client.accounts.list()).result[0]!.id;
  const zone = await client.zones.create({ account: { id: accountId }, name: 'secrets.test' });
  const made = (await (await fetch(`${apiUrl}/accounts/${accountId}/store/access-keys`, { method: 'POST', headers: HEADERS, body: '{}' })).json()) as {
    result: { access_key_id: string; secret_access_key: string };
  };
  const s3Key = { accessKeyId: made.result.access_key_id, secretAccessKey: made.result.secret_access_key };
  const client3 = s3(server, s3Key);
  t.after(() => client3.destroy());
  await client3.send(new CreateBucketCommand({ Bucket: 'shipped' }));
  await client3.send(new PutObjectCommand({ Bucket: 'shipped', Key: 'hello.txt', Body: 'hello' }));

  // The operator may ship to edgeport's own S3 listener: the job's destination carries the S3 secret.
  const conf = `s3://shipped/logs?region=auto&endpoint=${server.urls['S3-compatible API']}&access-key-id=${s3Key.accessKeyId}&secret-access-key=${s3Key.secretAccessKey}`;
  const job = (await (
    await fetch(`${apiUrl}/zones/${zone.id}/logshipping/jobs`, {
      method: 'POST',
      headers: HEADERS,
      body: JSON.stringify({ dataset: 'http_requests', enabled: true, destination_conf: conf, output_options: { field_names: ['RayID'] } }),
    })
  ).json()) as { success: boolean; result: { id: number; destination_conf: string } };
  assert.ok(job.success, JSON.stringify(job));
  const read = (await (await fetch(`${apiUrl}/zones/${zone.id}/logshipping/jobs/${job.result.id}`, { headers: HEADERS })).json()) as {
    result: { destination_conf: string };
  };
  assert.equal(read.result.destination_conf, conf, 'the API shows the destination as sent, as the real one does');
  // The script comes last: in a checkout whose node_modules is a symbolic link (a git worktree), the AWS SDK
  // imported after a script's first start fails to load ("S3 is not a constructor"; not with --preserve-symlinks).
  await client.workers.scripts.update('keeper', {
    account_id: accountId,
    metadata: { main_module: 'index.js', compatibility_date: '2025-01-01' },
    files: [await moduleFile(SCRIPT)],
  });
  await client.workers.routes.create({ zone_id: zone.id, pattern: 'secrets.test/*', script: 'keeper' });
  const put = await fetch(`${apiUrl}/accounts/${accountId}/workers/scripts/keeper/secrets`, {
    method: 'PUT',
    headers: HEADERS,
    body: JSON.stringify({ name: 'MY_SECRET', text: workerSecret, type: 'secret_text' }),
  });
  assert.equal(put.status, 200, await put.text());
  await servedWithin(server.urls.edge!, 'secrets.test', workerSecret, 10_000);
  return { accountId, s3Key, conf };
}

async function s3Works(server: EdgeportServer, key: { accessKeyId: string; secretAccessKey: string }): Promise<void> {
  const client = s3(server, key);
  try {
    const listed = await client.send(new ListObjectsV2Command({ Bucket: 'shipped', Prefix: 'hello' }));
    assert.deepEqual(
      listed.Contents?.map((object) => object.Key),
      ['hello.txt'],
    );
  } finally {
    client.destroy();
  }
}

test(
  'sqlite: secrets are nowhere in clear on disk, served after a restart, refused with another key, rotated, restored with the key apart',
  { timeout: 300_000 },
  async (t) => {
    const dir = tempDir(t);
    const dataDir = join(dir, 'data');
    const workerSecret = `worker-secret-${randomBytes(12).toString('hex')}`;
    let server = await startEdgeport({ owner: t, dataDir, env: ADMIN });
    const keyFile = join(dataDir, 'secrets.key');
    assert.equal(statSync(keyFile).mode & 0o777, 0o600, "the key file the first start made is its owner's only");
    const firstKey = readFileSync(keyFile, 'utf8');
    const { s3Key } = await putSecrets(t, server, workerSecret);
    const secrets = [workerSecret, s3Key.secretAccessKey];

    // While the server runs, its recent writes are in the WAL: neither file holds a secret.
    const dbFiles = () =>
      readdirSync(dataDir)
        .filter((name) => name.startsWith('metadata.sqlite'))
        .map((name) => ({ path: join(dataDir, name), bytes: readFileSync(join(dataDir, name)) }));
    assert.ok(
      dbFiles().some(({ path }) => path.endsWith('-wal')),
      'the WAL exists',
    );
    assert.deepEqual(holding(dbFiles(), secrets), [], 'the database and its WAL, while serving');
    assert.ok(holding(dbFiles(), ['secrets.test']).length > 0, "the same search finds what is kept in clear (the zone's name)");

    const backupDir = join(dir, 'backup');
    const backup = await runEdgeport(['backup', backupDir, '--data-dir', dataDir]);
    assert.equal(backup.code, 0, backup.stderr);
    assert.match(
      backup.stdout,
      /^edgeport: the secrets key [0-9a-f]{8} is not in the backup: a restore needs it \(the key file .*secrets\.key\); keep a copy apart, or back up with --include-secrets-key\.$/m,
    );
    assert.equal(existsSync(join(backupDir, 'secrets.key')), false);
    assert.deepEqual(holding(filesBelow(backupDir), [...secrets, firstKey.trim()]), [], 'the backup holds neither a secret nor the key');
    const manifest = JSON.parse(readFileSync(join(backupDir, 'edgeport-backup.json'), 'utf8')) as { secretsKeyId: string; secretsKeyIncluded: boolean };
    assert.equal(manifest.secretsKeyIncluded, false);
    assert.match(manifest.secretsKeyId, /^[0-9a-f]{8}$/);

    assert.equal(await server.stop(), 0);
    assert.deepEqual(holding(dbFiles(), secrets), [], 'the database files after a clean stop');

    // A restart with the key: the script gets its secret, S3 verifies signatures with the opened key.
    server = await startEdgeport({ owner: t, dataDir, env: ADMIN });
    await servedWithin(server.urls.edge!, 'secrets.test', workerSecret, 20_000);
    await s3Works(server, s3Key);
    const refusedWhileRunning = await runEdgeport(['secrets', 'rotate-key', '--data-dir', dataDir]);
    assert.equal(refusedWhileRunning.code, 1, 'no rotation beside a running server');
    assert.match(refusedWhileRunning.stderr, /edgeport start/);
    assert.equal(await server.stop(), 0);

    // Another key, or none: refused before anything is read or written.
    const wrong = await runEdgeport(['start', '--data-dir', dataDir, ...PORTS], {
      env: { ...ADMIN, EDGEPORT_SECRETS_KEY: randomBytes(32).toString('base64') },
    });
    assert.equal(wrong.code, 1);
    assert.match(
      wrong.stderr,
      /^edgeport: The secrets key from EDGEPORT_SECRETS_KEY or \[secrets\] key \(id [0-9a-f]{8}\) is not the one this database's secrets are sealed with \(id [0-9a-f]{8}\): start with that key\./m,
    );
    const malformed = await runEdgeport(['start', '--data-dir', dataDir, ...PORTS], { env: { ...ADMIN, EDGEPORT_SECRETS_KEY: 'not-a-key' } });
    assert.equal(malformed.code, 1);
    assert.match(malformed.stderr, /secrets\.key: must be the base64 of 32 random bytes/);
    assert.doesNotMatch(malformed.stderr, /not-a-key/, 'a key is never echoed');
    renameSync(keyFile, `${keyFile}.away`);
    const missing = await runEdgeport(['start', '--data-dir', dataDir, ...PORTS], { env: ADMIN });
    assert.equal(missing.code, 1);
    assert.match(
      missing.stderr,
      /^edgeport: The database's secrets are sealed with secrets key [0-9a-f]{8}, and the key file .*secrets\.key does not exist: put that key back there/m,
    );
    assert.equal(existsSync(keyFile), false, 'no key was made in its place');
    renameSync(`${keyFile}.away`, keyFile);

    // Rotation: everything resealed; the old key is refused, the new one serves.
    const rotated = await runEdgeport(['secrets', 'rotate-key', '--data-dir', dataDir]);
    assert.equal(rotated.code, 0, rotated.stderr);
    assert.match(
      rotated.stdout,
      /^edgeport: resealed 1 worker secret, 2 S3 secret keys and 1 log job destination with the new secrets key ([0-9a-f]{8}), now in .*secrets\.key; the old key ([0-9a-f]{8}) no longer opens them\.$/m,
    );
    const secondKey = readFileSync(keyFile, 'utf8');
    assert.notEqual(secondKey, firstKey);
    assert.equal(statSync(keyFile).mode & 0o777, 0o600);
    assert.equal(existsSync(`${keyFile}.new`), false);
    const oldKey = await runEdgeport(['start', '--data-dir', dataDir, ...PORTS], { env: { ...ADMIN, EDGEPORT_SECRETS_KEY: firstKey.trim() } });
    assert.equal(oldKey.code, 1, 'the old key no longer works');
    assert.match(oldKey.stderr, /is not the one this database's secrets are sealed with/);
    server = await startEdgeport({ owner: t, dataDir, env: ADMIN });
    await servedWithin(server.urls.edge!, 'secrets.test', workerSecret, 20_000);
    await s3Works(server, s3Key);
    assert.equal(await server.stop(), 0);
    assert.deepEqual(holding(dbFiles(), [...secrets, firstKey.trim()]), [], 'the database files after the rotation');

    // The backup from before the rotation, restored into a new data dir: it needs the key it was made with, supplied apart.
    const restored = join(dir, 'restored');
    const restore = await runEdgeport(['restore', backupDir, '--data-dir', restored]);
    assert.equal(restore.code, 0, restore.stderr);
    assert.match(
      restore.stdout,
      /^edgeport: the database's secrets are sealed with key [0-9a-f]{8}: put that key in the key file .*restored\/secrets\.key \(or give it as EDGEPORT_SECRETS_KEY\) before starting\.$/m,
    );
    const noKey = await runEdgeport(['start', '--data-dir', restored, ...PORTS], { env: ADMIN });
    assert.equal(noKey.code, 1);
    assert.match(noKey.stderr, /secrets are sealed with secrets key [0-9a-f]{8}, and the key file .*restored\/secrets\.key does not exist/);
    const withNew = await runEdgeport(['start', '--data-dir', restored, ...PORTS], { env: { ...ADMIN, EDGEPORT_SECRETS_KEY: secondKey.trim() } });
    assert.equal(withNew.code, 1, 'the backup predates the rotation: the new key does not open it');
    const again = await startEdgeport({ owner: t, dataDir: restored, env: { ...ADMIN, EDGEPORT_SECRETS_KEY: firstKey.trim() } });
    await servedWithin(again.urls.edge!, 'secrets.test', workerSecret, 20_000);
    await s3Works(again, s3Key);
    assert.equal(await again.stop(), 0);

    // --include-secrets-key: the backup carries the key, and a restore puts it in the data dir.
    const withKeyDir = join(dir, 'backup-with-key');
    const withKey = await runEdgeport(['backup', withKeyDir, '--data-dir', dataDir, '--include-secrets-key']);
    assert.equal(withKey.code, 0, withKey.stderr);
    assert.equal(readFileSync(join(withKeyDir, 'secrets.key'), 'utf8'), secondKey);
    assert.equal(statSync(join(withKeyDir, 'secrets.key')).mode & 0o777, 0o600);
    const second = join(dir, 'restored-with-key');
    assert.equal((await runEdgeport(['restore', withKeyDir, '--data-dir', second])).code, 0);
    assert.equal(readFileSync(join(second, 'secrets.key'), 'utf8'), secondKey);
  },
);

test(
  'postgres: no key, no start; the rows hold no clear value; a rotation is refused while an instance runs, and works with --new-key-file',
  { timeout: 240_000 },
  async (t) => {
    const dir = tempDir(t);
    const url = await pgTestUrl(t, { pool: 4 });
    const noKey = await runEdgeport(['start', '--data-dir', join(dir, 'a'), ...PORTS], { env: { ...ADMIN, EDGEPORT_DB_URL: url, EDGEPORT_SECRETS_KEY: '' } });
    assert.equal(noKey.code, 1);
    assert.match(
      noKey.stderr,
      /^edgeport: \[db\] url is PostgreSQL, whose instances must all hold the same secrets key, and none was given: make one with "head -c 32 \/dev\/urandom \| base64"/m,
    );
    assert.equal(existsSync(join(dir, 'a', 'secrets.key')), false, 'none was made');

    const key = randomBytes(32).toString('base64');
    const env = { ...ADMIN, EDGEPORT_DB_URL: url, EDGEPORT_SECRETS_KEY: key };
    const server = await startEdgeport({ owner: t, dataDir: join(dir, 'a'), env });
    const workerSecret = `pg-worker-secret-${randomBytes(12).toString('hex')}`;
    const { s3Key } = await putSecrets(t, server, workerSecret);

    const { config, schema } = parsePgUrl(url);
    const client = new pg.Client(config);
    await client.connect();
    t.after(() => client.end());
    await client.query(`SET search_path TO ${schema}`);
    const rows = [
      ...(await client.query<{ v: string }>('SELECT value AS v FROM worker_secrets')).rows,
      ...(await client.query<{ v: string }>('SELECT secret AS v FROM s3_access_keys')).rows,
      ...(await client.query<{ v: string }>('SELECT job AS v FROM log_jobs')).rows,
    ].map((row) => row.v);
    assert.equal(rows.length, 4, 'the secret, two S3 keys (the generated one and the one made), the job');
    for (const value of rows) for (const secret of [workerSecret, s3Key.secretAccessKey]) assert.ok(!value.includes(secret), `a row holds ${secret} in clear`);
    t.diagnostic(`worker_secrets.value as stored: ${rows[0]}`);

    // Another machine's rotate-key (its own data dir): refused while an instance runs on the database.
    const refused = await runEdgeport(['secrets', 'rotate-key', '--data-dir', join(dir, 'elsewhere'), '--new-key-file', join(dir, 'next.key')], {
      env: { EDGEPORT_DB_URL: url, EDGEPORT_SECRETS_KEY: key },
    });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /An edgeport instance runs on .*: stop every instance on this database first/);
    assert.equal(existsSync(join(dir, 'next.key')), false, 'the unused key was removed');
    const needsFile = await runEdgeport(['secrets', 'rotate-key', '--data-dir', join(dir, 'elsewhere')], {
      env: { EDGEPORT_DB_URL: url, EDGEPORT_SECRETS_KEY: key },
    });
    assert.equal(needsFile.code, 1);
    assert.match(needsFile.stderr, /name a new file for the new key with --new-key-file FILE/);
    assert.equal(await server.stop(), 0);

    const rotated = await runEdgeport(['secrets', 'rotate-key', '--data-dir', join(dir, 'a'), '--new-key-file', join(dir, 'next.key')], {
      env: { EDGEPORT_DB_URL: url, EDGEPORT_SECRETS_KEY: key },
    });
    assert.equal(rotated.code, 0, rotated.stderr);
    assert.match(rotated.stdout, /set EDGEPORT_SECRETS_KEY \(or \[secrets\] key\) to the contents of .*next\.key on every instance/);
    const next = readFileSync(join(dir, 'next.key'), 'utf8').trim();
    const old = await runEdgeport(['start', '--data-dir', join(dir, 'a'), ...PORTS], { env });
    assert.equal(old.code, 1, 'the old key no longer works');
    const restarted = await startEdgeport({ owner: t, dataDir: join(dir, 'b'), env: { ...env, EDGEPORT_SECRETS_KEY: next } });
    await servedWithin(restarted.urls.edge!, 'secrets.test', workerSecret, 20_000);
    await s3Works(restarted, s3Key);
    assert.equal(await restarted.stop(), 0);
  },
);
