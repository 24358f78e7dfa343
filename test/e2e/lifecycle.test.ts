/**
 * Lifecycle rules end to end, on `edgeport start` with a short sweep interval: wrangler 4's
 * `r2 bucket lifecycle add`, `list` and `remove` as a user types them, and the rule applied (an
 * object put over S3 goes, /metrics counts it); then two instances on one PostgreSQL database,
 * where every due object is deleted exactly once (the two instances' counts add up to the objects)
 * and the account's usage is back to what remains.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test, type TestContext } from 'node:test';
import {
  CreateBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutBucketLifecycleConfigurationCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { startEdgeport, type EdgeportServer } from '../helpers/edgeport-server.ts';
import { managementApi } from '../helpers/management-api.ts';
import { pgTestUrl } from '../helpers/postgres.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { succeeded, wranglerFor } from '../helpers/wrangler.ts';

const OPERATOR = { email: 'operator@example.test', key: 'lifecycle-operator-key-0123' };
const S3_KEY = { EDGEPORT_S3_ACCESS_KEY_ID: 'EDGEPORTLIFECYCLE', EDGEPORT_S3_SECRET_ACCESS_KEY: 'lifecycle-secret-0123456789' };
const ENV = { EDGEPORT_ADMIN_EMAIL: OPERATOR.email, EDGEPORT_ADMIN_KEY: OPERATOR.key, ...S3_KEY, EDGEPORT_STORE_LIFECYCLE_INTERVAL_MS: '200' };

function s3Of(t: TestContext, server: EdgeportServer): S3Client {
  const client = new S3Client({
    endpoint: server.urls['S3-compatible API'],
    region: 'auto',
    forcePathStyle: true,
    maxAttempts: 5,
    credentials: { accessKeyId: S3_KEY.EDGEPORT_S3_ACCESS_KEY_ID, secretAccessKey: S3_KEY.EDGEPORT_S3_SECRET_ACCESS_KEY },
  });
  t.after(() => client.destroy());
  return client;
}

/** A metric's value in the server's /metrics (0 when absent). */
async function metric(server: EdgeportServer, name: string): Promise<number> {
  const text = await (await fetch(`${server.urls['management API']!.replace(/\/client\/v4$/, '')}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? 0 : Number(line.slice(name.length + 1));
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await sleep(100);
  }
}

/** Today's UTC midnight, as S3 and wrangler take a date: everything uploaded before now is due. */
function todayMidnight(): Date {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
}

test(
  'wrangler r2 bucket lifecycle add, list and remove against edgeport start; the rule is applied and counted in /metrics',
  { timeout: 150_000 },
  async (t) => {
    const server = await startEdgeport({ owner: t, dataDir: join(tempDir(t), 'data'), env: ENV });
    const [account] = await managementApi(server.urls['management API']!, OPERATOR.email, OPERATOR.key).call<Array<{ id: string }>>('GET', '/accounts');
    const wrangler = wranglerFor(t, { apiBase: server.urls['management API']!, accountId: account!.id, credentials: OPERATOR });
    succeeded(await wrangler.run(['r2', 'bucket', 'create', 'aging']), 'r2 bucket create');
    assert.match(
      succeeded(await wrangler.run(['r2', 'bucket', 'lifecycle', 'list', 'aging']), 'lifecycle list'),
      /There are no lifecycle rules for bucket 'aging'/,
    );

    const added = succeeded(
      await wrangler.run(['r2', 'bucket', 'lifecycle', 'add', 'aging', 'expire-logs', 'logs/', '--expire-days', '30', '--abort-multipart-days', '2']),
      'lifecycle add',
    );
    assert.match(added, /Added lifecycle rule 'expire-logs' to bucket 'aging'/);
    const date = todayMidnight().toISOString().slice(0, 10);
    succeeded(await wrangler.run(['r2', 'bucket', 'lifecycle', 'add', 'aging', 'tmp-now', 'tmp/', '--expire-date', date]), 'lifecycle add --expire-date');
    succeeded(
      await wrangler.run(['r2', 'bucket', 'lifecycle', 'add', 'aging', 'cold', 'cold/', '--ia-transition-days', '60', '--force']),
      'lifecycle add --ia-transition-days',
    );
    const list = succeeded(await wrangler.run(['r2', 'bucket', 'lifecycle', 'list', 'aging']), 'lifecycle list');
    assert.match(
      list,
      /name:\s+expire-logs[\s\S]*prefix:\s+logs\/[\s\S]*action:\s+Expire objects after 30 days, Abort incomplete multipart uploads after 2 days/,
    );
    assert.match(list, new RegExp(`name:\\s+tmp-now[\\s\\S]*prefix:\\s+tmp/[\\s\\S]*action:\\s+Expire objects on ${date}`));
    assert.match(list, /name:\s+cold[\s\S]*action:\s+Transition to Infrequent Access after 60 days/);

    // The date rule is due: an object under tmp/ goes within the sweep interval; others stay.
    const s3 = s3Of(t, server);
    await s3.send(new PutObjectCommand({ Bucket: 'aging', Key: 'tmp/scratch.txt', Body: 'scratch' }));
    await s3.send(new PutObjectCommand({ Bucket: 'aging', Key: 'logs/today.txt', Body: 'kept for 30 days' }));
    await until('the due object expiring', async () => {
      try {
        await s3.send(new HeadObjectCommand({ Bucket: 'aging', Key: 'tmp/scratch.txt' }));
        return undefined;
      } catch {
        return true;
      }
    });
    await s3.send(new HeadObjectCommand({ Bucket: 'aging', Key: 'logs/today.txt' }));
    assert.equal(await metric(server, 'edgeport_store_lifecycle_expired_objects_total'), 1);
    assert.equal(await metric(server, 'edgeport_store_lifecycle_lease_held'), 1);

    succeeded(await wrangler.run(['r2', 'bucket', 'lifecycle', 'remove', 'aging', '--name', 'tmp-now']), 'lifecycle remove');
    const after = succeeded(await wrangler.run(['r2', 'bucket', 'lifecycle', 'list', 'aging']), 'lifecycle list');
    assert.doesNotMatch(after, /tmp-now/);
    assert.match(after, /expire-logs/);
  },
);

test('two instances on one PostgreSQL database: every due object deleted exactly once, usage back to what remains', { timeout: 180_000 }, async (t) => {
  const dir = tempDir(t);
  const env = { ...ENV, EDGEPORT_DB_URL: await pgTestUrl(t, { pool: 6 }), EDGEPORT_BLOBS_URL: `file://${join(dir, 'shared-blobs')}` };
  const [a, b] = await Promise.all([startEdgeport({ owner: t, dataDir: join(dir, 'a'), env }), startEdgeport({ owner: t, dataDir: join(dir, 'b'), env })]);
  const [s3a, s3b] = [s3Of(t, a), s3Of(t, b)];
  await s3a.send(new CreateBucketCommand({ Bucket: 'shared' }));
  const total = 300;
  for (let i = 0; i < total; i += 20) {
    await Promise.all(
      Array.from({ length: 20 }, (_, j) =>
        (j % 2 ? s3a : s3b).send(new PutObjectCommand({ Bucket: 'shared', Key: `due/${String(i + j).padStart(4, '0')}`, Body: 'x'.repeat(100) })),
      ),
    );
  }
  await s3a.send(new PutObjectCommand({ Bucket: 'shared', Key: 'kept/one', Body: 'stays' }));
  await s3b.send(
    new PutBucketLifecycleConfigurationCommand({
      Bucket: 'shared',
      LifecycleConfiguration: { Rules: [{ ID: 'due-now', Status: 'Enabled', Filter: { Prefix: 'due/' }, Expiration: { Date: todayMidnight() } }] },
    }),
  );
  const started = Date.now();
  await until(
    'every due object expiring',
    async () => {
      const listed = await s3a.send(new ListObjectsV2Command({ Bucket: 'shared' }));
      return listed.KeyCount === 1 ? true : undefined;
    },
    120_000,
  );
  console.log(`# ${total} due objects expired across two instances in ${Date.now() - started} ms`);
  // Let any pass under way finish its page before counting.
  await sleep(1000);
  const [expiredA, expiredB] = [
    await metric(a, 'edgeport_store_lifecycle_expired_objects_total'),
    await metric(b, 'edgeport_store_lifecycle_expired_objects_total'),
  ];
  console.log(`# expired by instance A: ${expiredA}, by instance B: ${expiredB}`);
  assert.equal(expiredA + expiredB, total, 'each due object deleted once');
  const api = managementApi(a.urls['management API']!, OPERATOR.email, OPERATOR.key);
  const [account] = await api.call<Array<{ id: string }>>('GET', '/accounts');
  const usage = await api.call<{ objects: { stored_bytes: number; count: number } }>('GET', `/accounts/${account!.id}/usage`);
  assert.deepEqual([usage.objects.stored_bytes, usage.objects.count], [5, 1], 'the deletions gave their space back');
  assert.equal((await s3b.send(new ListObjectsV2Command({ Bucket: 'shared' }))).Contents?.map((o) => o.Key).join(), 'kept/one');
});
