import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { openStoreEngine } from '../../src/store/engine/open-store-engine.ts';
import { tempDir } from '../helpers/temp-dir.ts';

async function fill(dataDir: string, background: boolean): Promise<number> {
  const engine = await openStoreEngine({ dataDir, maintenance: background, backgroundCheckpoints: true });
  await engine.ensureBucket('wal-test');
  const body = new Uint8Array(4096).fill(7);
  await Promise.all(Array.from({ length: 1500 }, (_, i) => engine.put('wal-test', `k${i}`, body)));
  await sleep(600);
  const size = statSync(join(dataDir, 'metadata.sqlite')).size;
  await engine.close();
  return size;
}

test('with background checkpoints, commits leave checkpointing to the checkpointer thread', { timeout: 30_000 }, async (t) => {
  const withoutThread = await fill(tempDir(t), false);
  const withThread = await fill(tempDir(t), true);
  assert.ok(withoutThread < 1024 * 1024, `no checkpoint ran during commits (db file ${withoutThread} bytes)`);
  assert.ok(withThread > 5 * 1024 * 1024, `the checkpointer copied the WAL into the db file (${withThread} bytes)`);
});
