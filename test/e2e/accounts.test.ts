/**
 * `edgeport accounts list | rotate-key | delete` through the real CLI while `edgeport start` runs on
 * the same data dir: the server sees each change at once (a rotated key stops working, a deleted
 * account's zones, buckets and S3 keys are gone), an account that holds things is refused without
 * --force, and the operator is never deleted.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { ListBucketsCommand, S3Client } from '@aws-sdk/client-s3';
import { runEdgeport } from '../helpers/edgeport-cli.ts';
import { startEdgeport } from '../helpers/edgeport-server.ts';
import { managementApi } from '../helpers/management-api.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const ADMIN = { EDGEPORT_ADMIN_EMAIL: 'ops@example.com', EDGEPORT_ADMIN_KEY: 'ops-key-0123456789' };

test('accounts list, rotate-key and delete beside a running server', { timeout: 180_000 }, async (t) => {
  const dataDir = join(tempDir(t), 'data');
  const server = await startEdgeport({ owner: t, dataDir, env: ADMIN });
  const base = server.urls['management API']!;
  const accounts = (...args: string[]) => runEdgeport(['accounts', ...args, '--data-dir', dataDir]);

  const made = await accounts('create', 'tenant@example.com');
  assert.equal(made.code, 0, made.stderr);
  const tenantKey = /X-Auth-Key: +(\S+)/.exec(made.stdout)![1]!;
  const tenant = managementApi(base, 'tenant@example.com', tenantKey);
  const [account] = await tenant.call<Array<{ id: string }>>('GET', '/accounts');
  await tenant.call('POST', '/zones', { name: 'tenant.example.test', account: { id: account!.id } });
  await tenant.call('POST', `/accounts/${account!.id}/store/buckets`, { name: 'tenant-files' });
  await tenant.call('PUT', `/accounts/${account!.id}/store/buckets/tenant-files/objects/a.txt`, 'hello');
  const s3Key = await tenant.call<{ access_key_id: string; secret_access_key: string }>('POST', `/accounts/${account!.id}/store/access-keys`, {});

  const listed = await accounts('list');
  assert.equal(listed.code, 0, listed.stderr);
  const lines = listed.stdout.trimEnd().split('\n');
  assert.match(lines[0]!, /^ID +E-MAIL +CREATED +ZONES +LOG JOBS +BUCKETS +SCRIPTS$/);
  assert.match(lines[1]!, /^[0-9a-f]{32} +ops@example\.com +\S+ +0 +0 +0 +0 +operator$/);
  assert.match(lines[2]!, new RegExp(`^${account!.id} +tenant@example\\.com +\\S+ +1 +0 +1 +0$`));

  // A rotated key: printed once, the old one refused at once by the running server.
  const rotated = await accounts('rotate-key', 'tenant@example.com');
  assert.equal(rotated.code, 0, rotated.stderr);
  const newKey = /X-Auth-Key: +(\S+)/.exec(rotated.stdout)![1]!;
  assert.notEqual(newKey, tenantKey);
  const old = await fetch(`${base}/zones`, { headers: { 'x-auth-email': 'tenant@example.com', 'x-auth-key': tenantKey } });
  assert.equal(old.status, 403);
  const renewed = managementApi(base, 'tenant@example.com', newKey);
  assert.equal((await renewed.call<unknown[]>('GET', '/zones')).length, 1);

  // Delete: refused while it holds things (named), the operator never, then --force.
  const refused = await accounts('delete', 'tenant@example.com');
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /tenant@example\.com still holds 1 zones \(tenant\.example\.test\) with 0 log jobs and 1 buckets \(tenant-files\): .*--force/);
  const operator = await accounts('delete', 'ops@example.com', '--force');
  assert.equal(operator.code, 1);
  assert.match(operator.stderr, /operator/);
  assert.equal((await accounts('delete', 'nobody@example.com')).code, 1);
  const deleted = await accounts('delete', 'tenant@example.com', '--force');
  assert.equal(deleted.code, 0, deleted.stderr);
  assert.match(
    deleted.stdout,
    /^edgeport: deleted account [0-9a-f]{32} \(tenant@example\.com\) with 1 zones, 1 buckets \(1 objects\) and 0 scripts; 1 S3 keys revoked\.$/m,
  );
  const gone = await fetch(`${base}/zones`, { headers: { 'x-auth-email': 'tenant@example.com', 'x-auth-key': newKey } });
  assert.equal(gone.status, 403, 'the account is gone');
  // Its zone name is free again, for the operator.
  const ops = managementApi(base, ADMIN.EDGEPORT_ADMIN_EMAIL, ADMIN.EDGEPORT_ADMIN_KEY);
  const [opsAccount] = await ops.call<Array<{ id: string }>>('GET', '/accounts');
  await ops.call('POST', '/zones', { name: 'tenant.example.test', account: { id: opsAccount!.id } });
  const s3 = new S3Client({
    endpoint: server.urls['S3-compatible API']!,
    region: 'auto',
    forcePathStyle: true,
    maxAttempts: 1,
    credentials: { accessKeyId: s3Key.access_key_id, secretAccessKey: s3Key.secret_access_key },
  });
  t.after(() => s3.destroy());
  // The server caches keys for up to a second.
  await new Promise((resolve) => setTimeout(resolve, 1_100));
  await assert.rejects(s3.send(new ListBucketsCommand({})), (error: Error) => error.name === 'InvalidAccessKeyId', 'its S3 key is revoked');
  const after = await accounts('list');
  assert.equal(after.stdout.trimEnd().split('\n').length, 2, 'the operator alone');
});
