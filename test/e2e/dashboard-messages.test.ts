/**
 * What the dashboard says when something is refused, in Chromium against the real `edgeport
 * start`: a wrong sign-in in the form's words (no header names), a zone name that is taken at the
 * "Add a zone" form and its name field, the server's own file roots as the log job destination's
 * example and help (the data dir's log-files folder by default), and a job saved without its
 * ownership token told to use the page's "Write challenge file" step, at the token field, not in
 * the API's terms. Screenshots go to test-results/dashboard/, each checked with axe-core.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { checkPage, EMAIL, signIn, startDashboard } from '../helpers/dashboard-browser.ts';

test('the dashboard says refusals where they happen and in its own terms', { timeout: 120_000 }, async (t) => {
  const { api, dir, page, problems, apiCall } = await startDashboard(t);

  // A wrong key: the form's words only.
  await page.goto(`${api}/`);
  await page.getByLabel('E-mail').fill(EMAIL);
  await page.getByLabel('API key').fill('not-the-key');
  await page.getByRole('button', { name: 'Sign in' }).click();
  const wrongKey = page.getByRole('alert');
  await wrongKey.getByText('That e-mail and API key do not match an account. Check both and try again.').waitFor();
  assert.doesNotMatch((await wrongKey.textContent()) ?? '', /X-Auth/, 'no header names in the sign-in error');
  problems.take();
  await signIn(page);

  // A zone name that is taken: the refusal at the form, its name field marked.
  await apiCall('POST', '/zones', { name: 'taken.example.test' });
  await page.getByRole('heading', { name: 'Zones', level: 1 }).waitFor();
  await page.getByLabel('Name').fill('taken.example.test');
  await page.getByRole('button', { name: 'Add zone' }).click();
  const form = page.getByRole('region', { name: 'Add a zone' });
  await form.getByRole('alert').getByText('The zone was not added').waitFor();
  await form
    .getByRole('alert')
    .getByText(/taken\.example\.test already exists/)
    .waitFor();
  assert.equal(await page.getByLabel('Name').getAttribute('aria-invalid'), 'true');
  assert.equal(await page.getByRole('region', { name: 'Your zones' }).getByRole('alert').count(), 0, 'nothing about it above the list');
  await checkPage(page, 'messages-01-zone-taken');
  problems.take();

  // A new log job: the destination's example and help name this server's file root.
  const zone = (await apiCall('POST', '/zones', { name: 'jobs.example.test', origin: 'http://127.0.0.1:9' })) as { id: string };
  const root = join(dir, 'data', 'log-files');
  await page.goto(`${api}/zones/${zone.id}/jobs/new`);
  await page.getByRole('heading', { name: 'New log job', level: 1 }).waitFor();
  const destination = page.getByLabel('Destination');
  assert.equal(await destination.getAttribute('placeholder'), `file://${root}/my-zone/{DATE}`);
  await page.getByText(`A file:// directory must lie below this server's file root: ${root}.`).waitFor();

  // Saved without the token: told to use the page's own step, at the token field; nothing sent.
  await destination.fill(`file://${root}/jobs`);
  await page.getByRole('button', { name: 'Create log job' }).click();
  const tokenProblem = page.getByRole('alert').filter({ hasText: 'Prove the destination is yours before saving' });
  await tokenProblem.getByText('press "Write challenge file" (step 1), then paste the token it wrote into "Ownership token".', { exact: false }).waitFor();
  assert.equal(await page.getByLabel('Ownership token').getAttribute('aria-invalid'), 'true');
  assert.equal(await page.getByText('missing ownership challenge').count(), 0, "not the API's words");
  // A wrong token: the API refuses it, said the same way.
  await page.getByLabel('Ownership token').fill('not-the-token');
  await page.getByRole('button', { name: 'Create log job' }).click();
  await page
    .getByRole('alert')
    .getByText('This token does not prove the destination is yours: press "Write challenge file" (step 1) again', { exact: false })
    .waitFor();
  await checkPage(page, 'messages-02-job-token');
  problems.take();
  assert.deepEqual(await apiCall('GET', `/zones/${zone.id}/logshipping/jobs`), [], 'no job was made');
});
