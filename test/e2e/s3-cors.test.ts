/**
 * Bucket CORS end to end in Chromium against the real `edgeport start`:
 * - the dashboard's CORS section on a bucket page adds, edits and removes rules (checked through
 *   the management API and with axe-core);
 * - a page served from another origin (a tiny node:http server on its own port) uses presigned
 *   URLs and a POST Object form against the S3 listener: without rules the browser refuses (fetch
 *   throws a TypeError), with them the PUT, GET and POST succeed and the page reads the exposed
 *   ETag. Each browser case is a row of BROWSER_CASES.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { test, type TestContext } from 'node:test';
import { DeleteBucketCorsCommand, GetObjectCommand, PutBucketCorsCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { Page } from 'playwright-core';
import { checkPage, signIn, startDashboard } from '../helpers/dashboard-browser.ts';
import { listen } from '../helpers/listen.ts';

const S3_KEY = { EDGEPORT_S3_ACCESS_KEY_ID: 'EDGEPORTCORSKEY0001', EDGEPORT_S3_SECRET_ACCESS_KEY: 'cors-browser-secret-0123456789abcdef' };

/** A page's origin: a node:http server on 127.0.0.1 answering every path with an empty HTML page. */
async function servePage(t: TestContext): Promise<string> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><html lang="en"><head><title>Another origin</title></head><body><h1>Another origin</h1></body></html>');
  });
  const port = await listen(server, t);
  return `http://127.0.0.1:${port}`;
}

/** What a fetch in the page came to: its status and the headers the page may read, or the error it threw. */
interface PageFetch {
  status?: number;
  body?: string;
  etag?: string | null;
  error?: string;
}

/** Posts a form (its fields, then a file holding `content`) from the page, as an upload form's script would. */
async function postFormInPage(page: Page, url: string, fields: Record<string, string>, content: string): Promise<PageFetch> {
  return page.evaluate(
    async ({ url, fields, content }) => {
      const form = new FormData();
      for (const [name, value] of Object.entries(fields)) form.append(name, value);
      form.append('file', new Blob([content], { type: 'text/plain' }), 'note.txt');
      try {
        const response = await fetch(url, { method: 'POST', body: form });
        return { status: response.status, body: await response.text(), etag: response.headers.get('etag') };
      } catch (error) {
        return { error: `${(error as Error).name}: ${(error as Error).message}` };
      }
    },
    { url, fields, content },
  );
}

/** Runs fetch in the page (its origin's CORS rules apply), as a script on that page would. */
async function fetchInPage(page: Page, url: string, init: { method?: string; body?: string; headers?: Record<string, string> } = {}): Promise<PageFetch> {
  return page.evaluate(
    async ({ url, init }) => {
      try {
        const response = await fetch(url, init);
        return { status: response.status, body: await response.text(), etag: response.headers.get('etag') };
      } catch (error) {
        return { error: `${(error as Error).name}: ${(error as Error).message}` };
      }
    },
    { url, init },
  );
}

interface BrowserCase {
  name: string;
  /** Runs the case's requests in the page; `allowed` says whether the bucket's rules allow the page's origin. */
  run(context: { page: Page; s3: S3Client; bucket: string; key: string; allowed: boolean }): Promise<void>;
}

const BROWSER_CASES: BrowserCase[] = [
  {
    name: 'presigned PUT (with a Content-Type, so preflighted) then presigned GET',
    async run({ page, s3, bucket, key, allowed }) {
      const putUrl = await getSignedUrl(s3, new PutObjectCommand({ Bucket: bucket, Key: key, ContentType: 'application/json' }), { expiresIn: 300 });
      const put = await fetchInPage(page, putUrl, { method: 'PUT', body: '{"from":"the page"}', headers: { 'content-type': 'application/json' } });
      const getUrl = await getSignedUrl(s3, new GetObjectCommand({ Bucket: bucket, Key: allowed ? key : 'seeded.json' }), { expiresIn: 300 });
      const get = await fetchInPage(page, getUrl);
      if (!allowed) {
        assert.match(put.error ?? '', /^TypeError: Failed to fetch/, `the preflight is refused: ${JSON.stringify(put)}`);
        assert.match(get.error ?? '', /^TypeError: Failed to fetch/, `the answer is withheld from the page: ${JSON.stringify(get)}`);
        return;
      }
      assert.equal(put.status, 200, JSON.stringify(put));
      assert.match(put.etag ?? '', /^"[0-9a-f]{32}"$/, 'the exposed ETag is readable');
      assert.deepEqual([get.status, get.body], [200, '{"from":"the page"}']);
      const stored = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      assert.equal(stored.ContentType, 'application/json');
    },
  },
  {
    name: 'POST Object (a createPresignedPost form with a file)',
    async run({ page, s3, bucket, key, allowed }) {
      const post = await createPresignedPost(s3 as unknown as Parameters<typeof createPresignedPost>[0], {
        Bucket: bucket,
        Key: key,
        Expires: 300,
        Fields: { success_action_status: '201', 'Content-Type': 'text/plain' },
        Conditions: [
          ['content-length-range', 1, 1024],
          ['eq', '$Content-Type', 'text/plain'],
        ],
      });
      const sent = await postFormInPage(page, post.url, post.fields, `posted by the page (${key})`);
      if (!allowed) {
        // A form POST is a simple request: no preflight, so S3 (and edgeport) store it, but the
        // page may not read the answer without a rule for its origin.
        assert.match(sent.error ?? '', /^TypeError: Failed to fetch/, `the answer is withheld from the page: ${JSON.stringify(sent)}`);
        return;
      }
      assert.equal(sent.status, 201, JSON.stringify(sent));
      assert.match(sent.body ?? '', new RegExp(`<Key>${key}</Key>`));
      assert.match(sent.etag ?? '', /^"[0-9a-f]{32}"$/, 'the exposed ETag is readable');
      const stored = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      assert.equal(await stored.Body!.transformToString(), `posted by the page (${key})`);
      assert.equal(stored.ContentType, 'text/plain');
    },
  },
];

test('a page on another origin uses presigned URLs once the bucket has CORS rules, and is refused without them', { timeout: 60_000 }, async (t) => {
  const { server, page, apiCall, apiGet } = await startDashboard(t, { env: () => S3_KEY });
  const pageOrigin = await servePage(t);
  const s3 = new S3Client({
    endpoint: server.urls['S3-compatible API']!,
    region: 'auto',
    forcePathStyle: true,
    credentials: { accessKeyId: S3_KEY.EDGEPORT_S3_ACCESS_KEY_ID, secretAccessKey: S3_KEY.EDGEPORT_S3_SECRET_ACCESS_KEY },
  });
  t.after(() => s3.destroy());
  const account = (await apiGet('/accounts'))[0].id as string;
  const bucket = 'browser-uploads';
  await apiCall('POST', `/accounts/${account}/store/buckets`, { name: bucket });
  await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'seeded.json', Body: '{}' }));
  await page.goto(`${pageOrigin}/app`);
  await page.getByRole('heading', { name: 'Another origin' }).waitFor();

  for (const [i, browserCase] of BROWSER_CASES.entries()) {
    await t.test(`${browserCase.name}: refused without rules`, { timeout: 20_000 }, async () => {
      await browserCase.run({ page, s3, bucket, key: `refused-${i}.json`, allowed: false });
    });
  }
  await s3.send(
    new PutBucketCorsCommand({
      Bucket: bucket,
      CORSConfiguration: {
        CORSRules: [{ AllowedOrigins: [pageOrigin], AllowedMethods: ['GET', 'PUT', 'POST'], AllowedHeaders: ['content-type'], ExposeHeaders: ['ETag'] }],
      },
    }),
  );
  for (const [i, browserCase] of BROWSER_CASES.entries()) {
    await t.test(`${browserCase.name}: allowed by the rule`, { timeout: 20_000 }, async () => {
      await browserCase.run({ page, s3, bucket, key: `allowed-${i}.json`, allowed: true });
    });
  }
  await s3.send(new DeleteBucketCorsCommand({ Bucket: bucket }));
  for (const [i, browserCase] of BROWSER_CASES.entries()) {
    await t.test(`${browserCase.name}: refused again once the rules are deleted`, { timeout: 20_000 }, async () => {
      await browserCase.run({ page, s3, bucket, key: `deleted-${i}.json`, allowed: false });
    });
  }
});

test("the dashboard's CORS section on a bucket page: add, edit and remove rules", { timeout: 60_000 }, async (t) => {
  const { api, page, problems, apiCall, apiGet } = await startDashboard(t);
  const account = (await apiGet('/accounts'))[0].id as string;
  await apiCall('POST', `/accounts/${account}/store/buckets`, { name: 'site-assets' });
  const corsPath = `/accounts/${account}/store/buckets/site-assets/cors`;

  await page.goto(`${api}/buckets/site-assets`);
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  await signIn(page);
  const section = page.getByRole('region', { name: 'CORS' });
  await section.getByText('No rules: browsers on other origins are refused.').waitFor();

  // Add a rule.
  await section.getByRole('button', { name: 'Add a rule' }).click();
  await section.getByLabel('Allowed origins').fill('https://app.example.com\nhttps://*.example.org');
  await section.getByRole('checkbox', { name: 'PUT' }).check();
  await section.getByLabel('Allowed headers').fill('content-type\nx-amz-meta-*');
  await section.getByLabel('Exposed headers').fill('ETag');
  await section.getByLabel('Max age (seconds)').fill('600');
  await section.getByLabel('ID (optional)').fill('uploads');
  await checkPage(page, 'cors-01-new-rule');
  await section.getByRole('button', { name: 'Add rule' }).click();
  await section.getByRole('status').getByText('Added the rule.').waitFor();
  await section
    .getByRole('row', { name: /https:\/\/app\.example\.com, https:\/\/\*\.example\.org/ })
    .getByText('GET, PUT')
    .waitFor();
  assert.deepEqual((await apiGet(corsPath)).rules, [
    {
      id: 'uploads',
      allowed: { origins: ['https://app.example.com', 'https://*.example.org'], methods: ['GET', 'PUT'], headers: ['content-type', 'x-amz-meta-*'] },
      exposeHeaders: ['ETag'],
      maxAgeSeconds: 600,
    },
  ]);
  await checkPage(page, 'cors-02-rule-added');

  // A rule the store refuses: its words, and nothing saved.
  await section.getByRole('button', { name: 'Add a rule' }).click();
  await section.getByLabel('Allowed origins').fill('https://*.*.example.com');
  await section.getByRole('button', { name: 'Add rule' }).click();
  await section.getByRole('alert').getByText('AllowedOrigin "https://*.*.example.com" can not have more than one wildcard.').waitFor();
  await section.getByRole('button', { name: 'Cancel', exact: true }).click();
  assert.equal((await apiGet(corsPath)).rules.length, 1);

  // Edit it: another origin, DELETE too, no max age.
  await section.getByRole('button', { name: 'Edit uploads' }).click();
  assert.equal(await section.getByLabel('Allowed origins').inputValue(), 'https://app.example.com\nhttps://*.example.org');
  await section.getByLabel('Allowed origins').fill('https://admin.example.com');
  await section.getByRole('checkbox', { name: 'DELETE' }).check();
  await section.getByLabel('Max age (seconds)').fill('');
  await section.getByRole('button', { name: 'Save rule' }).click();
  await section.getByRole('status').getByText('Saved the rule.').waitFor();
  assert.deepEqual((await apiGet(corsPath)).rules, [
    {
      id: 'uploads',
      allowed: { origins: ['https://admin.example.com'], methods: ['GET', 'PUT', 'DELETE'], headers: ['content-type', 'x-amz-meta-*'] },
      exposeHeaders: ['ETag'],
    },
  ]);

  // Remove it: the bucket has no rules again.
  await section.getByRole('button', { name: 'Remove' }).click();
  await section.getByRole('button', { name: 'Remove uploads' }).click();
  await section.getByRole('status').getByText('Removed uploads.').waitFor();
  await section.getByText('No rules: browsers on other origins are refused.').waitFor();
  assert.deepEqual((await apiGet(corsPath)).rules, []);
  await checkPage(page, 'cors-03-no-rules');
  // The one refusal the test provoked (the doubled wildcard), and nothing else.
  assert.deepEqual(
    problems.take().filter((line) => !/(HTTP 400: PUT .*\/cors$)|status of 400/.test(line)),
    [],
  );
});
