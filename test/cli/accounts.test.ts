import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { verifyApiKey } from '../../src/api/credentials.ts';
import { runAccounts } from '../../src/cli/accounts.ts';
import { UsageError } from '../../src/cli/args.ts';
import { systemClock } from '../../src/core/clock.ts';
import { openSqliteControlStore } from '../../src/db/sqlite/sqlite-control-store.ts';
import { tempDir } from '../helpers/temp-dir.ts';

test('edgeport accounts create prints the key once and stores only its hash', async (t) => {
  const dataDir = tempDir(t);
  const lines: string[] = [];
  await runAccounts(['create', 'dev@example.com', '--data-dir', dataDir], (line) => lines.push(line));
  const key = /X-Auth-Key:\s+(\S+)/.exec(lines.join('\n'))?.[1];
  assert.match(key!, /^[0-9a-f]{37}$/);
  const control = openSqliteControlStore({ dataDir, clock: systemClock });
  t.after(() => control.close());
  const account = await control.findAccountByEmail('dev@example.com');
  assert.ok(account && await verifyApiKey(key!, account.keyHash));
  assert.ok(!account.keyHash.includes(key!));
  await assert.rejects(runAccounts(['create', 'dev@example.com', '--data-dir', dataDir], () => undefined), { code: 'ACCOUNT_EXISTS' });
  await assert.rejects(runAccounts(['create', 'not-an-email', '--data-dir', dataDir], () => undefined), { code: 'ACCOUNT_EMAIL_INVALID' });
  await assert.rejects(runAccounts(['delete', 'x@example.com'], () => undefined), UsageError);
  await assert.rejects(runAccounts(['create'], () => undefined), UsageError);
});

test('the real command line: `edgeport accounts create` prints the credentials', async (t) => {
  const dataDir = tempDir(t);
  const run = (email: string) => promisify(execFile)(process.execPath, ['bin/edgeport.js', 'accounts', 'create', email, '--data-dir', dataDir], { env: { ...process.env, EDGEPORT_DATA_DIR: '' } });
  const { stdout } = await run('cli@example.com');
  assert.match(stdout, /^edgeport: created account [0-9a-f]{32} for cli@example.com\. Its API key is shown only this once:\n {2}X-Auth-Email: cli@example\.com\n {2}X-Auth-Key: {3}[0-9a-f]{37}\n$/);
});
