/**
 * Uploads and bucket sizes in Chromium against the real `edgeport start`: the buckets page shows
 * each bucket's object count and total size (the GraphQL storage query); many files chosen at
 * once go up at most three at a time, each with its own progress bar, and the one the store
 * refuses (a key over 1024 bytes) keeps its own error while the others are stored byte for byte;
 * a chosen folder's files keep their relative paths below the folder being browsed; files dropped
 * on the panel go up too; the counts follow, on the buckets page and for the folder being browsed, and
 * the account's storage quota panel shows what it stores against its quotas. Screenshots at 1280 and 375 px, each checked with axe-core.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Request } from 'playwright-core';
import { assertNoHorizontalOverflow, checkPage, DESKTOP, PHONE, signIn, startDashboard } from '../helpers/dashboard-browser.ts';

test(
  'uploads: many files three at a time with an error per file, a folder with its paths, a drop; bucket counts and sizes',
  { timeout: 150_000 },
  async (t) => {
    const { api, dir, page, problems, apiGet, apiCall } = await startDashboard(t);
    const account = (await apiGet('/accounts'))[0].id as string;
    const objects = `/accounts/${account}/store/buckets`;
    await apiCall('POST', objects, { name: 'photos' });
    await apiCall('POST', objects, { name: 'empty' });
    await apiCall('PUT', `${objects}/photos/objects/${encodeURIComponent('cats/tom.jpg')}`, 'x'.repeat(1000));
    await apiCall('PUT', `${objects}/photos/objects/readme.txt`, 'y'.repeat(24));

    await page.goto(`${api}/`);
    await signIn(page);
    await page.goto(`${api}/buckets`);
    const photosRow = page.getByRole('row', { name: /photos/ });
    const countsOf = async (name: string) => {
      const row = page.getByRole('row', { name: new RegExp(`^${name}`) });
      return [await row.locator('td[data-label="Objects"]').textContent(), await row.locator('td[data-label="Size"]').textContent()];
    };
    await photosRow.locator('td[data-label="Objects"]').getByText('2').waitFor();
    assert.deepEqual(await countsOf('photos'), ['2', '1.0 KiB']);
    assert.deepEqual(await countsOf('empty'), ['0', '0 B']);

    // Many files at once: seven of 3 MiB and one whose key the store refuses.
    await page.getByRole('link', { name: 'photos', exact: true }).click();
    await page.getByRole('heading', { name: 'photos', level: 1 }).waitFor();
    const files = Array.from({ length: 7 }, (_, i) => ({ name: `shot-${i}.bin`, mimeType: 'application/octet-stream', buffer: randomBytes(3 * 1024 * 1024) }));
    const tooLong = `${'k'.repeat(1100)}.txt`;
    await page.getByLabel('Files', { exact: true }).setInputFiles([...files, { name: tooLong, mimeType: 'text/plain', buffer: Buffer.from('never stored') }]);
    await page.getByText('8 files, 21 MiB').waitFor();
    assert.equal(await page.getByLabel('Object key').count(), 0, 'many files: each keeps its own name, no single key field');
    // How many object PUTs are in flight at once, seen from the browser.
    let inFlight = 0;
    let most = 0;
    const isPut = (request: Request) => request.method() === 'PUT' && request.url().includes('/store/buckets/photos/objects/');
    page.on('request', (request) => {
      if (isPut(request)) most = Math.max(most, ++inFlight);
    });
    const done = (request: Request) => {
      if (isPut(request)) inFlight--;
    };
    page.on('requestfinished', done);
    page.on('requestfailed', done);
    // Every progress bar that showed a value between 0 and 100, by id.
    await page.evaluate(`(() => {
    window.__moving = new Set();
    const record = () => document.querySelectorAll('.upload-list progress').forEach((bar) => { if (bar.value > 0 && bar.value < 100) window.__moving.add(bar.id); });
    new MutationObserver(record).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
  })()`);
    // A slower network (16 MiB/s up), so each file's progress shows between 0 and 100% on loopback.
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 5, downloadThroughput: -1, uploadThroughput: 16 * 1024 * 1024 });
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    const uploader = page.getByRole('region', { name: 'Upload', exact: true });
    await uploader.getByRole('status').getByText('Uploaded 7 files (21 MiB).').waitFor({ timeout: 60_000 });
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
    assert.ok(most >= 2 && most <= 3, `at most three files at a time, and more than one: ${most}`);
    const moving = (await page.evaluate('[...window.__moving]')) as string[];
    t.diagnostic(`object PUTs in flight at most: ${most}; files whose bar showed an intermediate value: ${moving.length} of 7`);
    assert.ok(moving.length >= 2, `several files showed their own progress: ${moving.join(', ')}`);
    // The refused file stays, with the store's reason; the stored ones left the list.
    const left = uploader.getByRole('list', { name: 'Files to upload' }).getByRole('listitem');
    assert.equal(await left.count(), 1);
    await left.getByRole('alert').getByText('Not uploaded: The specified object name is not valid.').waitFor();
    await uploader.getByRole('button', { name: 'Retry the failed file' }).waitFor();
    await checkPage(page, 'uploads-01-many-files');
    await page.setViewportSize(PHONE);
    await assertNoHorizontalOverflow(page, 'the bucket page after an upload with a failure');
    await checkPage(page, 'phone-uploads-01-many-files');
    await page.setViewportSize(DESKTOP);
    const stored = (await apiGet(`${objects}/photos/objects?prefix=shot-`)) as Array<{ key: string; size: number }>;
    assert.deepEqual(
      stored.map((o) => o.key),
      files.map((f) => f.name),
    );
    const third = await fetch(`${api}/client/v4${objects}/photos/objects/shot-3.bin`, {
      headers: { 'x-auth-email': 'owner@example.test', 'x-auth-key': 'dashboard-test-key-0123456789abcdef0123' },
    });
    assert.ok(Buffer.from(await third.arrayBuffer()).equals(files[3]!.buffer), "the bytes are the file's");
    await uploader.getByRole('button', { name: 'Clear the list' }).click();
    assert.equal(await uploader.getByRole('list', { name: 'Files to upload' }).count(), 0);

    // A folder, chosen in the folder picker while browsing trips/: its files keep their paths.
    const album = join(dir, 'album');
    mkdirSync(join(album, 'day-2'), { recursive: true });
    writeFileSync(join(album, 'beach.txt'), 'sand');
    writeFileSync(join(album, 'day-2', 'hill.txt'), 'grass and sky');
    await page.goto(`${api}/buckets/photos?prefix=trips/`);
    await page.getByText('Nothing here yet.').waitFor();
    await page.getByLabel('Folder', { exact: true }).setInputFiles(album);
    await uploader.getByText('trips/album/day-2/hill.txt').waitFor();
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await uploader.getByRole('status').getByText('Uploaded 2 files (17 B).').waitFor();
    assert.deepEqual(
      ((await apiGet(`${objects}/photos/objects?prefix=trips/`)) as Array<{ key: string; size: number }>).map((o) => [o.key, o.size]),
      [
        ['trips/album/beach.txt', 4],
        ['trips/album/day-2/hill.txt', 13],
      ],
    );
    await page.getByRole('link', { name: 'album/' }).waitFor();
    // What the folder holds, its sub-folders included, follows the upload.
    await page.getByRole('status', { name: 'Folder size' }).getByText('This folder holds 2 objects, 17 B, sub-folders included.').waitFor();
    await page.getByRole('link', { name: 'album/' }).click();
    await page.getByRole('status', { name: 'Folder size' }).getByText('This folder holds 2 objects, 17 B, sub-folders included.').waitFor();
    await page.getByRole('link', { name: 'day-2/' }).click();
    await page.getByRole('status', { name: 'Folder size' }).getByText('This folder holds 1 object, 13 B, sub-folders included.').waitFor();
    await checkPage(page, 'uploads-01b-folder-size');

    // Files dropped on the panel.
    await page.goto(`${api}/buckets/photos`);
    await page.getByRole('link', { name: 'trips/' }).waitFor();
    const dropped = await page.evaluateHandle(`(() => {
    const data = new DataTransfer();
    data.items.add(new File(['dropped one'], 'drop-1.txt', { type: 'text/plain' }));
    data.items.add(new File(['dropped two!'], 'drop-2.txt', { type: 'text/plain' }));
    return data;
  })()`);
    await uploader.dispatchEvent('dragover', { dataTransfer: dropped });
    await uploader.dispatchEvent('drop', { dataTransfer: dropped });
    await uploader.getByText('2 files, 23 B').waitFor();
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await uploader.getByRole('status').getByText('Uploaded 2 files (23 B).').waitFor();
    await page.getByRole('row', { name: /drop-2\.txt/ }).waitFor();
    assert.equal(((await apiGet(`${objects}/photos/objects?prefix=drop-`)) as unknown[]).length, 2);

    // One file alone: its key can be edited before it goes up.
    await page.getByLabel('Files', { exact: true }).setInputFiles({ name: 'one.txt', mimeType: 'text/plain', buffer: Buffer.from('single') });
    await page.getByLabel('Object key').fill('notes/one.txt');
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await uploader.getByRole('status').getByText('Uploaded notes/one.txt (6 B).').waitFor();
    await page.getByRole('status', { name: 'Bucket size' }).getByText('This bucket holds 14 objects, 21 MiB.').waitFor();

    // The buckets page counts them all: 2 + 7 + 2 + 2 + 1 objects.
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Buckets' }).click();
    await photosRow.locator('td[data-label="Objects"]').getByText('14').waitFor();
    assert.deepEqual(await countsOf('photos'), ['14', '21 MiB']);
    // The account's usage against its quotas (GET /accounts/<id>/usage; the server's defaults here).
    const quota = page.getByRole('region', { name: 'Storage quota' });
    await quota.getByText('14 of 10,000,000 (0%)').waitFor();
    await quota.getByText('21 MiB of 100 GiB (0%)').waitFor();
    await quota.getByText('0 B of 1.0 GiB (0%)').waitFor();
    assert.equal(await quota.getByRole('progressbar').count(), 3);
    await checkPage(page, 'uploads-02-buckets');
    await page.setViewportSize(PHONE);
    await assertNoHorizontalOverflow(page, 'the buckets page');
    await checkPage(page, 'phone-uploads-02-buckets');
    const unexpected = problems.take().filter((line) => !/HTTP 400: PUT .*kkkk|status of 400/.test(line));
    assert.deepEqual(unexpected, [], 'no console errors or failed requests but the refused upload');
  },
);
