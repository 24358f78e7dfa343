/**
 * The web dashboard end to end: the real `edgeport start`, driven in Debian's Chromium by
 * playwright-core. A first visit loads without console errors or failed requests; sign in (a wrong
 * key first); create a zone, change its origin, pause and resume it; set custom fields (an
 * upper-case header is refused when added and offered in lower case; a name typed but not added
 * is saved with the rest, an invalid one stops the save); an unknown zone id gets the API's answer
 * and a way back; create a log job with a nested filter through the builder and watch its
 * delivered lines; upload a 20 MiB file with a progress bar (the form resets, one status), browse
 * to it by folder, download and compare it, delete it; use the gateway page; sign out. Every page
 * is screenshotted to test-results/dashboard/ and checked with axe-core (test/helpers/dashboard-browser.ts).
 * The access keys page and the phone-width run are in dashboard-access-keys.test.ts and dashboard-phone.test.ts.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { checkPage, EMAIL, KEY, signIn, startDashboard } from '../helpers/dashboard-browser.ts';

/** GET through the edge with a Host header (fetch cannot set Host). */
function viaEdge(edge: string, host: string, path: string, method = 'GET'): Promise<number> {
  const url = new URL(edge);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, method, headers: { host, 'x-forwarded-for': '203.0.113.7' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

test('the dashboard: sign in, zones, custom fields, log jobs, buckets, gateway, sign out', { timeout: 180_000 }, async (t) => {
  const { server, api, dir, context, page, problems, apiGet } = await startDashboard(t, {
    env: (tmp) => ({ EDGEPORT_LOGS_MAX_BATCH_INTERVAL_MS: '300', EDGEPORT_LOGS_FILE_ROOTS: tmp }), // the job's directory lies strictly below a root
    context: { acceptDownloads: true },
  });
  const logsDir = join(dir, 'logs');
  const edge = server.urls.edge!;
  const asOwner = { 'x-auth-email': EMAIL, 'x-auth-key': KEY };

  // A first visit: the sign-in page, with nothing failing on the way (no 401 for a session it never had).
  await page.goto(`${api}/`);
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  await page.waitForLoadState('networkidle');
  assert.deepEqual(problems.take(), [], 'a first visit loads without console errors or failed requests');
  await checkPage(page, '01-sign-in');
  // Sign in: a wrong key first, explained; then the right one.
  await page.getByLabel('E-mail').fill(EMAIL);
  await page.getByLabel('API key').fill('not-the-key');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('alert').getByText('That e-mail and API key do not match an account').waitFor();
  await checkPage(page, '02-sign-in-wrong-key');
  problems.take();
  await signIn(page);
  await page.getByRole('heading', { name: 'Zones', level: 1 }).waitFor();
  await page.getByRole('banner').getByText(`operator: ${EMAIL}`).waitFor();
  const cookie = (await context.cookies()).find((c) => c.name === 'edgeport_session');
  assert.ok(cookie?.httpOnly, 'the session cookie is httpOnly');
  assert.equal(cookie.sameSite, 'Strict');
  assert.equal(await page.evaluate('document.cookie'), '', 'scripts cannot read the session cookie');
  // A reload finds the session again, and nothing fails on the way.
  await page.reload();
  await page.getByRole('heading', { name: 'Zones', level: 1 }).waitFor();
  await page.waitForLoadState('networkidle');
  assert.deepEqual(problems.take(), [], 'a signed-in load has no console errors or failed requests');

  // A zone.
  await page.getByLabel('Name').fill('shop.example.test');
  await page.getByLabel('Origin').fill('http://127.0.0.1:9');
  await page.getByRole('button', { name: 'Add zone' }).click();
  await page.getByRole('status').getByText('Zone shop.example.test created.').waitFor();
  const zoneRow = page.getByRole('row', { name: /shop\.example\.test/ });
  await zoneRow.getByText('active').waitFor();
  await checkPage(page, '03-zones');
  const zone = (await apiGet('/zones'))[0] as { id: string; name: string };
  assert.equal(zone.name, 'shop.example.test');

  // Its settings: the origin changed, the zone paused (shown as paused everywhere), then resumed.
  await zoneRow.getByRole('link', { name: 'Settings' }).click();
  await page.getByRole('heading', { name: 'Zone settings', level: 1 }).waitFor();
  await page.getByLabel('Origin URL').fill('http://127.0.0.1:10');
  await page.getByRole('button', { name: 'Save origin' }).click();
  await page.getByRole('status').getByText('Origin set to http://127.0.0.1:10.').waitFor();
  assert.equal((await apiGet(`/zones/${zone.id}`)).origin, 'http://127.0.0.1:10');
  await page.getByLabel('Origin URL').fill('ftp://127.0.0.1');
  await page.getByRole('button', { name: 'Save origin' }).click();
  await page.getByRole('alert').getByText('the origin must be an http:// or https:// URL').waitFor();
  assert.equal((await apiGet(`/zones/${zone.id}`)).origin, 'http://127.0.0.1:10', 'a refused origin changes nothing');
  await page.getByLabel('Origin URL').fill('http://127.0.0.1:9');
  await page.getByRole('button', { name: 'Save origin' }).click();
  await page.getByRole('status').getByText('Origin set to http://127.0.0.1:9.').waitFor();
  await page.getByRole('button', { name: 'Pause zone' }).click();
  await page.getByRole('status').getByText('Zone paused.').waitFor();
  await page.getByRole('navigation', { name: 'Breadcrumb' }).getByText('paused').waitFor();
  assert.equal((await apiGet(`/zones/${zone.id}`)).paused, true);
  await checkPage(page, '04-zone-settings-paused');
  await page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: 'Zones' }).click();
  await zoneRow.getByText('paused').waitFor();
  await zoneRow.getByRole('link', { name: 'Settings' }).click();
  await page.getByRole('button', { name: 'Resume zone' }).click();
  await page.getByRole('status').getByText('Zone resumed: it is active.').waitFor();
  assert.equal((await apiGet(`/zones/${zone.id}`)).paused, false);

  // Custom fields: checked as one types and when added; what is typed but not added is saved too.
  await page.getByRole('navigation', { name: 'Zone sections' }).getByRole('link', { name: 'Custom fields' }).click();
  await page.getByRole('heading', { name: 'Custom fields', level: 1 }).waitFor();
  await page.getByLabel('Add a request header').fill('content-type');
  await page.getByLabel('Add a request header').press('Enter');
  await page.getByLabel('Add a request header').fill('X-Forwarded-For');
  await page.getByText('Header names must be lower case: write “x-forwarded-for”.').waitFor();
  await page.getByLabel('Add a request header').press('Enter');
  await page.getByText('1 of 40 fields used').waitFor();
  assert.equal(await page.getByLabel('Add a request header').inputValue(), 'X-Forwarded-For', 'an upper-case header is not added');
  await page.getByRole('button', { name: 'Add “x-forwarded-for” instead' }).click();
  await page.getByLabel('Add a response header').fill('server');
  await page.getByLabel('Add a response header').press('Enter');
  await page.getByText('3 of 40 fields used').waitFor();
  // A cookie typed, never added, and an invalid response header: the save stops and says where.
  await page.getByLabel('Add a cookie').fill('accountNumber');
  await page.getByLabel('Add a response header').fill('x bad');
  await page.getByRole('button', { name: 'Save custom fields' }).click();
  const stopped = page.getByRole('alert').filter({ hasText: 'Nothing was saved' });
  await stopped.getByText('Add a response header:').waitFor();
  await checkPage(page, '05-custom-fields-stopped');
  assert.equal(
    (await fetch(`${api}/client/v4/zones/${zone.id}/rulesets/phases/http_log_custom_fields/entrypoint`, { headers: asOwner })).status,
    404,
    'a stopped save writes nothing',
  );
  await page.getByLabel('Add a response header').fill('');
  await page.getByRole('button', { name: 'Save custom fields' }).click();
  await page.getByRole('status').getByText('Saved 4 fields, with the cookie accountNumber you had typed.').waitFor();
  await page.getByRole('button', { name: 'Remove cookie accountNumber' }).waitFor();
  assert.equal(await page.getByLabel('Add a cookie').inputValue(), '');
  await checkPage(page, '06-custom-fields');
  const ruleset = await apiGet(`/zones/${zone.id}/rulesets/phases/http_log_custom_fields/entrypoint`);
  assert.deepEqual(ruleset.rules[0].action_parameters, {
    request_fields: [{ name: 'content-type' }, { name: 'x-forwarded-for' }],
    response_fields: [{ name: 'server' }],
    cookie_fields: [{ name: 'accountNumber' }],
  });

  // A zone id that is not there: the API's answer and a way back, never a page loading forever.
  for (const bad of ['0123456789abcdef0123456789abcdef', 'not-a-zone']) {
    await page.goto(`${api}/zones/${bad}/jobs`);
    await page.getByRole('heading', { name: 'No such zone', level: 1 }).waitFor();
    await page.getByRole('alert').getByText(`Could not route to /zones/${bad}, perhaps your object identifier is invalid?`).waitFor();
    assert.equal(await page.getByText('Loading').count(), 0, 'nothing is left loading');
  }
  await checkPage(page, '07-zone-unknown');
  await page.getByRole('link', { name: '← Back to your zones' }).click();
  await page.getByRole('heading', { name: 'Zones', level: 1 }).waitFor();
  await zoneRow.getByRole('link', { name: 'Log jobs' }).click();
  problems.take();

  // A log job: destination, ownership challenge, fields, and a nested filter built in the page.
  await page.getByRole('heading', { name: 'Log jobs', level: 1 }).waitFor();
  await page.getByRole('link', { name: 'New log job' }).click();
  await page.getByRole('heading', { name: 'New log job' }).waitFor();
  await page.getByLabel('Name', { exact: true }).fill('shop-logs');
  await page.getByLabel('Destination', { exact: true }).fill(`file://${logsDir}/{DATE}`);
  await page.getByRole('button', { name: 'Write challenge file' }).click();
  await page.getByText(`Written to ${logsDir}/ownership-challenge.txt`).waitFor();
  await page.getByLabel('Ownership token').fill(await readFile(join(logsDir, 'ownership-challenge.txt'), 'utf8'));
  await page.getByRole('button', { name: 'Check token' }).click();
  await page.getByText('The token proves this destination is yours.').waitFor();
  await page.getByLabel('Find a field').fill('RequestHeaders');
  await page.getByRole('checkbox', { name: /^RequestHeaders/ }).check();
  await page.getByLabel('Timestamp format').selectOption('rfc3339');
  await page.getByRole('button', { name: 'Add condition to the top level' }).click();
  await page.getByLabel('Field of condition 1', { exact: true }).selectOption('ClientRequestPath');
  await page.getByLabel('Operator of condition 1', { exact: true }).selectOption('contains');
  await page.getByLabel('Value of condition 1', { exact: true }).fill('/api');
  await page.getByRole('button', { name: 'Add group to the top level' }).click();
  await page.getByLabel('Match in group 2').selectOption('or');
  await page.getByLabel('Field of condition 2.1').selectOption('ClientRequestMethod');
  await page.getByLabel('Operator of condition 2.1').selectOption('eq');
  await page.getByLabel('Value of condition 2.1').fill('POST');
  await page.getByRole('button', { name: 'Add condition to group 2' }).click();
  await page.getByLabel('Field of condition 2.2').selectOption('EdgeResponseStatus');
  await page.getByLabel('Operator of condition 2.2').selectOption('geq');
  await page.getByLabel('Value of condition 2.2').fill('500');
  await page.getByText('Operators: 3 of 30').waitFor();
  await page.getByText(/Size: \d+ of 1000 bytes/).waitFor();
  await checkPage(page, '08-job-new');
  await page.getByRole('button', { name: 'Create log job' }).click();
  await page.getByRole('status').getByText('Log job created.').waitFor();
  const job = (await apiGet(`/zones/${zone.id}/logshipping/jobs`))[0];
  assert.equal(job.enabled, true);
  assert.equal(job.destination_conf, `file://${logsDir}/{DATE}`);
  assert.equal(job.output_options.timestamp_format, 'rfc3339');
  assert.ok(job.output_options.field_names.includes('RequestHeaders'));
  assert.deepEqual(JSON.parse(job.filter), {
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
  });

  // Traffic through the edge: the job's newest delivered lines show up on its page.
  assert.ok((await viaEdge(edge, 'shop.example.test', '/api/items')) >= 500, 'the origin refuses: an error status the filter keeps');
  await viaEdge(edge, 'shop.example.test', '/home');
  const lines = page.getByLabel('Delivered log lines');
  await lines.getByText('/api/items').waitFor({ timeout: 20_000 });
  const shown = (await lines.textContent()) ?? '';
  assert.doesNotMatch(shown, /\/home/, 'the filter keeps /home out');
  assert.match(shown, /"x-forwarded-for":"203\.0\.113\.7"/, 'the custom field is in the line');
  await page
    .getByLabel('Job status')
    .getByText(/Last delivery\s*\w{3} \d+, \d{4}/)
    .first()
    .waitFor({ timeout: 10_000 });
  await checkPage(page, '09-job-delivered');
  await page.getByRole('link', { name: '← All log jobs' }).click();
  await page
    .getByRole('row', { name: /shop-logs/ })
    .getByText('enabled')
    .waitFor();
  await checkPage(page, '10-jobs');

  // Buckets: create one, upload 20 MiB in parts with a progress bar, browse to it by folder.
  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Buckets' }).click();
  await page.getByRole('heading', { name: 'Buckets', level: 1 }).waitFor();
  await page.getByLabel('Name').fill('uploads');
  await page.getByRole('button', { name: 'Create bucket' }).click();
  await page.getByRole('row', { name: /uploads/ }).waitFor();
  await checkPage(page, '11-buckets');
  await page.getByRole('link', { name: 'uploads', exact: true }).click();
  await page.getByRole('heading', { name: 'uploads', level: 1 }).waitFor();
  const bytes = randomBytes(20 * 1024 * 1024);
  await page.getByLabel('Files', { exact: true }).setInputFiles({ name: 'big.bin', mimeType: 'application/octet-stream', buffer: bytes });
  await page.getByLabel('Object key').fill('reports/2026/big.bin');
  // Every value the progress bar shows, recorded in the page as it renders.
  await page.evaluate(`(() => {
    window.__progress = [];
    const record = () => { const bar = document.querySelector('.upload-list progress'); if (bar) window.__progress.push(bar.value); };
    new MutationObserver(record).observe(document.body, { subtree: true, childList: true, characterData: true });
  })()`);
  await page.getByRole('button', { name: 'Upload', exact: true }).click();
  await page.getByRole('status').filter({ hasText: 'Uploaded reports/2026/big.bin (20 MiB).' }).waitFor({ timeout: 30_000 });
  const progress = (await page.evaluate('window.__progress')) as number[];
  assert.ok(
    progress.some((value) => value > 0 && value < 100),
    `the bar moved through intermediate values: ${progress.join(', ')}`,
  );
  // Done: one status says so, and the form is ready for the next file.
  const uploader = page.getByRole('region', { name: 'Upload', exact: true });
  assert.deepEqual(await uploader.getByText(/Upload(ed|ing)|Done/).allTextContents(), ['Uploaded reports/2026/big.bin (20 MiB).'], 'one status, once');
  assert.equal(await page.locator('.upload-list progress').count(), 0, 'the progress bar is gone');
  assert.equal(await page.getByLabel('Object key').count(), 0, 'the key field goes with the file');
  assert.equal(await page.getByLabel('Files', { exact: true }).evaluate((input) => (input as HTMLInputElement).files!.length), 0);
  assert.ok(await page.getByRole('button', { name: 'Upload', exact: true }).isDisabled());
  await checkPage(page, '12-bucket-uploaded');
  const accountId = (await apiGet('/accounts'))[0].id as string;
  const uploaded = (await apiGet(`/accounts/${accountId}/store/buckets/uploads/objects?prefix=reports/2026/`))[0];
  assert.equal(uploaded.size, bytes.length);
  assert.match(uploaded.etag, /-3$/, 'uploaded in 3 parts');
  await page.getByRole('link', { name: 'reports/' }).click();
  await page.getByRole('link', { name: '2026/' }).click();
  await page.getByRole('heading', { name: '2026/', level: 1 }).waitFor();
  const row = page.getByRole('row', { name: /big\.bin/ });
  await row.waitFor();
  await page.getByRole('button', { name: 'Metadata of big.bin' }).click();
  await page.getByText('application/octet-stream').waitFor();
  await checkPage(page, '13-bucket-folder');

  // Download it and compare the bytes; then delete it.
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download big.bin' }).click()]);
  assert.equal(download.suggestedFilename(), 'big.bin');
  const downloaded = await readFile((await download.path())!);
  assert.ok(downloaded.equals(bytes), 'the download is the uploaded bytes');
  await row.getByRole('button', { name: 'Delete' }).click();
  await page.getByRole('button', { name: 'Delete big.bin' }).click();
  await page.getByRole('status').getByText('Deleted reports/2026/big.bin.').waitFor();
  await page.getByText('Nothing here yet.').waitFor();

  // The gateway: networks with their state and request rate, and the console.
  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Gateway' }).click();
  await page.getByRole('heading', { name: 'Gateway', level: 1 }).waitFor();
  await page
    .getByRole('row', { name: /rinkeby/ })
    .getByText('retired on 2023-01-30')
    .waitFor();
  await page
    .getByRole('row', { name: /rinkeby/ })
    .getByText('sepolia')
    .waitFor();
  await page.getByLabel('Method').fill('eth_chainId');
  await page.getByRole('button', { name: 'Send' }).click();
  await page.getByLabel('JSON-RPC answer').getByText('"0xaa36a7"').waitFor();
  await page
    .getByRole('row', { name: /^sepolia/ })
    .getByText(/\d+\.\d\/s/)
    .waitFor({ timeout: 10_000 });
  await checkPage(page, '14-gateway');

  // Sign out (from a page that polls nothing, so no request is in flight as the session ends): the
  // session ends on the server, so its cookie no longer works.
  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Zones' }).click();
  await page.getByRole('heading', { name: 'Zones', level: 1 }).waitFor();
  await page.waitForLoadState('networkidle');
  const beforeSignOut = (await context.cookies()).find((c) => c.name === 'edgeport_session')!.value;
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  const stale = await fetch(`${api}/client/v4/zones`, { headers: { cookie: `edgeport_session=${beforeSignOut}` } });
  assert.equal(stale.status, 401);
  // Signed out, a reload asks nothing it knows the answer to: no 401 in the console.
  const unexpectedBefore = problems
    .take()
    .filter((line) => !/^(console error: Failed to load resource: the server responded with a status of 4\d\d|HTTP 4\d\d)/.test(line));
  await page.reload();
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  await page.waitForLoadState('networkidle');
  assert.deepEqual(problems.take(), [], 'a signed-out reload loads without console errors or failed requests');
  assert.deepEqual(unexpectedBefore, [], 'no Content-Security-Policy violations, page errors or failed requests (the refusals the test asks for aside)');
});
