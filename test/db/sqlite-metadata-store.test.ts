/** The MetadataStore contract on SQLite (metadata-store.case.ts). */
import { join } from 'node:path';
import { FakeClock } from '../../src/core/clock.ts';
import { SqliteMetadataStore } from '../../src/db/sqlite/sqlite-metadata-store.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { GRACE_MS, runMetadataStoreSuite } from './metadata-store.case.ts';

runMetadataStoreSuite({
  clock: () => new FakeClock(Date.UTC(2026, 0, 1)),
  async open(t, clock) {
    const store = new SqliteMetadataStore({ file: join(tempDir(t), 'metadata.sqlite'), clock, reclaimGraceMs: GRACE_MS });
    t.after(() => store.close());
    return store;
  },
});
