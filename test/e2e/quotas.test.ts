/**
 * Account quotas through `edgeport start` (SQLite, or PostgreSQL under EDGEPORT_TEST_DB=postgres),
 * an attacker beside an honest account, each with the clients a user has: past its object bytes
 * the attacker is refused on every face (S3 PutObject, CopyObject, UploadPart and POST Object with
 * the AWS SDK: QuotaExceeded 403; the R2 and dashboard object routes and `wrangler r2 object put`:
 * 10009; a deployed script's binding: `put: ... (10009)`), its usage goes down as it deletes, its object count is bounded by a
 * quota the operator sets with `edgeport accounts quota`, its scripts keep 3 versions and an upload
 * past its script bytes is refused (10027); the API and the CLI show its usage against its quotas;
 * the honest account's writes go through all along.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  AbortMultipartUploadCommand,
  CopyObjectCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import Cloudflare from 'cloudflare';
import { runEdgeport } from '../helpers/edgeport-cli.ts';
import { startEdgeport } from '../helpers/edgeport-server.ts';
import { managementApi } from '../helpers/management-api.ts';
import { testDbUrl } from '../helpers/postgres.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { wranglerFor } from '../helpers/wrangler.ts';
import { moduleFile, sdkFor, viaEdge } from '../helpers/workers-upload.ts';

const KiB = 1024;
const ADMIN = { EDGEPORT_ADMIN_EMAIL: 'honest@example.test', EDGEPORT_ADMIN_KEY: 'honest-admin-key-0123456789' };
const QUOTAS =
  '[quotas]\nmax_object_bytes_per_account = 1048576\nmax_objects_per_account = 40\nmax_script_bytes_per_account = 102400\nmax_versions_per_script = 3\n';

/** Writes `?size=` zero bytes at the path's key through its binding; answers the error's message when the put throws. */
const WRITER = `export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    try {
      await env.FILES.put(url.pathname.slice(1), new Uint8Array(Number(url.searchParams.get('size'))));
      return new Response('stored');
    } catch (error) {
      return new Response(error.message);
    }
  },
};`;

/** A script whose module is about `size` bytes: one answer, padded with a comment. */
function paddedScript(answer: string, size: number): string {
  const code = `export default { fetch() { return new Response(${JSON.stringify(answer)}); } };\n// `;
  return code + 'x'.repeat(Math.max(0, size - code.length));
}

async function s3Refusal(promise: Promise<unknown>): Promise<{ name: string; status: number | undefined; message: string }> {
  const error = await promise.then(
    () => assert.fail('the request succeeded'),
    (thrown: unknown) => thrown,
  );
  assert.ok(error instanceof S3ServiceException, String(error));
  return { name: error.name, status: error.$metadata.httpStatusCode, message: error.message };
}

async function apiRefusal(promise: Promise<unknown>): Promise<{ status: number; code: number; message: string }> {
  const error = await promise.then(
    () => assert.fail('the call succeeded'),
    (thrown: unknown) => thrown,
  );
  assert.ok(error instanceof Cloudflare.APIError, String(error));
  const [first] = error.errors as Array<{ code: number; message: string }>;
  return { status: error.status!, code: first!.code, message: first!.message };
}

test(
  'quotas: an attacker is refused past its object bytes, object count and script bytes on every face; the honest account beside is not',
  { timeout: 300_000 },
  async (t) => {
    const dir = tempDir(t);
    const dataDir = join(dir, 'data');
    const config = join(dir, 'edgeport.toml');
    writeFileSync(config, QUOTAS);
    const dbUrl = await testDbUrl(t);
    const dbEnv = dbUrl ? { EDGEPORT_DB_URL: dbUrl } : {};
    const server = await startEdgeport({ owner: t, dataDir, env: { ...ADMIN, ...dbEnv }, args: ['--config', config] });
    const apiUrl = server.urls['management API']!;
    const accounts = (...args: string[]) => runEdgeport(['accounts', ...args, '--data-dir', dataDir, '--config', config], { env: dbEnv });

    const made = await accounts('create', 'mallory@example.test');
    assert.equal(made.code, 0, made.stderr);
    const malloryKey = /X-Auth-Key: +(\S+)/.exec(made.stdout)![1]!;
    const mallory = managementApi(apiUrl, 'mallory@example.test', malloryKey);
    const malloryCf = sdkFor(apiUrl, 'mallory@example.test', malloryKey);
    const [{ id: malloryId }] = (await mallory.call<Array<{ id: string }>>('GET', '/accounts')) as [{ id: string }];
    const honestCf = sdkFor(apiUrl, ADMIN.EDGEPORT_ADMIN_EMAIL, ADMIN.EDGEPORT_ADMIN_KEY);
    const honestId = (await honestCf.accounts.list()).result[0]!.id;
    const honest = managementApi(apiUrl, ADMIN.EDGEPORT_ADMIN_EMAIL, ADMIN.EDGEPORT_ADMIN_KEY);
    const raw = (email: string, key: string) => (method: string, path: string, body?: BodyInit) =>
      fetch(`${apiUrl}${path}`, { method, headers: { 'x-auth-email': email, 'x-auth-key': key }, ...(body === undefined ? {} : { body }) });
    const malloryRaw = raw('mallory@example.test', malloryKey);
    const honestRaw = raw(ADMIN.EDGEPORT_ADMIN_EMAIL, ADMIN.EDGEPORT_ADMIN_KEY);
    const usage = async () =>
      mallory.call<{
        objects: { stored_bytes: number; max_bytes: number | null; count: number; max_count: number | null };
        scripts: { stored_bytes: number; max_bytes: number | null; max_versions_per_script: number };
      }>('GET', `/accounts/${malloryId}/usage`);

    const key = await mallory.call<{ access_key_id: string; secret_access_key: string }>('POST', `/accounts/${malloryId}/store/access-keys`, {});
    const s3 = new S3Client({
      endpoint: server.urls['S3-compatible API']!,
      region: 'auto',
      forcePathStyle: true,
      maxAttempts: 1,
      credentials: { accessKeyId: key.access_key_id, secretAccessKey: key.secret_access_key },
    });
    t.after(() => s3.destroy());
    await s3.send(new CreateBucketCommand({ Bucket: 'loot' }));
    await honestCf.r2.buckets.create({ account_id: honestId, name: 'loot' });
    const honestPut = async (name: string, size: number) => {
      const response = await honestRaw('PUT', `/accounts/${honestId}/r2/buckets/loot/objects/${name}`, new Uint8Array(size));
      assert.equal(response.status, 200, await response.text());
    };

    // S3: 600 KiB fit in 1 MiB; the next 600 KiB does not, nor 2 MiB (refused before its body is read), nor a copy.
    await s3.send(new PutObjectCommand({ Bucket: 'loot', Key: 'a', Body: new Uint8Array(600 * KiB) }));
    const put = await s3Refusal(s3.send(new PutObjectCommand({ Bucket: 'loot', Key: 'b', Body: new Uint8Array(600 * KiB) })));
    assert.deepEqual([put.name, put.status], ['QuotaExceeded', 403]);
    assert.match(put.message, /^The account's storage quota is exceeded: it stores 614400 of its 1048576 bytes .* and this write adds 614400; delete objects/);
    const large = await s3Refusal(s3.send(new PutObjectCommand({ Bucket: 'loot', Key: 'large', Body: new Uint8Array(2048 * KiB) })));
    assert.deepEqual([large.name, large.status], ['QuotaExceeded', 403]);
    assert.equal((await s3Refusal(s3.send(new CopyObjectCommand({ Bucket: 'loot', Key: 'copy', CopySource: 'loot/a' })))).name, 'QuotaExceeded');
    await honestPut('while-mallory-is-full', 600 * KiB);

    // Multipart: parts count as they arrive; aborting gives their space back.
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'loot', Key: 'multi' }));
    await s3.send(new UploadPartCommand({ Bucket: 'loot', Key: 'multi', UploadId, PartNumber: 1, Body: new Uint8Array(300 * KiB) }));
    assert.equal((await usage()).objects.stored_bytes, 900 * KiB, "an open upload's part counts");
    assert.equal(
      (await s3Refusal(s3.send(new UploadPartCommand({ Bucket: 'loot', Key: 'multi', UploadId, PartNumber: 2, Body: new Uint8Array(300 * KiB) })))).name,
      'QuotaExceeded',
    );
    await s3.send(new AbortMultipartUploadCommand({ Bucket: 'loot', Key: 'multi', UploadId }));
    assert.equal((await usage()).objects.stored_bytes, 600 * KiB);

    // POST Object (a browser form upload).
    const form = await createPresignedPost(s3, { Bucket: 'loot', Key: 'posted', Expires: 300 });
    const body = new FormData();
    for (const [name, value] of Object.entries(form.fields)) body.set(name, value);
    body.set('file', new Blob([new Uint8Array(500 * KiB)]), 'posted.bin');
    const posted = await fetch(form.url, { method: 'POST', body });
    assert.equal(posted.status, 403);
    assert.match(await posted.text(), /<Code>QuotaExceeded<\/Code>/);

    // The management API's object routes: the R2 route wrangler r2 object put uses, and the dashboard's.
    for (const path of [`/accounts/${malloryId}/r2/buckets/loot/objects/api`, `/accounts/${malloryId}/store/buckets/loot/objects/api`]) {
      const response = await malloryRaw('PUT', path, new Uint8Array(500 * KiB));
      const envelope = (await response.json()) as { success: boolean; errors: Array<{ code: number; message: string }> };
      assert.deepEqual([response.status, envelope.success, envelope.errors[0]!.code], [403, false, 10009], path);
      assert.match(envelope.errors[0]!.message, /storage quota is exceeded: it stores 614400 of its 1048576 bytes/);
    }

    // wrangler r2 object put (that route) prints the status and the answer, message and code.
    const wrangler = wranglerFor(t, { apiBase: apiUrl, accountId: malloryId, credentials: { email: 'mallory@example.test', key: malloryKey } });
    const file = join(wrangler.dir, 'loot.bin');
    writeFileSync(file, new Uint8Array(500 * KiB));
    const wrangled = await wrangler.run(['r2', 'object', 'put', 'loot/wrangled', '--file', file, '--remote']);
    assert.notEqual(wrangled.code, 0);
    const printed = `${wrangled.stdout}${wrangled.stderr}`;
    assert.match(printed, /403: Forbidden;[^]*"code":10009,"message":"The account's storage quota is exceeded: it stores 614400 of its 1048576 bytes/);
    console.log(`wrangler r2 object put over the quota: ${/.*403: Forbidden;.*/.exec(printed)?.[0]}\n${/.*"code":10009.*/.exec(printed)?.[0]}`);

    // A deployed script's binding throws the platform's shape.
    const zone = await malloryCf.zones.create({ account: { id: malloryId }, name: 'mallory.test' });
    await malloryCf.workers.scripts.update('writer', {
      account_id: malloryId,
      metadata: { main_module: 'index.js', compatibility_date: '2025-01-01', bindings: [{ type: 'r2_bucket', name: 'FILES', bucket_name: 'loot' }] },
      files: [await moduleFile(WRITER)],
    });
    await malloryCf.workers.routes.create({ zone_id: zone.id, pattern: 'mallory.test/*', script: 'writer' });
    for (const began = performance.now(); (await viaEdge(server.urls.edge!, 'mallory.test', '/small?size=10')).body !== 'stored';) {
      assert.ok(performance.now() - began < 10_000, 'the script serves within 10 s');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const viaBinding = await viaEdge(server.urls.edge!, 'mallory.test', `/bound?size=${500 * KiB}`);
    assert.match(viaBinding.body, /^put: The account's storage quota is exceeded: it stores 614410 of its 1048576 bytes .* \(10009\)$/);

    // What the account sees of its usage, and what the operator sees.
    const seen = await usage();
    assert.deepEqual(seen.objects, { stored_bytes: 600 * KiB + 10, max_bytes: 1048576, count: 2, max_count: 40 });
    const shown = await accounts('quota', 'mallory@example.test');
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /object bytes +614410 \(600\.0 KiB\) +1048576 \(1 MiB\) +\[quotas\] max_object_bytes_per_account/);
    console.log(`mallory's usage, API: ${JSON.stringify(seen)}\n${shown.stdout.trimEnd()}`);

    // Deletes give the space back: the refused put now fits.
    await s3.send(new DeleteObjectCommand({ Bucket: 'loot', Key: 'a' }));
    assert.deepEqual([(await usage()).objects.stored_bytes, (await usage()).objects.count], [10, 1]);
    await s3.send(new PutObjectCommand({ Bucket: 'loot', Key: 'b', Body: new Uint8Array(600 * KiB) }));

    // The operator lowers the attacker's object count: new keys past it are refused, overwrites are not.
    const lowered = await accounts('quota', 'mallory@example.test', '--max-objects', '3');
    assert.equal(lowered.code, 0, lowered.stderr);
    await s3.send(new PutObjectCommand({ Bucket: 'loot', Key: 'c', Body: 'c' }));
    const counted = await s3Refusal(s3.send(new PutObjectCommand({ Bucket: 'loot', Key: 'd', Body: 'd' })));
    assert.equal(counted.name, 'QuotaExceeded');
    assert.match(counted.message, /object count quota is exceeded: it stores 3 of its 3 objects/);
    await s3.send(new PutObjectCommand({ Bucket: 'loot', Key: 'c', Body: 'c again' }));
    assert.equal((await usage()).objects.max_count, 3);

    // Scripts: uploads past 3 versions push the oldest out; past the script bytes an upload is refused (10027).
    const sizes: number[] = [];
    for (let i = 1; i <= 5; i++) {
      const source = paddedScript(`flood ${i}`, 20 * KiB + i);
      sizes.push(Buffer.byteLength(source));
      await malloryCf.workers.scripts.update('flood', {
        account_id: malloryId,
        metadata: { main_module: 'index.js', compatibility_date: '2025-01-01' },
        files: [await moduleFile(source)],
      });
    }
    const versions = (
      (await malloryRaw('GET', `/accounts/${malloryId}/workers/scripts/flood/versions`).then((r) => r.json())) as {
        result: { items: Array<{ number: number }> };
      }
    ).result.items;
    assert.deepEqual(
      versions.map((v) => v.number),
      [5, 4, 3],
      'the 3 newest (the deployed one among them)',
    );
    const scriptBytes = (await usage()).scripts.stored_bytes;
    assert.equal(scriptBytes, sizes.slice(2).reduce((a, b) => a + b, 0) + Buffer.byteLength(WRITER));
    const tooBig = await apiRefusal(
      malloryCf.workers.scripts.update('flood', {
        account_id: malloryId,
        metadata: { main_module: 'index.js', compatibility_date: '2025-01-01' },
        files: [await moduleFile(paddedScript('too big', 70 * KiB))],
      }),
    );
    assert.deepEqual([tooBig.status, tooBig.code], [400, 10027]);
    assert.match(tooBig.message, /^Your account's scripts exceeded their storage quota: they keep \d+ bytes of modules of the 102400 allowed/);
    assert.equal((await usage()).scripts.stored_bytes, scriptBytes, 'the refused upload stored nothing');
    console.log(
      `mallory's scripts: versions kept ${versions.length} of 5 uploaded, ${scriptBytes} script bytes of 102400; a 70 KiB upload refused: ${tooBig.code} ${tooBig.message}`,
    );
    await malloryCf.workers.scripts.delete('flood', { account_id: malloryId });
    assert.equal((await usage()).scripts.stored_bytes, Buffer.byteLength(WRITER), 'deleting the script frees its versions');

    // The honest account beside: its writes and deploys went through; its usage is its own.
    await honestPut('after', 300 * KiB);
    await honestCf.workers.scripts.update('site', {
      account_id: honestId,
      metadata: { main_module: 'index.js', compatibility_date: '2025-01-01' },
      files: [await moduleFile(paddedScript('site', 30 * KiB))],
    });
    const honestUsage = await honest.call<{ objects: { stored_bytes: number; count: number }; scripts: { stored_bytes: number } }>(
      'GET',
      `/accounts/${honestId}/usage`,
    );
    assert.deepEqual(
      [honestUsage.objects.stored_bytes, honestUsage.objects.count, honestUsage.scripts.stored_bytes],
      [900 * KiB, 2, Buffer.byteLength(paddedScript('site', 30 * KiB))],
    );
    const other = await malloryRaw('GET', `/accounts/${honestId}/usage`);
    assert.equal(other.status, 404, "another account's usage answers like a missing account");
  },
);
