/**
 * The dashboard's S3 access keys page, end to end in Chromium against the real `edgeport start`:
 * the endpoint it shows is the S3 listener's; a read-only key limited to one bucket is made in the
 * page, its secret shown once (and copied by its button), then used from here with the AWS SDK: it
 * reads that bucket, cannot write it, cannot read another; once revoked in the page, it reaches
 * nothing. Screenshots to test-results/dashboard/, axe-core on each (test/helpers/dashboard-browser.ts).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { GetObjectCommand, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { checkPage, signIn, startDashboard } from '../helpers/dashboard-browser.ts';

/** What an SDK call failed with: the S3 error code, or 'ok'. */
async function outcome(send: () => Promise<unknown>): Promise<string> {
  try {
    await send();
    return 'ok';
  } catch (error) {
    if (error instanceof S3ServiceException) return error.name;
    throw error;
  }
}

test('the S3 access keys page: a read-only key for one bucket, its secret shown once, used with the AWS SDK, revoked', { timeout: 60_000 }, async (t) => {
  const { server, api, page, context, problems, apiGet, apiCall } = await startDashboard(t);
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: api });
  const s3Url = server.urls['S3-compatible API']!;
  const account = (await apiGet('/accounts'))[0].id as string;
  for (const bucket of ['reports', 'private']) await apiCall('POST', `/accounts/${account}/store/buckets`, { name: bucket });
  await apiCall('PUT', `/accounts/${account}/store/buckets/reports/objects/q3.csv`, 'quarter,total\n3,42\n', { 'content-type': 'text/csv' });
  await apiCall('PUT', `/accounts/${account}/store/buckets/private/objects/ledger.csv`, 'secret\n', { 'content-type': 'text/csv' });

  await page.goto(`${api}/access-keys`);
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  await signIn(page);
  await page.getByRole('heading', { name: 'S3 access keys', level: 1 }).waitFor();
  // How to use a key: this server's S3 listener, region auto.
  const usage = page.getByRole('region', { name: 'How to use a key' });
  await usage.getByText(s3Url, { exact: true }).waitFor();
  await usage.getByText('auto', { exact: true }).waitFor();
  // The key the first start made is listed (its secret is not: only the start banner showed it).
  const first = ((await apiGet(`/accounts/${account}/store/access-keys`)) as Array<{ access_key_id: string }>)[0]!.access_key_id;
  await page
    .getByRole('row', { name: new RegExp(first) })
    .getByText('Admin read & write')
    .waitFor();

  // Make a key: object read only, limited to the bucket reports.
  await page.getByRole('radio', { name: /^Object read only/ }).check();
  await page.getByRole('checkbox', { name: 'reports' }).check();
  await page.getByText('Only reports.').waitFor();
  await page.getByRole('button', { name: 'Create key' }).click();
  const made = page.getByRole('region', { name: /^New key EP/ });
  await made.getByText('Copy the secret now: this is the only time it is shown.').waitFor();
  const id = await made.getByLabel('Access key ID').inputValue();
  const secret = await made.getByLabel('Secret access key').inputValue();
  assert.match(id, /^EP[0-9A-F]{18}$/);
  assert.ok(secret.length >= 32, 'a secret is shown');
  await made.getByText('Object read only, limited to reports.').waitFor();
  await made.getByRole('button', { name: 'Copy secret' }).click();
  await made.getByText('Copied the secret.').waitFor();
  assert.equal(await page.evaluate('navigator.clipboard.readText()'), secret, 'the copy button copies the secret');
  assert.match(
    (await made.getByLabel('AWS SDK setup with this key').textContent()) ?? '',
    new RegExp(`endpoint: '${s3Url}'[^]*region: 'auto'[^]*accessKeyId: '${id}'`),
  );
  const row = page.getByRole('row', { name: new RegExp(id) });
  await row.getByText('Object read only').waitFor();
  await row.getByText('reports').waitFor();
  await row.getByText('active').waitFor();
  await checkPage(page, '15-access-key-created');
  const listed = ((await apiGet(`/accounts/${account}/store/access-keys`)) as Array<Record<string, unknown>>).find((k) => k.access_key_id === id)!;
  assert.deepEqual([listed.permission, listed.buckets, listed.status], ['object_read_only', ['reports'], 'active']);

  // The key at work, through the AWS SDK: it reads reports, and nothing more.
  const s3 = new S3Client({ endpoint: s3Url, region: 'auto', forcePathStyle: true, credentials: { accessKeyId: id, secretAccessKey: secret }, maxAttempts: 1 });
  t.after(() => s3.destroy());
  const read = await s3.send(new GetObjectCommand({ Bucket: 'reports', Key: 'q3.csv' }));
  assert.equal(await read.Body!.transformToString(), 'quarter,total\n3,42\n');
  assert.equal(
    await outcome(() => s3.send(new PutObjectCommand({ Bucket: 'reports', Key: 'new.csv', Body: 'x' }))),
    'AccessDenied',
    'a read-only key cannot write',
  );
  assert.equal(await outcome(() => s3.send(new GetObjectCommand({ Bucket: 'private', Key: 'ledger.csv' }))), 'AccessDenied', 'nor read another bucket');

  // Shown once: gone when dismissed, and never shown again, here or after a reload.
  await made.getByRole('button', { name: 'I have saved the secret' }).click();
  await made.waitFor({ state: 'detached' });
  assert.ok(!(await page.content()).includes(secret), 'the secret is gone from the page');
  problems.take();
  await page.reload();
  await row.getByText('active').waitFor();
  await page.waitForLoadState('networkidle');
  assert.ok(!(await page.content()).includes(secret), 'a reload does not show it');
  assert.deepEqual(problems.take(), [], 'the page loads without console errors or failed requests');

  // Revoke it in the page: within a second, S3 refuses it.
  await row.getByRole('button', { name: 'Revoke' }).click();
  await page.getByRole('button', { name: `Revoke ${id}` }).click();
  await page.getByRole('status').getByText(`Key ${id} revoked`).waitFor();
  await row.getByText('revoked').waitFor();
  assert.equal(await row.getByRole('button', { name: 'Revoke' }).count(), 0, 'a revoked key cannot be revoked again');
  await checkPage(page, '16-access-key-revoked');
  let after = '';
  for (let i = 0; i < 40 && after !== 'InvalidAccessKeyId'; i++) {
    after = await outcome(() => s3.send(new GetObjectCommand({ Bucket: 'reports', Key: 'q3.csv' })));
    if (after !== 'InvalidAccessKeyId') await sleep(100);
  }
  assert.equal(after, 'InvalidAccessKeyId', 'a revoked key reaches nothing');
  assert.deepEqual(problems.take(), [], 'no console errors or failed requests');
});
