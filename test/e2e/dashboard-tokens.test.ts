/**
 * The dashboard's API tokens page, end to end in Chromium against the real `edgeport start`: a
 * token made with the permission picker (R2 read, Zone read on one zone), its value shown once,
 * then used from here with `Authorization: Bearer`: it lists buckets and reads its zone, and is
 * refused a bucket create and the other zone; rolled in the page, the old value is refused and the
 * new one works; deleted, nothing works. Screenshots to test-results/dashboard/, axe-core on each.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkPage, signIn, startDashboard } from '../helpers/dashboard-browser.ts';

test('the API tokens page: a token from the picker, shown once, scoped as chosen, rolled and deleted', { timeout: 60_000 }, async (t) => {
  const { api, page, context, problems, apiGet, apiCall } = await startDashboard(t);
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: api });
  const account = (await apiGet('/accounts'))[0].id as string;
  const shop = (await apiCall('POST', '/zones', { name: 'shop.test', account: { id: account } })).id as string;
  const blog = (await apiCall('POST', '/zones', { name: 'blog.test', account: { id: account } })).id as string;
  /** A call with the token: its status and first error code. */
  const withToken = async (value: string, method: string, path: string, body?: unknown) => {
    const response = await fetch(`${api}/client/v4${path}`, {
      method,
      headers: { authorization: `Bearer ${value}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const json = (await response.json()) as { errors: Array<{ code: number }> };
    return `${response.status}${json.errors[0] ? ` ${json.errors[0].code}` : ''}`;
  };

  await page.goto(`${api}/tokens`);
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  await signIn(page);
  await page.getByRole('heading', { name: 'API tokens', level: 1 }).waitFor();
  await page.getByText('No tokens yet: create one below.').waitFor();

  await page.getByLabel('Name').fill('ci reader');
  await page.getByRole('radio', { name: 'Workers R2 Storage: read' }).check();
  await page.getByRole('radio', { name: 'Zones: read' }).check();
  await page.getByLabel('Zones', { exact: true }).selectOption({ label: 'shop.test' });
  await page.getByText('The token may read Zones, read Workers R2 Storage.').waitFor();
  await page.getByRole('button', { name: 'Create token' }).click();
  const shown = page.getByRole('region', { name: 'New token ci reader' });
  await shown.getByText('Copy the token now: this is the only time it is shown.').waitFor();
  const value = await shown.getByLabel('Token').inputValue();
  assert.match(value, /^[A-Za-z0-9_-]{40}$/);
  await shown.getByRole('button', { name: 'Copy token' }).click();
  assert.equal(await page.evaluate('navigator.clipboard.readText()'), value, 'the copy button copies the token');
  const row = page.getByRole('row', { name: /ci reader/ });
  await row.getByText('Zone Read on shop.test').waitFor();
  await row.getByText('active').waitFor();
  await checkPage(page, '17-api-token-created');

  // The token at work: what it was given, and nothing more.
  assert.equal(await withToken(value, 'GET', `/accounts/${account}/r2/buckets`), '200');
  assert.equal(await withToken(value, 'POST', `/accounts/${account}/r2/buckets`, { name: 'nope' }), '403 10000');
  assert.equal(await withToken(value, 'GET', `/zones/${shop}`), '200');
  assert.equal(await withToken(value, 'GET', `/zones/${blog}`), '403 9109');

  await shown.getByRole('button', { name: 'I have saved the token' }).click();
  await shown.waitFor({ state: 'detached' });
  problems.take();
  await page.reload();
  await row.getByText('active').waitFor();
  await page.waitForLoadState('networkidle');
  assert.ok(!(await page.content()).includes(value), 'the value is never shown again');
  assert.deepEqual(problems.take(), [], 'the page loads without console errors or failed requests');

  // Roll: a new value, shown once; the old one is refused at once.
  await row.getByRole('button', { name: 'Roll' }).click();
  await page.getByRole('button', { name: 'Roll ci reader' }).click();
  const rolled = page.getByRole('region', { name: 'New value of ci reader' });
  const fresh = await rolled.getByLabel('Token').inputValue();
  assert.notEqual(fresh, value);
  assert.equal(await withToken(value, 'GET', `/zones/${shop}`), '401 10000');
  assert.equal(await withToken(fresh, 'GET', `/zones/${shop}`), '200');
  await checkPage(page, '18-api-token-rolled');

  await row.getByRole('button', { name: 'Delete' }).click();
  await page.getByRole('button', { name: 'Delete ci reader' }).click();
  await page.getByRole('status').getByText('Token ci reader deleted').waitFor();
  await page.getByText('No tokens yet: create one below.').waitFor();
  assert.equal(await withToken(fresh, 'GET', `/zones/${shop}`), '401 10000');
  assert.deepEqual(problems.take(), [], 'no console errors or failed requests');
});
