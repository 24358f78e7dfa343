/**
 * The dashboard at phone width (375 x 812, a mobile viewport), in Chromium against the real
 * `edgeport start`, with data made through the API first: every main page loads with no console
 * errors and no failed requests, nothing scrolls sideways (tables become stacked cards), a zone or
 * bucket that is not there gets the API's answer and a way back, and each page is screenshotted to test-results/dashboard/phone-*.png and checked with axe-core
 * (test/helpers/dashboard-browser.ts).
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { assertNoHorizontalOverflow, checkPage, PHONE, signIn, startDashboard } from '../helpers/dashboard-browser.ts';

test('the dashboard at phone width: every main page loads cleanly and fits 375 px', { timeout: 180_000 }, async (t) => {
  const { api, dir, page, problems, apiGet, apiCall } = await startDashboard(t, {
    env: (tmp) => ({ EDGEPORT_LOGS_FILE_ROOTS: tmp }), // the job's directory lies strictly below a root
    context: { viewport: PHONE, isMobile: true, hasTouch: true },
  });
  const logsDir = join(dir, 'logs');

  // Something on every page: zones (one paused, long names), custom fields, a log job, a bucket with a folder, keys.
  const zone = (await apiCall('POST', '/zones', { name: 'shop.example.test', origin: 'http://127.0.0.1:9' })) as { id: string; account: { id: string } };
  const account = zone.account.id;
  const other = (await apiCall('POST', '/zones', {
    name: 'a-rather-long-zone-name-for-a-phone.example.test',
    origin: 'https://origin.internal.example.test:8443/base',
  })) as { id: string };
  await apiCall('PATCH', `/zones/${other.id}`, { paused: true });
  await apiCall('PUT', `/zones/${zone.id}/rulesets/phases/http_log_custom_fields/entrypoint`, {
    rules: [
      {
        action: 'log_custom_field',
        expression: 'true',
        enabled: true,
        action_parameters: {
          request_fields: [{ name: 'content-type' }, { name: 'x-forwarded-for' }],
          response_fields: [{ name: 'server' }],
          cookie_fields: [{ name: 'accountNumber' }],
        },
      },
    ],
  });
  const destination = `file://${logsDir}/{DATE}`;
  await apiCall('POST', `/zones/${zone.id}/logshipping/ownership`, { destination_conf: destination });
  const job = (await apiCall('POST', `/zones/${zone.id}/logshipping/jobs`, {
    name: 'shop-logs',
    destination_conf: destination,
    ownership_challenge: await readFile(join(logsDir, 'ownership-challenge.txt'), 'utf8'),
    enabled: true,
    filter: JSON.stringify({
      where: {
        and: [
          { key: 'ClientRequestPath', operator: 'contains', value: '/api' },
          {
            or: [
              { key: 'ClientRequestMethod', operator: 'eq', value: 'POST' },
              { key: 'EdgeResponseStatus', operator: 'geq', value: 500 },
            ],
          },
        ],
      },
    }),
  })) as { id: number };
  await apiCall('POST', `/accounts/${account}/store/buckets`, { name: 'photos' });
  await apiCall('PUT', `/accounts/${account}/store/buckets/photos/objects/${encodeURIComponent('cats/tom.jpg')}`, 'not really a jpeg', {
    'content-type': 'image/jpeg',
  });
  await apiCall(
    'PUT',
    `/accounts/${account}/store/buckets/photos/objects/${encodeURIComponent('holiday-2026-11-23-the-whole-family-on-the-beach.txt')}`,
    'hello',
  );
  await apiCall('POST', `/accounts/${account}/store/access-keys`, { permission: 'object_read_only', buckets: ['photos'] });

  /**
   * Loads a page afresh; nothing may fail on the way but what `expected` matches (an unknown
   * zone's 404), nothing may stick out sideways.
   */
  const visit = async (path: string, heading: string, shot: string, expected?: RegExp) => {
    problems.take();
    await page.goto(`${api}${path}`);
    await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
    await page.waitForLoadState('networkidle');
    await page
      .getByText(/^Loading/)
      .first()
      .waitFor({ state: 'detached' });
    assert.deepEqual(
      problems.take().filter((line) => !expected?.test(line)),
      [],
      `${path}: no console errors or failed requests on load`,
    );
    await assertNoHorizontalOverflow(page, path);
    await checkPage(page, shot);
  };

  await visit('/', 'Sign in', 'phone-01-sign-in');
  await signIn(page);
  await visit('/zones', 'Zones', 'phone-02-zones');
  await page
    .getByRole('row', { name: /a-rather-long-zone-name/ })
    .getByText('paused')
    .waitFor();
  await visit(`/zones/${zone.id}`, 'Zone settings', 'phone-03-zone-settings');
  await visit(`/zones/${zone.id}/custom-fields`, 'Custom fields', 'phone-04-custom-fields');
  await page.getByText('4 of 40 fields used').waitFor();
  await visit(`/zones/${zone.id}/jobs`, 'Log jobs', 'phone-05-jobs');
  await page
    .getByRole('row', { name: /shop-logs/ })
    .getByText('enabled')
    .waitFor();
  await visit(`/zones/${zone.id}/jobs/${job.id}`, 'Log job shop-logs', 'phone-06-job');
  await page.getByText('Operators: 3 of 30').waitFor();
  await visit('/buckets', 'Buckets', 'phone-07-buckets');
  await visit('/buckets/photos', 'photos', 'phone-08-bucket');
  await page
    .getByRole('row', { name: /holiday-2026/ })
    .getByRole('button', { name: /^Metadata of/ })
    .click();
  await page.getByText('text/plain', { exact: false }).or(page.getByText('HTTP metadata')).first().waitFor();
  await assertNoHorizontalOverflow(page, "an object's metadata");
  await checkPage(page, 'phone-09-bucket-metadata');
  await visit('/access-keys', 'S3 access keys', 'phone-10-access-keys');
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.getByText('Copy the secret now: this is the only time it is shown.').waitFor();
  await assertNoHorizontalOverflow(page, 'a new key');
  await checkPage(page, 'phone-11-access-key-created');
  await visit('/tokens', 'API tokens', 'phone-11a-tokens');
  await page.getByLabel('Name').fill('phone');
  await page.getByRole('radio', { name: 'Zones: edit' }).check();
  await page.getByRole('button', { name: 'Create token' }).click();
  await page.getByText('Copy the token now: this is the only time it is shown.').waitFor();
  await assertNoHorizontalOverflow(page, 'a new token');
  await checkPage(page, 'phone-11b-token-created');
  await visit('/scripts', 'Scripts', 'phone-11c-scripts');
  await page.getByRole('heading', { name: 'No scripts yet' }).waitFor();
  await visit('/gateway', 'Gateway', 'phone-12-gateway');
  await page
    .getByRole('row', { name: /rinkeby/ })
    .getByText('retired on 2023-01-30')
    .waitFor();
  await visit(
    '/zones/0123456789abcdef0123456789abcdef/jobs',
    'No such zone',
    'phone-13-zone-unknown',
    /404.*(zones\/0123456789abcdef0123456789abcdef$|Not Found)/,
  );
  await visit('/buckets/no-such-bucket', 'No such bucket', 'phone-14-bucket-unknown', /404.*(buckets\/no-such-bucket\/objects|Not Found)/);
  await page.getByRole('alert').filter({ hasText: 'The specified bucket does not exist.' }).waitFor();
  await page.getByRole('link', { name: '← Back to your buckets' }).click();
  await page.getByRole('heading', { name: 'Buckets', level: 1 }).waitFor();
  assert.deepEqual((await apiGet(`/zones/${other.id}`)).paused, true);
});
