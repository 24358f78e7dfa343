/**
 * The Scripts page in Chromium against the real `edgeport start` (scripts started in workerd):
 * with none, how to deploy one with wrangler pointed at this server; a script deployed through the
 * Workers API as wrangler does (a version with bucket, text and secret bindings, routes on a zone,
 * then a second version deployed with a message) shows the version it serves, its routes, that
 * version's bindings (never the secret's value), a live tail showing requests sent through the
 * edge with their console lines and a thrown exception, its versions and deployments; delete removes it
 * on the server too. The header names the operator with the whole e-mail at 1280 and at 375 px.
 * Screenshots at both widths go to test-results/dashboard/, each checked with axe-core.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertNoHorizontalOverflow, checkPage, DESKTOP, EMAIL, KEY, PHONE, signIn, startDashboard } from '../helpers/dashboard-browser.ts';
import { viaEdge, wranglerForm } from '../helpers/workers-upload.ts';

const SOURCE = (tag: string) => `export default { async fetch(request, env) {
  const path = new URL(request.url).pathname;
  console.log('serving', path);
  if (path === '/boom') throw new RangeError('it broke');
  return new Response(env.GREETING + ' ${tag}');
} };`;

test('the Scripts page: how to deploy, a deployed script with its version, routes and bindings, delete', { timeout: 150_000 }, async (t) => {
  const { server, api, page, problems, apiGet, apiCall } = await startDashboard(t);
  const account = (await apiGet('/accounts'))[0].id as string;
  const scripts = `${api}/client/v4/accounts/${account}/workers/scripts`;
  const owner = { 'x-auth-email': EMAIL, 'x-auth-key': KEY };
  const send = async (method: string, url: string, body: FormData | string, type?: string) => {
    const response = await fetch(url, { method, headers: { ...owner, ...(type ? { 'content-type': type } : {}) }, body });
    const envelope = (await response.json()) as { success: boolean; result: { id: string }; errors: unknown[] };
    assert.ok(envelope.success, `${method} ${url}: ${JSON.stringify(envelope.errors)}`);
    return envelope.result;
  };

  // None yet: the page says how to deploy one, with this server's address.
  await page.goto(`${api}/`);
  await signIn(page);
  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Scripts' }).click();
  await page.getByRole('heading', { name: 'No scripts yet' }).waitFor();
  const howTo = (await page.locator('pre').textContent()) ?? '';
  assert.match(howTo, new RegExp(`CLOUDFLARE_API_BASE_URL=${api.replace(/[.]/g, '\\.')}/client/v4`));
  assert.match(howTo, new RegExp(`CLOUDFLARE_EMAIL=${EMAIL.replace(/[.]/g, '\\.')} CLOUDFLARE_API_KEY=<your API key>`));
  assert.match(howTo, /npx wrangler deploy/);
  await checkPage(page, 'scripts-01-none');
  // The header at both widths: the operator's whole e-mail, never cut.
  const email = page.getByRole('banner').getByText(`operator: ${EMAIL}`);
  const shown = async () => email.evaluate((e) => e.scrollWidth <= e.clientWidth && e.getBoundingClientRect().right <= window.innerWidth);
  assert.ok(await shown(), 'the e-mail fits at 1280 px');
  await page.setViewportSize(PHONE);
  await assertNoHorizontalOverflow(page, 'the scripts page with none');
  assert.ok(await shown(), 'the e-mail fits at 375 px, not cut off');
  await checkPage(page, 'phone-scripts-01-none');
  await page.setViewportSize(DESKTOP);

  // A script as wrangler deploys it: the upload with its bindings, then its routes.
  const zone = (await apiCall('POST', '/zones', { name: 'shop.example.test', origin: 'http://127.0.0.1:9' })) as { id: string };
  await apiCall('POST', `/accounts/${account}/store/buckets`, { name: 'assets' });
  const bindings = [
    { type: 'r2_bucket', name: 'ASSETS', bucket_name: 'assets' },
    { type: 'plain_text', name: 'GREETING', text: 'hello' },
    { type: 'secret_text', name: 'TOKEN', text: 'do-not-show-me' },
  ];
  await send('PUT', `${scripts}/hello`, wranglerForm(SOURCE('v1'), { bindings }));
  await send(
    'PUT',
    `${scripts}/hello/routes`,
    JSON.stringify([
      { pattern: 'shop.example.test/*', zone_name: 'shop.example.test' },
      { pattern: 'shop.example.test/api/*', zone_name: 'shop.example.test' },
    ]),
    'application/json',
  );
  // A second version, deployed with a message.
  const v2 = await send(
    'POST',
    `${scripts}/hello/versions`,
    wranglerForm(SOURCE('v2'), {
      bindings: [
        { type: 'plain_text', name: 'GREETING', text: 'hi' },
        { type: 'inherit', name: 'ASSETS' },
        { type: 'inherit', name: 'TOKEN' },
      ],
    }),
  );
  await send(
    'POST',
    `${scripts}/hello/deployments`,
    JSON.stringify({ strategy: 'percentage', versions: [{ version_id: v2.id, percentage: 100 }], annotations: { 'workers/message': 'say hi' } }),
    'application/json',
  );
  assert.equal(zone.id.length, 32);

  await page.reload();
  const card = page.getByRole('region', { name: 'hello', exact: true });
  await card.getByRole('heading', { name: 'hello' }).waitFor();
  const facts = card.getByRole('definition');
  await card.getByText('version 2', { exact: true }).waitFor();
  assert.match((await facts.first().textContent()) ?? '', /version 2/);
  await card.getByText('shop.example.test/api/*').waitFor();
  await card.getByText('shop.example.test/*', { exact: true }).waitFor();
  await card.getByText('bucket assets').waitFor();
  await card.getByText('text "hi"').waitFor();
  await card.getByText('secret (its value is never shown)').waitFor();
  assert.doesNotMatch((await card.textContent()) ?? '', /do-not-show-me/, "a secret's value is never on the page");
  await card.getByText(/Versions \(2\) and deployments \(2\)/).click();
  await card
    .getByRole('row', { name: /^2 serving/ })
    .getByText('serving')
    .waitFor();
  await card.getByText(/deployed version 2 \(say hi\)/).waitFor();

  // The live tail: each request the script serves shows up, with its console line; a thrown exception too.
  await card.getByRole('button', { name: 'Start live tail' }).click();
  await card.getByRole('status').getByText('Watching hello').waitFor();
  const events = card.getByRole('list', { name: 'Live tail' });
  // The version restarts with tracing when the first tail opens: ask until a request is shown.
  const tailStart = Date.now();
  const deadline = tailStart + 20_000;
  while ((await events.getByText('/tail-me').count()) === 0) {
    assert.ok(Date.now() < deadline, 'a request through the edge showed in the tail within 20 s');
    assert.equal((await viaEdge(server.urls.edge!, 'shop.example.test', '/tail-me')).body, 'hi v2');
    await page.waitForTimeout(200);
  }
  await events.getByText('log: serving /tail-me').first().waitFor();
  t.diagnostic(`first request shown in the page's tail ${Date.now() - tailStart} ms after the tail was watching`);
  await viaEdge(server.urls.edge!, 'shop.example.test', '/boom');
  await events.getByText('RangeError: it broke').waitFor();
  await events.getByText('exception').first().waitFor();
  assert.equal(((await apiGet(`/accounts/${account}/workers/scripts/hello/tails`)) as unknown[]).length, 1, 'one tail open');
  await checkPage(page, 'scripts-02-deployed');
  await page.setViewportSize(PHONE);
  await assertNoHorizontalOverflow(page, 'a deployed script');
  await checkPage(page, 'phone-scripts-02-deployed');
  await page.setViewportSize(DESKTOP);

  await card.getByRole('button', { name: 'Stop live tail' }).click();
  await card.getByRole('button', { name: 'Start live tail' }).waitFor();
  for (let i = 0; ((await apiGet(`/accounts/${account}/workers/scripts/hello/tails`)) as unknown[]).length > 0; i++) {
    assert.ok(i < 50, 'stopping closes the tail on the server');
    await page.waitForTimeout(100);
  }

  // Delete: asked once more, then gone here and on the server (its routes with it).
  await card.getByRole('button', { name: 'Delete', exact: true }).click();
  await page.getByRole('button', { name: 'Delete hello' }).click();
  await page.getByRole('status').getByText('Script hello deleted, with its versions, deployments, secrets and routes.').waitFor();
  await page.getByRole('heading', { name: 'No scripts yet' }).waitFor();
  assert.deepEqual(await apiGet(`/accounts/${account}/workers/scripts`), []);
  assert.deepEqual(await apiGet(`/zones/${zone.id}/workers/routes`), []);
  assert.deepEqual(problems.take(), [], 'no console errors or failed requests');
});
