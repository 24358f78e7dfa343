/**
 * `edgeport restore` on real directories: the backup is staged whole before the old data is
 * replaced, so a backup that cannot be copied leaves the data dir byte for byte as it was, and a
 * restore that succeeds leaves no old file behind (an old SQLite journal beside the new database
 * would corrupt it) and no staging directory.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test, type TestContext } from 'node:test';
import { runRestore } from '../../src/cli/restore.ts';
import { LOCK_FILE, OWNER_FILE } from '../../src/cli/data-dir-lock.ts';
import { EdgeportError } from '../../src/core/errors/edgeport-error.ts';
import { tempDir } from '../helpers/temp-dir.ts';

/** Every file under `root` but the data dir's lock, with its content, as one sorted map (what "unchanged" compares). */
function snapshot(root: string): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (dir === root && (entry.name === LOCK_FILE || entry.name === OWNER_FILE)) continue;
      if (entry.isDirectory()) walk(path);
      else files[relative(root, path)] = readFileSync(path, 'utf8');
    }
  };
  walk(root);
  return Object.fromEntries(Object.entries(files).sort(([a], [b]) => a.localeCompare(b)));
}

function oldDataDir(t: TestContext): string {
  const dataDir = join(tempDir(t), 'data');
  mkdirSync(join(dataDir, 'blobs'), { recursive: true });
  mkdirSync(join(dataDir, 'spool'), { recursive: true });
  writeFileSync(join(dataDir, 'metadata.sqlite'), 'old database');
  writeFileSync(join(dataDir, 'metadata.sqlite-wal'), 'old journal');
  writeFileSync(join(dataDir, 'blobs', 'old-body'), 'old body');
  writeFileSync(join(dataDir, 'spool', 'segment'), 'old lines');
  return dataDir;
}

function backupDir(t: TestContext): string {
  const dir = join(tempDir(t), 'backup');
  mkdirSync(join(dir, 'blobs'), { recursive: true });
  mkdirSync(join(dir, 'gateway'), { recursive: true });
  writeFileSync(join(dir, 'edgeport-backup.json'), JSON.stringify({ format: 1, version: '0.1.0', created: '2026-11-28T00:00:00.000Z', database: 'sqlite', blobs: true, objects: { blobFiles: 2, bytes: 16 } }));
  writeFileSync(join(dir, 'metadata.sqlite'), 'new database');
  writeFileSync(join(dir, 'blobs', 'body-1'), 'new body 1');
  writeFileSync(join(dir, 'blobs', 'body-2'), 'new body 2');
  writeFileSync(join(dir, 'gateway', 'sepolia.journal'), 'new chain');
  return dir;
}

test('a backup that cannot be copied whole leaves the data dir exactly as it was', { timeout: 30_000 }, async (t) => {
  const dataDir = oldDataDir(t);
  const backup = backupDir(t);
  // A damaged backup: one "body" is a directory, so copying it fails after others were copied.
  mkdirSync(join(backup, 'blobs', 'body-3'));
  const before = snapshot(dataDir);
  await assert.rejects(runRestore({ dir: backup, config: undefined, dataDir, force: true }, () => {}), (error: unknown) => {
    assert.ok(error instanceof EdgeportError);
    assert.equal(error.code, 'CLI_RESTORE_FAILED');
    assert.match(error.message, /copying .*backup failed \(.*\); .*data is unchanged\. Check the backup and the free space/);
    return true;
  });
  assert.deepEqual(snapshot(dataDir), before, 'every old file is there with its content, and nothing else');
});

test('a restore with --force replaces every old file, journal and spool included, and leaves no staging behind', { timeout: 30_000 }, async (t) => {
  const dataDir = oldDataDir(t);
  const lines: string[] = [];
  await runRestore({ dir: backupDir(t), config: undefined, dataDir, force: true }, (line) => lines.push(line));
  assert.deepEqual(snapshot(dataDir), {
    'blobs/body-1': 'new body 1',
    'blobs/body-2': 'new body 2',
    'gateway/sepolia.journal': 'new chain',
    'metadata.sqlite': 'new database',
  });
  assert.match(lines[0]!, /restored the backup of 2026-11-28T00:00:00.000Z into .*data: the database, 2 body files\./);
});

test('leftovers of a restore that was killed are removed by the next one, and never count as data', { timeout: 30_000 }, async (t) => {
  const dataDir = join(tempDir(t), 'data');
  mkdirSync(join(dataDir, '.restore-staging-999999', 'blobs'), { recursive: true });
  writeFileSync(join(dataDir, '.restore-staging-999999', 'metadata.sqlite'), 'half copied');
  mkdirSync(join(dataDir, '.restore-replaced-999999'));
  // Without --force: the leftovers are not "data already", so the restore goes ahead.
  await runRestore({ dir: backupDir(t), config: undefined, dataDir, force: false }, () => {});
  assert.deepEqual(Object.keys(snapshot(dataDir)), ['blobs/body-1', 'blobs/body-2', 'gateway/sepolia.journal', 'metadata.sqlite']);
});
