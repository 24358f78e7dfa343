/** SqliteControlStore: the ControlStore contract, and what only SQLite has (one file with the object store). */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { FakeClock } from '../../src/core/clock.ts';
import { openSqliteControlStore } from '../../src/db/sqlite/sqlite-control-store.ts';
import { SqliteMetadataStore } from '../../src/db/sqlite/sqlite-metadata-store.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { account, job, runControlStoreSuite } from './control-store.case.ts';

runControlStoreSuite({
  async open(t) {
    const clock = new FakeClock();
    const store = openSqliteControlStore({ dataDir: tempDir(t), clock });
    t.after(() => store.close());
    return { store, clock };
  },
});

test('shares metadata.sqlite with the object store; everything survives a reopen', async (t) => {
  const dataDir = tempDir(t);
  const clock = new FakeClock();
  const meta = new SqliteMetadataStore({ file: join(dataDir, 'metadata.sqlite'), clock, reclaimGraceMs: 0 });
  const first = openSqliteControlStore({ dataDir, clock });
  await first.createAccount(account('a'.repeat(32), 'a@example.com'));
  await first.createJob('1'.repeat(32), () => job('1'.repeat(32), true));
  await meta.putAccessKey({ accessKeyId: 'KEYKEYKEY', secret: 's', accountId: 'a'.repeat(32), permission: 'admin_read_write', buckets: null, created: 1, revoked: null });
  await first.close();
  await meta.close();
  const again = openSqliteControlStore({ dataDir, clock });
  t.after(() => again.close());
  assert.equal((await again.getAccount('a'.repeat(32)))?.email, 'a@example.com');
  assert.equal((await again.listEnabledJobs('1'.repeat(32))).length, 1);
});
