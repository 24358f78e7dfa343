/**
 * Where buckets are public (BucketDomains) on SQLite and on PostgreSQL (always: it fails, never
 * skips, when PostgreSQL is down): a managed URL keeps its id across off and on, a custom domain
 * is one bucket's, the edge's lookups see only what is on, and a bucket made again under the same
 * name is public by none of the old one's settings.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { FakeClock } from '../../src/core/clock.ts';
import { BucketDomains, type BucketRef } from '../../src/db/public-buckets/bucket-domains.ts';
import { PgDatabase } from '../../src/db/postgres/pg-database.ts';
import { openRegistryDriver } from '../../src/db/scripts/script-registry-drivers.ts';
import { pgTestUrl } from '../helpers/postgres.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const A = 'a'.repeat(32);
const B = 'b'.repeat(32);
const ZONE = 'z'.repeat(32);

const OPENERS: Record<string, (t: TestContext) => Promise<BucketDomains>> = {
  async sqlite(t) {
    const clock = new FakeClock();
    const domains = new BucketDomains(openRegistryDriver({ dataDir: tempDir(t), clock }), clock);
    t.after(() => domains.close());
    return domains;
  },
  async postgres(t) {
    const clock = new FakeClock();
    const database = await PgDatabase.open({ url: await pgTestUrl(t), now: 0 });
    const domains = new BucketDomains(openRegistryDriver({ dataDir: tempDir(t), clock, database }), clock);
    t.after(async () => {
      await domains.close();
      await database.close();
    });
    return domains;
  },
};

for (const [dialect, open] of Object.entries(OPENERS)) {
  test(`${dialect}: managed URLs and custom domains of buckets`, { timeout: 20_000 }, async (t) => {
    const domains = await open(t);
    const site: BucketRef = { accountId: A, name: 'site', created: 1_000 };
    assert.equal(await domains.getManaged(site), null);
    const on = await domains.setManaged(site, true);
    assert.match(on.publicId, /^pub-[0-9a-f]{32}$/);
    assert.deepEqual(await domains.managedTarget(on.publicId), { accountId: A, bucket: 'site', bucketCreated: 1_000, zoneId: null });
    assert.deepEqual(await domains.setManaged(site, false), { publicId: on.publicId, enabled: false }, 'off keeps the id');
    assert.equal(await domains.managedTarget(on.publicId), null, 'a URL turned off serves nothing');
    assert.deepEqual(await domains.setManaged(site, true), on, 'on again: the same address');

    const added = await domains.addCustom(site, 'cdn.shop.test', ZONE, { enabled: true, minTls: '1.2' });
    assert.ok(added !== 'taken');
    assert.deepEqual(await domains.customTarget('cdn.shop.test'), { accountId: A, bucket: 'site', bucketCreated: 1_000, zoneId: ZONE });
    assert.equal(
      await domains.addCustom({ accountId: B, name: 'site', created: 5 }, 'cdn.shop.test', 'y'.repeat(32), { enabled: true, minTls: '1.0' }),
      'taken',
      'one bucket per host, whatever the account',
    );
    assert.equal(await domains.addCustom(site, 'cdn.shop.test', ZONE, { enabled: true, minTls: '1.0' }), 'taken', 'attached once');
    assert.deepEqual((await domains.updateCustom(site, 'cdn.shop.test', { enabled: false }))?.enabled, false);
    assert.equal(await domains.customTarget('cdn.shop.test'), null, 'a domain turned off serves nothing');
    assert.equal(
      await domains.getCustom({ accountId: B, name: 'site', created: 1_000 }, 'cdn.shop.test'),
      null,
      "another account's bucket of the name has none",
    );
    assert.deepEqual(
      (await domains.listCustom(site)).map((d) => [d.domain, d.minTls]),
      [['cdn.shop.test', '1.2']],
    );

    // The bucket deleted and made again: another bucket, public by none of the old one's settings.
    const again: BucketRef = { ...site, created: 2_000 };
    assert.equal(await domains.getManaged(again), null);
    assert.deepEqual(await domains.listCustom(again), []);
    const fresh = await domains.setManaged(again, true);
    assert.notEqual(fresh.publicId, on.publicId, 'and another address');
    assert.equal(await domains.managedTarget(on.publicId), null);
    assert.notEqual(
      await domains.addCustom(again, 'cdn.shop.test', ZONE, { enabled: true, minTls: '1.0' }),
      'taken',
      "the old bucket's domain is free for the new one of its name",
    );
    assert.equal(await domains.deleteCustom(site, 'cdn.shop.test'), false, 'the old bucket has it no longer');
    assert.equal(await domains.deleteCustom(again, 'cdn.shop.test'), true);
    assert.equal(await domains.customTarget('cdn.shop.test'), null);
  });
}
