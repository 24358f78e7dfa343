/**
 * The web dashboard end to end: the real `edgeport start`, driven in Debian's Chromium by
 * playwright-core. Sign in (a wrong key first), create a zone, set custom fields (an upper-case
 * header is refused and explained), create a log job with a nested filter through the builder and
 * watch its delivered lines, upload a 20 MiB file with a progress bar, browse to it by folder,
 * download and compare it, delete it, use the gateway page, sign out. Every page is screenshotted
 * to test-results/dashboard/ and checked with axe-core (no serious or critical violations).
 *
 * Needs /usr/bin/chromium (`apt-get install -y chromium`) and a built dashboard (`npm run build`):
 * without them the test fails, it does not skip.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startEdgeport } from '../helpers/edgeport-server.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CHROMIUM = '/usr/bin/chromium';
const SHOTS = join(ROOT, 'test-results', 'dashboard');
const AXE_SOURCE = readFileSync(join(ROOT, 'node_modules/axe-core/axe.min.js'), 'utf8');
const EMAIL = 'owner@example.test';
const KEY = 'dashboard-test-key-0123456789abcdef0123';

interface AxeViolation { id: string; impact: string | null; help: string; nodes: Array<{ target: unknown[] }> }

/** A screenshot of the page as it is, then axe-core inside the page: serious or critical violations fail. */
async function checkPage(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  // evaluate() runs through the DevTools protocol, so the page's CSP (script-src 'self') stays on.
  if (!await page.evaluate('typeof window.axe !== "undefined"')) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(`window.axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations)`) as AxeViolation[];
  const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(bad.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')}`), [],
    `accessibility violations on the ${name} page`);
}

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

test('the dashboard: sign in, zones, custom fields, log jobs, buckets, gateway, sign out', { timeout: 90_000 }, async (t) => {
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: install Debian's Chromium (apt-get install -y chromium); this test does not skip`);
  assert.ok(existsSync(join(ROOT, 'web/dist/index.html')), 'the dashboard is not built: run npm run build (npm test does)');
  mkdirSync(SHOTS, { recursive: true });
  const dir = tempDir(t, 'edgeport-dashboard-');
  const logsDir = join(dir, 'logs');
  const server = await startEdgeport({
    dataDir: join(dir, 'data'),
    env: { EDGEPORT_ADMIN_EMAIL: EMAIL, EDGEPORT_ADMIN_KEY: KEY, EDGEPORT_LOGS_MAX_BATCH_INTERVAL_MS: '300', EDGEPORT_LOGS_FILE_ROOTS: logsDir },
  });
  t.after(() => server.stop());
  const api = new URL(server.urls['management API']!).origin;
  const edge = server.urls.edge!;
  // launch() gives the browser a fresh temporary profile (user-data-dir) of its own, removed on close.
  const browser: Browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  t.after(() => browser.close());
  const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const policyViolations: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) policyViolations.push(message.text());
  });
  page.on('pageerror', (error) => policyViolations.push(`page error: ${error.message}`));
  const asOwner = { 'x-auth-email': EMAIL, 'x-auth-key': KEY };
  const apiGet = async (path: string) => (await (await fetch(`${api}/client/v4${path}`, { headers: asOwner })).json()) as { result: any }; // eslint-disable-line @typescript-eslint/no-explicit-any -- envelope shapes vary

  // Sign in: a wrong key first, explained; then the right one.
  await page.goto(`${api}/`);
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  await checkPage(page, '01-sign-in');
  await page.getByLabel('E-mail').fill(EMAIL);
  await page.getByLabel('API key').fill('not-the-key');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('alert').getByText('That e-mail and API key do not match an account').waitFor();
  await checkPage(page, '02-sign-in-wrong-key');
  await page.getByLabel('API key').fill(KEY);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Zones', level: 1 }).waitFor();
  const cookie = (await context.cookies()).find((c) => c.name === 'edgeport_session');
  assert.ok(cookie?.httpOnly, 'the session cookie is httpOnly');
  assert.equal(cookie.sameSite, 'Strict');
  assert.equal(await page.evaluate('document.cookie'), '', 'scripts cannot read the session cookie');

  // A zone.
  await page.getByLabel('Name').fill('shop.example.test');
  await page.getByLabel('Origin').fill('http://127.0.0.1:9');
  await page.getByRole('button', { name: 'Add zone' }).click();
  await page.getByRole('status').getByText('Zone shop.example.test created.').waitFor();
  await page.getByRole('row', { name: /shop\.example\.test/ }).waitFor();
  await checkPage(page, '03-zones');
  const zone = (await apiGet('/zones')).result[0] as { id: string; name: string };
  assert.equal(zone.name, 'shop.example.test');

  // Custom fields: the rules as one types; an upper-case header refused by the API, in its words.
  await page.getByRole('row', { name: /shop\.example\.test/ }).getByRole('link', { name: 'Custom fields' }).click();
  await page.getByRole('heading', { name: 'Custom fields', level: 1 }).waitFor();
  await page.getByLabel('Add a request header').fill('content-type');
  await page.getByLabel('Add a request header').press('Enter');
  await page.getByLabel('Add a request header').fill('X-Forwarded-For');
  await page.getByText('Header names must be lower case: write “x-forwarded-for”.').first().waitFor();
  await page.getByLabel('Add a request header').press('Enter');
  await page.getByLabel('Add a response header').fill('server');
  await page.getByLabel('Add a response header').press('Enter');
  await page.getByLabel('Add a cookie').fill('accountNumber');
  await page.getByLabel('Add a cookie').press('Enter');
  await page.getByText('4 of 40 fields used').waitFor();
  await page.getByRole('button', { name: 'Save custom fields' }).click();
  const refusal = page.getByRole('alert').filter({ hasText: 'The API refused these custom fields' });
  await refusal.getByText("'X-Forwarded-For' is not a valid value for name because header names must be lower case").waitFor();
  await refusal.getByText('Request header “X-Forwarded-For”:').waitFor();
  await checkPage(page, '04-custom-fields-refused');
  assert.equal((await fetch(`${api}/client/v4/zones/${zone.id}/rulesets/phases/http_log_custom_fields/entrypoint`, { headers: asOwner })).status, 404,
    'a refused save writes nothing');
  await page.getByRole('button', { name: 'Use x-forwarded-for' }).click();
  await page.getByRole('button', { name: 'Save custom fields' }).click();
  await page.getByRole('status').getByText('Saved.').waitFor();
  await checkPage(page, '05-custom-fields');
  const ruleset = (await apiGet(`/zones/${zone.id}/rulesets/phases/http_log_custom_fields/entrypoint`)).result;
  assert.deepEqual(ruleset.rules[0].action_parameters, {
    request_fields: [{ name: 'content-type' }, { name: 'x-forwarded-for' }], response_fields: [{ name: 'server' }], cookie_fields: [{ name: 'accountNumber' }],
  });

  // A log job: destination, ownership challenge, fields, and a nested filter built in the page.
  await page.getByRole('navigation', { name: 'Zone sections' }).getByRole('link', { name: 'Log jobs' }).click();
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
  await checkPage(page, '06-job-new');
  await page.getByRole('button', { name: 'Create log job' }).click();
  await page.getByRole('status').getByText('Log job created.').waitFor();
  const job = (await apiGet(`/zones/${zone.id}/logshipping/jobs`)).result[0];
  assert.equal(job.enabled, true);
  assert.equal(job.destination_conf, `file://${logsDir}/{DATE}`);
  assert.equal(job.output_options.timestamp_format, 'rfc3339');
  assert.ok(job.output_options.field_names.includes('RequestHeaders'));
  assert.deepEqual(JSON.parse(job.filter), {
    where: { and: [
      { key: 'ClientRequestPath', operator: 'contains', value: '/api' },
      { or: [{ key: 'ClientRequestMethod', operator: 'eq', value: 'POST' }, { key: 'EdgeResponseStatus', operator: 'geq', value: 500 }] },
    ] },
  });

  // Traffic through the edge: the job's newest delivered lines show up on its page.
  assert.ok(await viaEdge(edge, 'shop.example.test', '/api/items') >= 500, 'the origin refuses: an error status the filter keeps');
  await viaEdge(edge, 'shop.example.test', '/home');
  const lines = page.getByLabel('Delivered log lines');
  await lines.getByText('/api/items').waitFor({ timeout: 20_000 });
  const shown = (await lines.textContent()) ?? '';
  assert.doesNotMatch(shown, /\/home/, 'the filter keeps /home out');
  assert.match(shown, /"x-forwarded-for":"203\.0\.113\.7"/, 'the custom field is in the line');
  await page.getByLabel('Job status').getByText(/Last delivery\s*\w{3} \d+, \d{4}/).first().waitFor({ timeout: 10_000 });
  await checkPage(page, '07-job-delivered');
  await page.getByRole('link', { name: '← All log jobs' }).click();
  await page.getByRole('row', { name: /shop-logs/ }).getByText('enabled').waitFor();
  await checkPage(page, '08-jobs');

  // Buckets: create one, upload 20 MiB in parts with a progress bar, browse to it by folder.
  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Buckets' }).click();
  await page.getByRole('heading', { name: 'Buckets', level: 1 }).waitFor();
  await page.getByLabel('Name').fill('uploads');
  await page.getByRole('button', { name: 'Create bucket' }).click();
  await page.getByRole('row', { name: /uploads/ }).waitFor();
  await checkPage(page, '09-buckets');
  await page.getByRole('link', { name: 'uploads', exact: true }).click();
  await page.getByRole('heading', { name: 'uploads', level: 1 }).waitFor();
  const bytes = randomBytes(20 * 1024 * 1024);
  await page.getByLabel('File').setInputFiles({ name: 'big.bin', mimeType: 'application/octet-stream', buffer: bytes });
  await page.getByLabel('Object key').fill('reports/2026/big.bin');
  // Every value the progress bar shows, recorded in the page as it renders.
  await page.evaluate(`(() => {
    window.__progress = [];
    const record = () => { const bar = document.getElementById('upload-progress'); if (bar) window.__progress.push(bar.value); };
    new MutationObserver(record).observe(document.body, { subtree: true, childList: true, characterData: true });
  })()`);
  await page.getByRole('button', { name: 'Upload', exact: true }).click();
  await page.getByText('Done: 20 MiB uploaded (100%)').waitFor({ timeout: 30_000 });
  const progress = await page.evaluate('window.__progress') as number[];
  assert.equal(await page.locator('#upload-progress').evaluate((bar) => (bar as HTMLProgressElement).value), 100);
  assert.ok(progress.some((value) => value > 0 && value < 100), `the bar moved through intermediate values: ${progress.join(', ')}`);
  await checkPage(page, '10-bucket-uploaded');
  const accountId = (await apiGet('/accounts')).result[0].id as string;
  const uploaded = (await apiGet(`/accounts/${accountId}/store/buckets/uploads/objects?prefix=reports/2026/`)).result[0];
  assert.equal(uploaded.size, bytes.length);
  assert.match(uploaded.etag, /-3$/, 'uploaded in 3 parts');
  await page.getByRole('link', { name: 'reports/' }).click();
  await page.getByRole('link', { name: '2026/' }).click();
  await page.getByRole('heading', { name: '2026/', level: 1 }).waitFor();
  const row = page.getByRole('row', { name: /big\.bin/ });
  await row.waitFor();
  await page.getByRole('button', { name: 'Metadata of big.bin' }).click();
  await page.getByText('application/octet-stream').waitFor();
  await checkPage(page, '11-bucket-folder');

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
  await page.getByRole('row', { name: /rinkeby/ }).getByText('retired on 2023-01-30').waitFor();
  await page.getByRole('row', { name: /rinkeby/ }).getByText('sepolia').waitFor();
  await page.getByLabel('Method').fill('eth_chainId');
  await page.getByRole('button', { name: 'Send' }).click();
  await page.getByLabel('JSON-RPC answer').getByText('"0xaa36a7"').waitFor();
  await page.getByRole('row', { name: /^sepolia/ }).getByText(/\d+\.\d\/s/).waitFor({ timeout: 10_000 });
  await checkPage(page, '12-gateway');

  // Sign out: the session ends on the server, so its cookie no longer works.
  const beforeSignOut = (await context.cookies()).find((c) => c.name === 'edgeport_session')!.value;
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  const stale = await fetch(`${api}/client/v4/zones`, { headers: { cookie: `edgeport_session=${beforeSignOut}` } });
  assert.equal(stale.status, 401);
  assert.deepEqual(policyViolations, [], 'no Content-Security-Policy violations or page errors');
});
