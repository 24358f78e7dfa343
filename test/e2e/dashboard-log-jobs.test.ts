/**
 * The log job form in Chromium against the real `edgeport start`: the field picker offers exactly
 * the fields the server's dataset catalog marks as filled by the edge (the others only behind a
 * switch, marked "never filled here", and marked again once chosen), and so does the filter builder; at the zone's job limit the
 * jobs page shows the limit and the remedy with a disabled "New log job" button, and the new-job
 * page shows them instead of a form; deleting a job brings the button back. Screenshots at 1280
 * and 375 px go to test-results/dashboard/, each checked with axe-core.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { assertNoHorizontalOverflow, checkPage, DESKTOP, PHONE, signIn, startDashboard } from '../helpers/dashboard-browser.ts';

test('log jobs in the dashboard: only filled fields are offered, and the job limit is shown before any form', { timeout: 120_000 }, async (t) => {
  const { api, dir, page, problems, apiGet, apiCall } = await startDashboard(t, { env: (tmp) => ({ EDGEPORT_LOGS_FILE_ROOTS: tmp }) });
  const zone = (await apiCall('POST', '/zones', { name: 'logs.example.test', origin: 'http://127.0.0.1:9' })) as { id: string };
  const catalog = (await apiGet(`/zones/${zone.id}/logshipping/datasets/http_requests/catalog`)) as {
    fields: Array<{ name: string; filled: boolean }>;
    max_jobs_per_zone: number;
  };
  const filled = catalog.fields
    .filter((f) => f.filled)
    .map((f) => f.name)
    .sort();
  const unfilled = catalog.fields.filter((f) => !f.filled).map((f) => f.name);
  assert.ok(filled.length > 0 && unfilled.length > 0);

  await page.goto(`${api}/`);
  await signIn(page);
  await page.goto(`${api}/zones/${zone.id}/jobs`);
  await page.getByRole('heading', { name: 'Log jobs', level: 1 }).waitFor();
  await page.getByText(`This zone has 0 of ${catalog.max_jobs_per_zone} jobs.`).waitFor();
  await page.getByRole('link', { name: 'New log job' }).click();
  await page.getByRole('heading', { name: 'New log job', level: 1 }).waitFor();

  // The picker: exactly the filled fields, by name.
  const options = page.getByRole('group', { name: 'Fields of the http_requests dataset' });
  const offered = async () => (await options.locator('.field-option-name').allTextContents()).sort();
  assert.deepEqual(await offered(), filled, 'only the fields the edge fills are offered');
  await page.getByLabel('Find a field').fill('BotScore');
  await options.getByText('No field matches “BotScore”.').waitFor();
  // Behind the switch: every field, the unfilled ones marked.
  await page.getByRole('checkbox', { name: /Also show the \d+ fields of the dataset edgeport never fills/ }).check();
  await page.getByLabel('Find a field').fill('');
  assert.deepEqual(await offered(), catalog.fields.map((f) => f.name).sort());
  assert.equal(await options.locator('.field-option-unfilled').count(), unfilled.length);
  const botScore = options.locator('label', { has: page.getByText('BotScore', { exact: true }) });
  await botScore.getByText('never filled here').waitFor();
  await botScore.getByRole('checkbox').check();
  await page
    .getByRole('list', { name: /Fields in each line/ })
    .getByText('BotScore (never filled here)')
    .waitFor();
  // The filter builder offers the filled fields only, too.
  await page.getByRole('button', { name: 'Add condition to the top level' }).click();
  const filterFields = await page.getByLabel('Field of condition 1', { exact: true }).locator('option').allTextContents();
  assert.ok(filterFields.includes('ClientRequestPath') && filterFields.every((name) => filled.includes(name)), `filter fields: ${filterFields.join(', ')}`);
  await checkPage(page, 'jobs-01-field-picker');
  await page.setViewportSize(PHONE);
  await assertNoHorizontalOverflow(page, 'the field picker');
  await checkPage(page, 'phone-jobs-01-field-picker');
  await page.setViewportSize(DESKTOP);

  // The zone at its limit (made through the API): the jobs page says so before any form.
  const logsDir = join(dir, 'logs');
  const destination = `file://${logsDir}/{DATE}`;
  await apiCall('POST', `/zones/${zone.id}/logshipping/ownership`, { destination_conf: destination });
  const token = await readFile(join(logsDir, 'ownership-challenge.txt'), 'utf8');
  for (let i = 1; i <= catalog.max_jobs_per_zone; i++) {
    await apiCall('POST', `/zones/${zone.id}/logshipping/jobs`, { name: `job-${i}`, destination_conf: destination, ownership_challenge: token });
  }
  problems.take();
  await page.goto(`${api}/zones/${zone.id}/jobs`);
  await page.getByRole('row', { name: /job-4/ }).waitFor();
  const limit = `This zone has ${catalog.max_jobs_per_zone} of ${catalog.max_jobs_per_zone} log jobs, the most a zone may have`;
  await page.getByRole('note').getByText(limit).waitFor();
  await page.getByRole('note').getByText('To add another, delete a job you no longer need below').waitFor();
  const newJob = page.getByRole('button', { name: 'New log job' });
  assert.ok(await newJob.isDisabled(), 'the button is there, disabled');
  assert.equal(await newJob.getAttribute('aria-describedby'), 'job-limit-title', "the reason is the button's description");
  assert.equal(await page.getByRole('link', { name: 'New log job' }).count(), 0);
  await checkPage(page, 'jobs-02-at-limit');
  await page.setViewportSize(PHONE);
  await assertNoHorizontalOverflow(page, 'the jobs page at its limit');
  await checkPage(page, 'phone-jobs-02-at-limit');
  await page.setViewportSize(DESKTOP);

  // The new-job page by its address: the limit and the remedy, no form to fill.
  await page.goto(`${api}/zones/${zone.id}/jobs/new`);
  await page.getByRole('note').getByText(limit).waitFor();
  assert.equal(await page.getByRole('button', { name: 'Create log job' }).count(), 0, 'no form to fill and have refused');
  assert.equal(await page.getByLabel('Destination').count(), 0);
  await checkPage(page, 'jobs-03-new-at-limit');

  // Deleting one brings the button back.
  await page.getByRole('link', { name: "the zone's log jobs" }).click();
  await page.getByRole('row', { name: /job-2/ }).getByRole('button', { name: 'Delete' }).click();
  await page.getByRole('button', { name: 'Delete job-2' }).click();
  await page.getByRole('status').getByText('Log job job-2 deleted.').waitFor();
  await page.getByRole('link', { name: 'New log job' }).waitFor();
  assert.equal(await page.getByRole('note').count(), 0, 'the limit notice is gone');
  await page.getByText(`This zone has ${catalog.max_jobs_per_zone - 1} of ${catalog.max_jobs_per_zone} jobs.`).waitFor();
  await page.getByRole('link', { name: 'New log job' }).click();
  await page.getByRole('button', { name: 'Create log job' }).waitFor();
  assert.deepEqual(problems.take(), [], 'no console errors or failed requests');
});
