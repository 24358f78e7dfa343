/**
 * The dashboard's lifecycle section on a bucket page, in Chromium against the real `edgeport
 * start`: add a rule (the R2 route wrangler uses, so S3 and wrangler see it), turn it off and on,
 * a rule the store refuses shows its words and saves nothing, remove it. Screenshots checked with axe-core.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkPage, signIn, startDashboard } from '../helpers/dashboard-browser.ts';

test("the dashboard's lifecycle section: add, turn off, refuse, remove", { timeout: 90_000 }, async (t) => {
  const { api, page, problems, apiCall, apiGet } = await startDashboard(t);
  const account = (await apiGet('/accounts'))[0].id as string;
  await apiCall('POST', `/accounts/${account}/store/buckets`, { name: 'aging' });
  const lifecyclePath = `/accounts/${account}/r2/buckets/aging/lifecycle`;

  await page.goto(`${api}/buckets/aging`);
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  await signIn(page);
  const section = page.getByRole('region', { name: 'Lifecycle rules' });
  await section.getByText('No rules: objects stay until deleted').waitFor();

  await section.getByRole('button', { name: 'Add a lifecycle rule' }).click();
  await section.getByLabel('Name').fill('expire-logs');
  await section.getByLabel('Prefix').fill('logs/');
  await section.getByLabel('Delete objects after (days)').fill('30');
  await section.getByLabel('Abort unfinished uploads after (days)').fill('2');
  await checkPage(page, 'lifecycle-01-new-rule');
  await section.getByRole('button', { name: 'Add rule' }).click();
  await section.getByRole('status').getByText('Added the rule expire-logs.').waitFor();
  await section
    .getByRole('row', { name: /expire-logs/ })
    .getByText('Delete objects after 30 days; Abort unfinished uploads after 2 days')
    .waitFor();
  assert.deepEqual((await apiGet(lifecyclePath)).rules, [
    {
      id: 'expire-logs',
      enabled: true,
      conditions: { prefix: 'logs/' },
      deleteObjectsTransition: { condition: { type: 'Age', maxAge: 30 * 86_400 } },
      abortMultipartUploadsTransition: { condition: { type: 'Age', maxAge: 2 * 86_400 } },
    },
  ]);
  await checkPage(page, 'lifecycle-02-rule-added');

  await section.getByRole('button', { name: 'Turn off expire-logs' }).click();
  await section.getByRole('status').getByText('Turned off expire-logs.').waitFor();
  assert.equal((await apiGet(lifecyclePath)).rules[0].enabled, false);
  await section.getByRole('button', { name: 'Turn on expire-logs' }).click();
  await section.getByRole('status').getByText('Turned on expire-logs.').waitFor();

  // A second rule of the same name: the store's words, nothing saved.
  await section.getByRole('button', { name: 'Add a lifecycle rule' }).click();
  await section.getByLabel('Name').fill('expire-logs');
  await section.getByLabel('Delete objects after (days)').fill('1');
  await section.getByRole('button', { name: 'Add rule' }).click();
  await section
    .getByRole('alert')
    .getByText(/two rules have the id "expire-logs"/)
    .waitFor();
  await section.getByRole('button', { name: 'Cancel', exact: true }).click();
  assert.equal((await apiGet(lifecyclePath)).rules.length, 1);

  await section.getByRole('button', { name: 'Remove' }).click();
  await section.getByRole('button', { name: 'Remove expire-logs' }).click();
  await section.getByRole('status').getByText('Removed expire-logs.').waitFor();
  await section.getByText('No rules: objects stay until deleted').waitFor();
  assert.deepEqual((await apiGet(lifecyclePath)).rules, []);
  assert.deepEqual(
    problems.take().filter((line) => !/(HTTP 400: PUT .*\/lifecycle$)|status of 400/.test(line)),
    [],
  );
});
