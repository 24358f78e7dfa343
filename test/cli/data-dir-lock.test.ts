/**
 * The data dir lock: one holder at a time, in this process or another; a refusal names the holder
 * and the flag and writes nothing; the lock ends with its process, kill -9 included.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { formatAge, lockDataDir, LOCK_FILE, OWNER_FILE } from '../../src/cli/data-dir-lock.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const HINT = '--data-dir DIR';

/** Every entry of `dir` with its size and mtime: what a refused attempt must leave as it was. */
function snapshot(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .map((name) => {
      const info = statSync(join(dir, name));
      return `${name} ${info.size} ${info.mtimeMs}`;
    });
}

test('a second lock is refused at once, naming the holder and the flag, and writes nothing; release frees the dir', { timeout: 10_000 }, (t) => {
  const dataDir = join(tempDir(t), 'data');
  const since = Date.UTC(2026, 10, 25, 13, 10, 31);
  const lock = lockDataDir(dataDir, { flagHint: HINT, command: 'edgeport start --api-port 9081', now: () => since });
  t.after(() => lock.release());
  assert.deepEqual(readdirSync(dataDir).sort(), [LOCK_FILE, OWNER_FILE]);
  assert.equal(JSON.parse(readFileSync(join(dataDir, OWNER_FILE), 'utf8')).pid, process.pid);
  const before = snapshot(dataDir);
  assert.throws(
    () => lockDataDir(dataDir, { flagHint: HINT, now: () => since + 185_000 }),
    (error: Error & { code?: string }) => {
      assert.equal(error.code, 'CLI_DATA_DIR_IN_USE');
      assert.equal(
        error.message,
        `The data dir ${dataDir} is in use by another edgeport process: pid ${process.pid} (edgeport start --api-port 9081), ` +
          'running since 2026-11-25 13:10:31 UTC (3 min ago). Stop that one first, or give this one a data dir of its own: --data-dir DIR.',
      );
      return true;
    },
  );
  assert.deepEqual(snapshot(dataDir), before, 'the refused attempt changed nothing');
  lock.release();
  lock.release();
  assert.deepEqual(readdirSync(dataDir), [LOCK_FILE], 'the owner record goes with the lock');
  writeFileSync(join(dataDir, `${OWNER_FILE}.99999.tmp`), '{"pid":9');
  const again = lockDataDir(dataDir, { flagHint: HINT });
  assert.deepEqual(
    readdirSync(dataDir).sort(),
    [LOCK_FILE, OWNER_FILE],
    'a holder killed while writing its record left half of it; the next holder removes it',
  );
  again.release();
});

test('a data dir that cannot be made is CLI_DATA_DIR_UNUSABLE', { timeout: 5_000 }, (t) => {
  const file = join(tempDir(t), 'a-file');
  writeFileSync(file, 'x');
  assert.throws(() => lockDataDir(join(file, 'data'), { flagHint: HINT }), {
    code: 'CLI_DATA_DIR_UNUSABLE',
    message: /cannot be created: .*Pick another with --data-dir DIR\./,
  });
});

/** A process that takes the lock and holds it until killed; resolves once it holds it. */
async function holder(t: TestContext, dataDir: string): Promise<ReturnType<typeof spawn>> {
  const script = `
    import { lockDataDir } from ${JSON.stringify(new URL('../../src/cli/data-dir-lock.ts', import.meta.url).href)};
    lockDataDir(${JSON.stringify(dataDir)}, { flagHint: '--data-dir DIR', command: 'edgeport dev hello.toml' });
    process.stdout.write('locked\\n');
    setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.after(() => child.kill('SIGKILL'));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('locked')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the holder exited with ${code}`)));
  });
  return child;
}

test('a lock held by another process is refused until that process is killed (-9), then taken at once', { timeout: 30_000 }, async (t) => {
  const dataDir = join(tempDir(t), 'data');
  const child = await holder(t, dataDir);
  assert.throws(() => lockDataDir(dataDir, { flagHint: HINT }), {
    code: 'CLI_DATA_DIR_IN_USE',
    message: new RegExp(`in use by another edgeport process: pid ${child.pid} \\(edgeport dev hello\\.toml\\), running since `),
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
  const stale = JSON.parse(readFileSync(join(dataDir, OWNER_FILE), 'utf8'));
  assert.equal(stale.pid, child.pid, 'a killed holder leaves its record behind');
  const lock = lockDataDir(dataDir, { flagHint: HINT });
  t.after(() => lock.release());
  assert.equal(JSON.parse(readFileSync(join(dataDir, OWNER_FILE), 'utf8')).pid, process.pid, 'the new holder replaced it');
});

test('ages read as a person would say them', { timeout: 5_000 }, () => {
  assert.deepEqual([0, 12_400, 89_000, 95_000, 3_600_000, 5.2 * 3_600_000, 3 * 86_400_000].map(formatAge), [
    '0 s ago',
    '12 s ago',
    '89 s ago',
    '2 min ago',
    '60 min ago',
    '5 h ago',
    '3 days ago',
  ]);
});
