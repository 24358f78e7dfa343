/**
 * The operator is whoever EDGEPORT_ADMIN_EMAIL / EDGEPORT_ADMIN_KEY name at every start: a restart
 * with other values gives the same account the new e-mail and key (the banner says so), never a
 * second account; the zones, buckets and S3 keys made before stay the operator's, and the old key
 * stops working. Driven through the real CLI, the official cloudflare SDK and the AWS SDK.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { GetObjectCommand, ListBucketsCommand, PutObjectCommand, CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import Cloudflare from 'cloudflare';
import { systemClock } from '../../src/core/clock.ts';
import { openControlStore } from '../../src/db/open-control-store.ts';
import { startEdgeport } from '../helpers/edgeport-server.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const S3 = 'S3-compatible API';
const API = 'management API';

function sdk(baseURL: string, apiEmail: string, apiKey: string): Cloudflare {
  return new Cloudflare({ baseURL, apiEmail, apiKey, apiToken: null, userServiceKey: null, maxRetries: 0 });
}

test(
  'a restart with new admin credentials: one operator, signed in with the new values, owning the earlier zones, buckets and keys',
  { timeout: 120_000 },
  async (t) => {
    const dataDir = join(tempDir(t), 'data');
    const before = {
      EDGEPORT_ADMIN_EMAIL: 'first@example.com',
      EDGEPORT_ADMIN_KEY: 'first-key-0123456789',
      EDGEPORT_S3_ACCESS_KEY_ID: '',
      EDGEPORT_S3_SECRET_ACCESS_KEY: '',
    };
    const first = await startEdgeport({ owner: t, dataDir, env: before });
    assert.match(first.banner, /^edgeport: operator first@example\.com$/m);
    const s3Key = first.s3Key;
    assert.ok(s3Key, first.banner);
    const cf = sdk(first.urls[API]!, before.EDGEPORT_ADMIN_EMAIL, before.EDGEPORT_ADMIN_KEY);
    const accountId = (await cf.accounts.list()).result[0]!.id;
    const zone = await cf.zones.create({ account: { id: accountId }, name: 'operator.example.test' });
    const s3 = new S3Client({ endpoint: first.urls[S3]!, region: 'auto', forcePathStyle: true, credentials: s3Key });
    await s3.send(new CreateBucketCommand({ Bucket: 'operators' }));
    await s3.send(new PutObjectCommand({ Bucket: 'operators', Key: 'note.txt', Body: 'kept' }));
    s3.destroy();
    assert.equal(await first.stop(), 0);

    const after = { ...before, EDGEPORT_ADMIN_EMAIL: 'second@example.com', EDGEPORT_ADMIN_KEY: 'second-key-0123456789' };
    const second = await startEdgeport({ owner: t, dataDir, env: after });
    assert.match(second.banner, /^edgeport: sign in as second@example\.com with the key in EDGEPORT_ADMIN_KEY$/m);
    assert.match(
      second.banner,
      /^edgeport: the operator's e-mail changed from first@example\.com to second@example\.com and its key to the one in EDGEPORT_ADMIN_KEY/m,
    );
    assert.match(second.banner, /^edgeport: operator second@example\.com$/m);

    const now = sdk(second.urls[API]!, after.EDGEPORT_ADMIN_EMAIL, after.EDGEPORT_ADMIN_KEY);
    const accounts = (await now.accounts.list()).result;
    assert.deepEqual(
      accounts.map(({ id }) => id),
      [accountId],
      'the same account',
    );
    assert.deepEqual(
      (await now.zones.list()).result.map(({ id }) => id),
      [zone.id],
      'its zones',
    );
    const keys = (await fetch(`${second.urls[API]}/accounts/${accountId}/store/access-keys`, {
      headers: { 'x-auth-email': after.EDGEPORT_ADMIN_EMAIL, 'x-auth-key': after.EDGEPORT_ADMIN_KEY },
    }).then((response) => response.json())) as { result: Array<{ access_key_id: string }> };
    assert.ok(
      keys.result.some((key) => key.access_key_id === s3Key.accessKeyId),
      `its S3 keys: ${JSON.stringify(keys)}`,
    );
    const again = new S3Client({ endpoint: second.urls[S3]!, region: 'auto', forcePathStyle: true, credentials: s3Key });
    t.after(() => again.destroy());
    assert.deepEqual(
      (await again.send(new ListBucketsCommand({}))).Buckets?.map(({ Name }) => Name),
      ['operators'],
      'its buckets',
    );
    assert.equal(await (await again.send(new GetObjectCommand({ Bucket: 'operators', Key: 'note.txt' }))).Body!.transformToString(), 'kept');

    for (const [email, key] of [
      [before.EDGEPORT_ADMIN_EMAIL, before.EDGEPORT_ADMIN_KEY],
      [after.EDGEPORT_ADMIN_EMAIL, before.EDGEPORT_ADMIN_KEY],
    ] as const) {
      await assert.rejects(
        sdk(second.urls[API]!, email, key).zones.list(),
        (error: unknown) => error instanceof Cloudflare.APIError && error.status === 403 && /9103/.test(JSON.stringify(error.errors)),
        `${email} with the old key`,
      );
    }
    assert.equal(await second.stop(), 0);
    const control = await openControlStore({ dataDir, clock: systemClock });
    t.after(() => control.close());
    assert.deepEqual(
      (await control.listAccounts()).map(({ id, email }) => [id, email]),
      [[accountId, 'second@example.com']],
      'one account: the operator',
    );
  },
);
