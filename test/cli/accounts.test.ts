import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { verifyApiKey } from '../../src/api/credentials.ts';
import { runAccounts } from '../../src/cli/accounts.ts';
import { UsageError } from '../../src/cli/args.ts';
import { systemClock } from '../../src/core/clock.ts';
import { testScryptThread } from '../helpers/scrypt-thread.ts';
import { openTestControlStore } from '../helpers/control-store.ts';
import { testDbUrl } from '../helpers/postgres.ts';
import { tempDir } from '../helpers/temp-dir.ts';

/** Arguments naming the database the suites run on: none for SQLite (the data dir), else a config with `[db] url`. */
function dbArgs(dataDir: string, dbUrl: string | undefined): string[] {
  if (dbUrl === undefined) return [];
  const file = join(dataDir, 'edgeport.toml');
  writeFileSync(file, `[db]\nurl = ${JSON.stringify(dbUrl)}\n`);
  return ['--config', file];
}

test('edgeport accounts create prints the key once and stores only its hash', { timeout: 30_000 }, async (t) => {
  const dataDir = tempDir(t);
  const dbUrl = await testDbUrl(t);
  const db = dbArgs(dataDir, dbUrl);
  const lines: string[] = [];
  await runAccounts(['create', 'dev@example.com', '--data-dir', dataDir, ...db], (line) => lines.push(line));
  const key = /X-Auth-Key:\s+(\S+)/.exec(lines.join('\n'))?.[1];
  assert.match(key!, /^[0-9a-f]{37}$/);
  const control = await openTestControlStore(t, { dataDir, clock: systemClock, dbUrl });
  const account = await control.findAccountByEmail('dev@example.com');
  assert.ok(account && (await verifyApiKey(key!, account.keyHash, testScryptThread(t))));
  assert.ok(!account.keyHash.includes(key!));
  await assert.rejects(
    runAccounts(['create', 'DEV@example.com', '--data-dir', dataDir, ...db], () => undefined),
    { code: 'ACCOUNT_EXISTS' },
  );
  await assert.rejects(
    runAccounts(['create', 'not-an-email', '--data-dir', dataDir, ...db], () => undefined),
    { code: 'ACCOUNT_EMAIL_INVALID' },
  );
  await assert.rejects(
    runAccounts(['remove', 'x@example.com'], () => undefined),
    UsageError,
  );
  await assert.rejects(
    runAccounts(['create'], () => undefined),
    UsageError,
  );
});

test('the real command line: `edgeport accounts create` prints the credentials', { timeout: 30_000 }, async (t) => {
  const dataDir = tempDir(t);
  const db = dbArgs(dataDir, await testDbUrl(t));
  const run = (email: string) =>
    promisify(execFile)(process.execPath, ['bin/edgeport.js', 'accounts', 'create', email, '--data-dir', dataDir, ...db], {
      env: { ...process.env, EDGEPORT_DATA_DIR: '' },
    });
  const { stdout } = await run('cli@example.com');
  assert.match(
    stdout,
    /^edgeport: created account [0-9a-f]{32} for cli@example.com\. Its API key is shown only this once:\n {2}X-Auth-Email: cli@example\.com\n {2}X-Auth-Key: {3}[0-9a-f]{37}\n$/,
  );
});

test("edgeport accounts list, rotate-key and delete on the suites' database", { timeout: 30_000 }, async (t) => {
  const dataDir = tempDir(t);
  const dbUrl = await testDbUrl(t);
  const db = dbArgs(dataDir, dbUrl);
  const run = async (...args: string[]) => {
    const lines: string[] = [];
    await runAccounts([...args, '--data-dir', dataDir, ...db], (line) => lines.push(line));
    return lines;
  };
  await run('create', 'first@example.com');
  await new Promise((resolve) => setTimeout(resolve, 5));
  await run('create', 'second@example.com');
  const listed = await run('list');
  assert.equal(listed.length, 3);
  assert.match(listed[1]!, /^[0-9a-f]{32} +first@example\.com +\S+ +0 +0 +0 +0 +operator$/);
  assert.match(listed[2]!, /^[0-9a-f]{32} +second@example\.com +\S+ +0 +0 +0 +0$/);
  const key = /X-Auth-Key:\s+(\S+)/.exec((await run('rotate-key', 'second@example.com')).join('\n'))![1]!;
  const control = await openTestControlStore(t, { dataDir, clock: systemClock, dbUrl });
  assert.ok(await verifyApiKey(key, (await control.findAccountByEmail('second@example.com'))!.keyHash, testScryptThread(t)));
  assert.match((await run('rotate-key', 'first@example.com')).join('\n'), /this is the operator: a start with EDGEPORT_ADMIN_KEY set puts that key back/);
  await assert.rejects(run('delete', 'first@example.com'), { code: 'ACCOUNT_IS_OPERATOR' });
  await assert.rejects(run('rotate-key', 'nobody@example.com'), { code: 'ACCOUNT_NOT_FOUND' });
  assert.match((await run('delete', 'second@example.com')).join('\n'), /^edgeport: deleted account [0-9a-f]{32} \(second@example\.com\); 0 S3 keys revoked\.$/);
  assert.equal(await control.findAccountByEmail('second@example.com'), null);
  assert.equal((await run('list')).length, 2);
});

test('edgeport accounts quota shows what an account stores against its quotas and sets its own', { timeout: 30_000 }, async (t) => {
  const dataDir = tempDir(t);
  const dbUrl = await testDbUrl(t);
  const db = dbArgs(dataDir, dbUrl);
  const run = async (...args: string[]) => {
    const lines: string[] = [];
    await runAccounts([...args, '--data-dir', dataDir, ...db], (line) => lines.push(line));
    return lines;
  };
  await run('create', 'first@example.com');
  await run('create', 'tenant@example.com');
  const shown = await run('quota', 'tenant@example.com');
  assert.match(shown[0]!, /^edgeport: tenant@example\.com \([0-9a-f]{32}\):$/);
  assert.deepEqual(
    shown.slice(1).map((line) => line.split(/ {2,}/).filter(Boolean)),
    [
      ['QUOTA', 'STORED', 'LIMIT', 'SET BY'],
      ['object bytes', '0', '107374182400 (100 GiB)', '[quotas] max_object_bytes_per_account'],
      ['objects', '0', '10000000', '[quotas] max_objects_per_account'],
      ['script bytes', '0', '1073741824 (1 GiB)', '[quotas] max_script_bytes_per_account'],
      ['Each script keeps its 100 newest versions and the deployed one ([quotas] max_versions_per_script).'],
    ],
  );
  const set = await run('quota', 'tenant@example.com', '--max-object-bytes', '5MiB', '--max-objects', '0');
  assert.match(set[0]!, /now has these quotas:$/);
  assert.deepEqual(
    set.slice(2, 4).map((line) => line.split(/ {2,}/).filter(Boolean)),
    [
      ['object bytes', '0', '5242880 (5 MiB)', 'this account (edgeport accounts quota)'],
      ['objects', '0', 'none', 'this account (edgeport accounts quota)'],
    ],
  );
  const back = await run('quota', 'tenant@example.com', '--max-objects', 'default');
  assert.deepEqual(
    back.slice(2, 4).map((line) => line.split(/ {2,}/).filter(Boolean).slice(2)),
    [
      ['5242880 (5 MiB)', 'this account (edgeport accounts quota)'],
      ['10000000', '[quotas] max_objects_per_account'],
    ],
  );
  await assert.rejects(run('quota', 'nobody@example.com'), { code: 'ACCOUNT_NOT_FOUND' });
});
