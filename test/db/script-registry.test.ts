/**
 * The script registry on SQLite and on PostgreSQL (always: it fails, never skips, when PostgreSQL is
 * down): the same operations answer alike on both; the limits of scripts per account and routes per
 * zone, a pattern held once across accounts, another account's script invisible, secrets never in
 * the lists, the change counter every instance polls advancing whenever what the edge serves changes,
 * and the quotas: versions kept per script, script bytes per account.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { AccountQuotas } from '../../src/config/quotas.ts';
import { FakeClock } from '../../src/core/clock.ts';
import { QuotaRefusal } from '../../src/db/account-usage.ts';
import type { MetadataStore } from '../../src/db/metadata-store.ts';
import { PgDatabase } from '../../src/db/postgres/pg-database.ts';
import { PgMetadataStore } from '../../src/db/postgres/pg-metadata-store.ts';
import { SqliteMetadataStore } from '../../src/db/sqlite/sqlite-metadata-store.ts';
import { join } from 'node:path';
import type { NewVersion, ScriptRegistry } from '../../src/db/scripts/script-registry.ts';
import { openScriptRegistry } from '../../src/db/scripts/script-registry-drivers.ts';
import { pgTestUrl } from '../helpers/postgres.ts';
import { TEST_SECRETS } from '../helpers/secrets.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const A = 'a'.repeat(32);
const B = 'b'.repeat(32);

function version(text: string): NewVersion {
  return {
    metadata: {
      mainModule: 'index.js',
      compatibilityDate: '2025-01-01',
      compatibilityFlags: [],
      bindings: [{ type: 'plain_text', name: 'T', text }],
      annotations: {},
      source: 'api',
    },
    modules: [{ name: 'index.js', type: 'esm', content: Buffer.from(`export default {}; // ${text}`).toString('base64') }],
    etag: `etag-${text}`,
  };
}

/** A version whose one module is `size` bytes. */
function sized(text: string, size: number): NewVersion {
  return { ...version(text), modules: [{ name: 'index.js', type: 'esm', content: Buffer.alloc(size, text).toString('base64') }] };
}

/** The registry with `quotas`, and the metadata store of its database (where account usage is read). */
const QUOTA_OPENERS: Record<string, (t: TestContext, quotas: AccountQuotas) => Promise<{ registry: ScriptRegistry; meta: MetadataStore }>> = {
  async sqlite(t, quotas) {
    const dataDir = tempDir(t);
    const registry = openScriptRegistry({ dataDir, clock: new FakeClock(), quotas, secrets: TEST_SECRETS });
    const meta = new SqliteMetadataStore({ file: join(dataDir, 'metadata.sqlite'), clock: new FakeClock(), reclaimGraceMs: 0, quotas });
    t.after(async () => {
      await registry.close();
      await meta.close();
    });
    return { registry, meta };
  },
  async postgres(t, quotas) {
    const database = await PgDatabase.open({ url: await pgTestUrl(t), now: 0 });
    const registry = openScriptRegistry({ dataDir: tempDir(t), clock: new FakeClock(), database, quotas, secrets: TEST_SECRETS });
    const meta = new PgMetadataStore({ database, clock: new FakeClock(), reclaimGraceMs: 0, quotas });
    t.after(async () => {
      await registry.close();
      await meta.close();
      await database.close();
    });
    return { registry, meta };
  },
};

const OPENERS: Record<string, (t: TestContext) => Promise<ScriptRegistry>> = {
  async sqlite(t) {
    const registry = openScriptRegistry({ dataDir: tempDir(t), clock: new FakeClock(), secrets: TEST_SECRETS });
    t.after(() => registry.close());
    return registry;
  },
  async postgres(t) {
    const database = await PgDatabase.open({ url: await pgTestUrl(t), now: 0 });
    const registry = openScriptRegistry({ dataDir: tempDir(t), clock: new FakeClock(), database, secrets: TEST_SECRETS });
    t.after(async () => {
      await registry.close();
      await database.close();
    });
    return registry;
  },
};

for (const [dialect, open] of Object.entries(OPENERS)) {
  test(`${dialect}: versions, deployments, secrets and the change counter`, { timeout: 20_000 }, async (t) => {
    const registry = await open(t);
    const seq0 = await registry.changeSeq();
    const first = await registry.uploadVersion(A, 'app', version('one'), { deploy: true, maxScripts: 100 });
    assert.equal(first.kind, 'ok');
    assert.ok((await registry.changeSeq()) > seq0, 'a deploy advances the counter');
    const served = await registry.servingState();
    const second = await registry.uploadVersion(A, 'app', version('two'), { deploy: false, maxScripts: 100 });
    assert.ok(second.kind === 'ok' && first.kind === 'ok');
    assert.equal(second.version.number, 2);
    assert.deepEqual(await registry.servingState(), served, 'a version not deployed changes nothing served');
    assert.equal((await registry.getScript(A, 'app'))?.deployment?.versionId, first.version.id);
    assert.equal(await registry.getScript(B, 'app'), null, 'another account sees no such script');
    assert.equal(await registry.getVersion(B, 'app', first.version.id), null);
    assert.equal(await registry.deploy(B, 'app', second.version.id, null), null, 'another account cannot deploy it');
    await registry.deploy(A, 'app', second.version.id, 'the second');
    assert.deepEqual(
      (await registry.servingState()).scripts.map((s) => [s.accountId, s.name, s.versionId]),
      [[A, 'app', second.version.id]],
    );
    assert.deepEqual(
      (await registry.listDeployments(A, 'app')).map((d) => [d.versionId, d.message]),
      [
        [second.version.id, 'the second'],
        [first.version.id, null],
      ],
    );
    const runnable = await registry.runnable(A, 'app', second.version.id);
    assert.equal(Buffer.from(runnable!.modules[0]!.content, 'base64').toString(), 'export default {}; // two');

    const key = (await registry.servingState()).scripts[0]!.key;
    assert.equal(await registry.setSecret(A, 'app', 'TOKEN', 'value'), true);
    assert.notEqual((await registry.servingState()).scripts[0]!.key, key, 'a secret restarts the deployed version');
    // As on the platform, a secret change is a new version, the deployed one's copy, deployed at once.
    const [copy] = await registry.listVersions(A, 'app');
    assert.deepEqual([copy!.number, copy!.metadata.annotations, copy!.etag], [3, { triggeredBy: 'secret' }, second.version.etag]);
    assert.equal((await registry.getScript(A, 'app'))?.deployment?.versionId, copy!.id);
    assert.equal(Buffer.from((await registry.runnable(A, 'app', copy!.id))!.modules[0]!.content, 'base64').toString(), 'export default {}; // two');
    assert.deepEqual(await registry.listSecrets(A, 'app'), [{ name: 'TOKEN', type: 'secret_text' }]);
    assert.deepEqual(await registry.secretValues(A, 'app'), { TOKEN: 'value' });
    assert.equal(await registry.setSecret(B, 'app', 'TOKEN', 'x'), false);
    assert.equal(await registry.setSecret(A, 'app', 'MISSING', null), false);
    assert.equal(await registry.setSecret(A, 'app', 'TOKEN', null), true);
    assert.equal((await registry.listVersions(A, 'app')).length, 4, 'deleting a secret is a version too');
    assert.deepEqual(await registry.listSecrets(A, 'app'), []);
    await registry.uploadVersion(A, 'draft', version('draft'), { deploy: false, maxScripts: 100 });
    assert.equal(await registry.setSecret(A, 'draft', 'TOKEN', 'x'), true);
    assert.equal((await registry.listVersions(A, 'draft')).length, 1, 'a script never deployed gets no version for a secret');
    assert.equal(await registry.setSecret(A, 'app', 'UPLOADED', 'y', { asVersion: false }), true);
    assert.equal((await registry.listVersions(A, 'app')).length, 4, 'the secrets an upload carries make no version of their own');
    assert.deepEqual(await registry.listSecrets(A, 'app'), [{ name: 'UPLOADED', type: 'secret_text' }]);
  });

  test(`${dialect}: limits, routes held once, deletes`, { timeout: 20_000 }, async (t) => {
    const registry = await open(t);
    assert.equal((await registry.uploadVersion(A, 'one', version('1'), { deploy: true, maxScripts: 2 })).kind, 'ok');
    assert.equal((await registry.uploadVersion(A, 'two', version('2'), { deploy: true, maxScripts: 2 })).kind, 'ok');
    assert.deepEqual(await registry.uploadVersion(A, 'three', version('3'), { deploy: true, maxScripts: 2 }), { kind: 'limit', limit: 2 });
    assert.equal(
      (await registry.uploadVersion(A, 'two', version('2b'), { deploy: true, maxScripts: 2 })).kind,
      'ok',
      'a new version of an existing script is no new script',
    );
    assert.equal((await registry.uploadVersion(B, 'one', version('b'), { deploy: true, maxScripts: 2 })).kind, 'ok', 'the limit is per account');
    assert.deepEqual(
      (await registry.listScripts(A)).map((s) => s.name),
      ['one', 'two'],
    );

    const zone = 'z'.repeat(32);
    const made = await registry.putRoute({ zoneId: zone, accountId: A, pattern: 'shop.test/*', script: 'one' }, 2);
    assert.equal(made?.kind, 'ok');
    assert.deepEqual(await registry.putRoute({ zoneId: 'y'.repeat(32), accountId: B, pattern: 'shop.test/*', script: 'one' }, 2), { kind: 'duplicate' });
    assert.deepEqual(await registry.putRoute({ zoneId: zone, accountId: A, pattern: 'shop.test/a/*', script: 'nope' }, 2), { kind: 'no-script' });
    assert.deepEqual(await registry.putRoute({ zoneId: zone, accountId: A, pattern: 'shop.test/b/*', script: 'two' }, 2).then((r) => r?.kind), 'ok');
    assert.deepEqual(await registry.putRoute({ zoneId: zone, accountId: A, pattern: 'shop.test/c/*', script: 'two' }, 2), { kind: 'limit', limit: 2 });
    assert.deepEqual(
      (await registry.listZoneRoutes(zone)).map((r) => r.pattern),
      ['shop.test/*', 'shop.test/b/*'],
    );

    assert.equal(await registry.setSubdomain(A, 'alpha'), true);
    assert.equal(await registry.setSubdomain(B, 'alpha'), false, 'one account per subdomain');
    assert.equal(await registry.getSubdomain(A), 'alpha');

    assert.equal(await registry.deleteScript(B, 'two'), false);
    assert.equal(await registry.deleteScript(A, 'two'), true);
    assert.deepEqual(
      (await registry.listZoneRoutes(zone)).map((r) => r.pattern),
      ['shop.test/*'],
      'its routes go with it',
    );
    assert.deepEqual((await registry.servingState()).scripts.map((s) => `${s.accountId.slice(0, 1)}/${s.name}`).sort(), ['a/one', 'b/one']);
  });
}

for (const [dialect, open] of Object.entries(OPENERS)) {
  test(
    `${dialect}: secrets in bulk, versions listing the secrets of their time, settings an upload carries, deployments and subdomains deleted`,
    { timeout: 20_000 },
    async (t) => {
      const registry = await open(t);
      const first = await registry.uploadVersion(A, 'app', version('one'), {
        deploy: true,
        maxScripts: 100,
        settings: { logpush: true, observability: { enabled: true, head_sampling_rate: 0.5 } },
      });
      assert.ok(first.kind === 'ok');
      assert.deepEqual(
        [first.script.settings.logpush, first.script.settings.observability],
        [true, { enabled: true, head_sampling_rate: 0.5 }],
        'a first upload keeps the settings it carries',
      );
      const bindings = async (id: string) => (await registry.getVersion(A, 'app', id))!.metadata.bindings.map((b) => `${b.type}:${b.name}`);

      const bulk = await registry.setSecrets(A, 'app', { ONE: '1', TWO: '2' }, { asVersion: 'deployed' });
      assert.deepEqual(
        bulk?.secrets.map((s) => s.name),
        ['ONE', 'TWO'],
      );
      assert.equal((await registry.listVersions(A, 'app')).length, 2, 'several secrets at once make one version');
      assert.deepEqual(await bindings(bulk!.version!.id), ['plain_text:T', 'secret_text:ONE', 'secret_text:TWO'], 'the copy lists the secrets');
      assert.equal((await registry.getScript(A, 'app'))?.deployment?.versionId, bulk!.version!.id, 'and is deployed');
      assert.deepEqual(await bindings(first.version.id), ['plain_text:T'], 'an older version keeps the secrets of its time');
      assert.equal(
        await registry.setSecrets(A, 'app', { ONE: null, NEVER: null }, { asVersion: 'deployed', strict: true }),
        null,
        'strict: deleting a secret that is not there changes nothing',
      );
      assert.deepEqual(await registry.secretValues(A, 'app'), { ONE: '1', TWO: '2' });

      const latest = await registry.setSecrets(A, 'app', { ONE: null, THREE: '3' }, { asVersion: 'latest', annotations: { message: 'rotate' } });
      assert.deepEqual(await bindings(latest!.version!.id), ['plain_text:T', 'secret_text:TWO', 'secret_text:THREE']);
      assert.deepEqual(latest!.version!.metadata.annotations, { message: 'rotate', triggeredBy: 'secret' });
      assert.equal((await registry.getScript(A, 'app'))?.deployment?.versionId, bulk!.version!.id, 'a copy of the latest version is not deployed');
      assert.deepEqual(await registry.secretValues(A, 'app'), { TWO: '2', THREE: '3' }, "the secrets themselves are the script's, at once");

      const upload = await registry.uploadVersion(A, 'app', version('two'), { deploy: true, maxScripts: 100 });
      assert.ok(upload.kind === 'ok');
      assert.deepEqual(await bindings(upload.version.id), ['plain_text:T', 'secret_text:THREE', 'secret_text:TWO'], "an upload lists the script's secrets");
      assert.equal(upload.script.settings.logpush, true, 'an upload without settings keeps them');

      const deployments = await registry.listDeployments(A, 'app');
      assert.equal(await registry.deleteDeployment(A, 'app', deployments[0]!.id), 'latest');
      assert.equal(await registry.deleteDeployment(B, 'app', deployments[1]!.id), 'missing', "another account's deployment is not there");
      assert.equal(await registry.deleteDeployment(A, 'app', deployments[1]!.id), 'ok');
      assert.equal((await registry.listDeployments(A, 'app')).length, deployments.length - 1);

      assert.equal(await registry.setSubdomain(A, 'alpha'), true);
      assert.equal(await registry.deleteSubdomain(B), false);
      assert.equal(await registry.deleteSubdomain(A), true);
      assert.equal(await registry.getSubdomain(A), null);
      assert.equal(await registry.setSubdomain(B, 'alpha'), true, 'a subdomain given up is free for another account');
    },
  );
}

for (const [dialect, open] of Object.entries(QUOTA_OPENERS)) {
  test(
    `${dialect}: a script keeps its newest versions and the deployed one; the account's script bytes are charged, refused past its quota, freed`,
    { timeout: 20_000 },
    async (t) => {
      const { registry, meta } = await open(t, { maxObjectBytes: 0, maxObjects: 0, maxScriptBytes: 200, maxVersionsPerScript: 3 });
      const bytes = async (account: string) => (await meta.accountUsage(account)).scriptBytes;
      const upload = async (account: string, name: string, text: string, size: number, deploy: boolean) => {
        const outcome = await registry.uploadVersion(account, name, sized(text, size), { deploy, maxScripts: 100 });
        assert.equal(outcome.kind, 'ok');
        return outcome.kind === 'ok' ? outcome : assert.fail();
      };
      const versions = async () => (await registry.listVersions(A, 'app')).map((v) => v.number);
      const v1 = await upload(A, 'app', 'a', 50, true);
      for (const text of ['b', 'c']) await upload(A, 'app', text, 10, false);
      assert.deepEqual(await versions(), [3, 2, 1]);
      const v4 = await upload(A, 'app', 'd', 10, false);
      assert.equal(v4.pruned, 0);
      assert.deepEqual(await versions(), [4, 3, 2, 1], 'the 3 newest, and the deployed one besides');
      const v5 = await upload(A, 'app', 'e', 10, false);
      assert.equal(v5.pruned, 1);
      assert.deepEqual(await versions(), [5, 4, 3, 1], 'the oldest goes; the deployed one stays');
      assert.equal(await bytes(A), 50 + 10 + 10 + 10, 'only kept versions count');
      assert.equal(
        Buffer.from((await registry.runnable(A, 'app', v1.version.id))!.modules[0]!.content, 'base64').length,
        50,
        'the deployed version still runs',
      );

      const v6 = await upload(A, 'app', 'f', 10, true);
      assert.deepEqual(await versions(), [6, 5, 4], 'once no longer deployed, an old version goes too');
      assert.equal(await registry.getVersion(A, 'app', v1.version.id), null);
      assert.equal((await registry.listDeployments(A, 'app')).length, 2, 'deployments keep their history');
      assert.equal(await bytes(A), 30);

      // Past the quota: refused whole, predicted before the upload's trial start.
      assert.equal(await registry.quotaRefusal(A, 'app', sized('g', 180), true), null, '30 + 180 - 10 pushed out = 200 fits');
      const predicted = await registry.quotaRefusal(A, 'app', sized('g', 181), true);
      assert.deepEqual([predicted?.quota, predicted?.limit, predicted?.used, predicted?.adding], ['maxScriptBytes', 200, 30, 171]);
      await assert.rejects(
        registry.uploadVersion(A, 'app', sized('g', 181), { deploy: true, maxScripts: 100 }),
        (error: unknown) => error instanceof QuotaRefusal && error.adding === 171,
      );
      await assert.rejects(registry.uploadVersion(A, 'other', sized('h', 171), { deploy: true, maxScripts: 100 }), QuotaRefusal);
      assert.deepEqual(await versions(), [6, 5, 4], 'a refused upload changes nothing');
      assert.equal(await registry.getScript(A, 'other'), null, 'nor makes the script');
      assert.equal((await registry.getScript(A, 'app'))?.deployment?.versionId, v6.version.id);
      assert.equal(await bytes(A), 30);
      await upload(A, 'app', 'g', 180, true);
      assert.equal(await bytes(A), 200, 'exactly at the quota is allowed');

      // A secret's copy of the deployed version is a version like any other: it pushes one out, and is charged.
      await meta.setAccountQuotas(A, { maxScriptBytes: 400 });
      assert.equal(await registry.setSecret(A, 'app', 'TOKEN', 'x'), true);
      assert.deepEqual(await versions(), [8, 7, 6]);
      assert.equal(await bytes(A), 180 + 180 + 10);
      await meta.setAccountQuotas(A, { maxScriptBytes: 10 });
      await assert.rejects(registry.setSecret(A, 'app', 'TOKEN', 'y'), QuotaRefusal, '370 + 180 - 10 > 10');
      assert.deepEqual(await registry.secretValues(A, 'app'), { TOKEN: 'x' }, 'a refused secret change keeps the old value');

      await upload(B, 'app', 'b', 150, true);
      assert.equal(await bytes(B), 150, 'the account beside is charged alone');
      assert.equal(await registry.deleteScript(A, 'app'), true);
      assert.equal(await bytes(A), 0, 'deleting a script frees its versions');
      assert.equal(await bytes(B), 150);
    },
  );
}
