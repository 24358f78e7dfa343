/**
 * `edgeport restore` on real directories: the backup is staged whole, then swapped in by renames
 * under a plan, so a restore that fails (or is killed with -9) at any step leaves the data dir's
 * previous data whole, and the next restore or start puts it back and removes the leftovers; a
 * restore that succeeds leaves no old file behind (an old SQLite journal beside the new database
 * would corrupt it). The backup is untrusted: a link in it is never followed, and a link in an
 * external blobs dir is never written through.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test, type TestContext } from 'node:test';
import { runRestore } from '../../src/cli/restore.ts';
import { recoverInterruptedRestore, swapIn } from '../../src/cli/restore-swap.ts';
import { LOCK_FILE, OWNER_FILE } from '../../src/cli/data-dir-lock.ts';
import { EdgeportError } from '../../src/core/errors/edgeport-error.ts';
import { filesHolding, outsideFile } from '../helpers/outside-file.ts';
import { tempDir } from '../helpers/temp-dir.ts';

/** Every entry under `root` but the data dir's lock, with its content (a link: its target), as one sorted map (what "unchanged" compares). */
function snapshot(root: string): Record<string, string> {
  const entries: Record<string, string> = {};
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (dir === root && (entry.name === LOCK_FILE || entry.name === OWNER_FILE)) continue;
      if (entry.isDirectory()) walk(path);
      else if (entry.isSymbolicLink()) entries[relative(root, path)] = `link to ${readlinkSync(path)}`;
      else entries[relative(root, path)] = readFileSync(path, 'utf8');
    }
  };
  walk(root);
  return Object.fromEntries(Object.entries(entries).sort(([a], [b]) => a.localeCompare(b)));
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

const RESTORED = {
  'blobs/body-1': 'new body 1',
  'blobs/body-2': 'new body 2',
  'gateway/sepolia.journal': 'new chain',
  'metadata.sqlite': 'new database',
};

function backupDir(t: TestContext): string {
  const dir = join(tempDir(t), 'backup');
  mkdirSync(join(dir, 'blobs'), { recursive: true });
  mkdirSync(join(dir, 'gateway'), { recursive: true });
  writeFileSync(
    join(dir, 'edgeport-backup.json'),
    JSON.stringify({ format: 1, version: '0.1.0', created: '2026-11-28T00:00:00.000Z', database: 'sqlite', blobs: true, objects: { blobFiles: 2, bytes: 16 } }),
  );
  writeFileSync(join(dir, 'metadata.sqlite'), 'new database');
  writeFileSync(join(dir, 'blobs', 'body-1'), 'new body 1');
  writeFileSync(join(dir, 'blobs', 'body-2'), 'new body 2');
  writeFileSync(join(dir, 'gateway', 'sepolia.journal'), 'new chain');
  return dir;
}

function configWithBlobsUrl(t: TestContext, blobsRoot: string): string {
  const file = join(tempDir(t), 'edgeport.toml');
  writeFileSync(file, `[blobs]\nurl = "file://${blobsRoot}"\n`);
  return file;
}

function rejectsWith(code: string, message: RegExp): (error: unknown) => boolean {
  return (error: unknown) => {
    assert.ok(error instanceof EdgeportError, String(error));
    assert.equal(error.code, code);
    assert.match(error.message, message);
    return true;
  };
}

test('a restore that fails part-way through copying leaves the data dir exactly as it was, and no staging behind', { timeout: 30_000 }, async (t) => {
  const dataDir = oldDataDir(t);
  const backup = backupDir(t);
  // Bodies kept outside the data dir, where a folder sits at the name of the backup's second body: it fails after the first was added.
  const blobsRoot = join(tempDir(t), 'shared');
  mkdirSync(join(blobsRoot, 'blobs', 'body-2'), { recursive: true });
  const before = snapshot(dataDir);
  await assert.rejects(
    runRestore({ dir: backup, config: configWithBlobsUrl(t, blobsRoot), dataDir, force: true }, () => {}),
    rejectsWith(
      'CLI_RESTORE_FAILED',
      /copying .*backup failed \(.*body-2 is a folder where the backup has a body: remove it.*\); .*data is unchanged\. Check the backup/,
    ),
  );
  assert.deepEqual(snapshot(dataDir), before, 'every old file is there with its content, and nothing else');
  // Only a body added (the old database refers to none of them), and the restore's temporary folder gone.
  assert.deepEqual(snapshot(blobsRoot), { 'blobs/body-1': 'new body 1' });
});

test('a restore with --force replaces every old file, journal and spool included, and leaves no staging behind', { timeout: 30_000 }, async (t) => {
  const dataDir = oldDataDir(t);
  const lines: string[] = [];
  await runRestore({ dir: backupDir(t), config: undefined, dataDir, force: true }, (line) => lines.push(line));
  assert.deepEqual(snapshot(dataDir), RESTORED);
  assert.deepEqual(lines, [`edgeport: restored the backup of 2026-11-28T00:00:00.000Z into ${dataDir}: the database, 2 body files. Start edgeport on it.`]);
});

test('a failure at any step of the swap puts the previous data back before it is reported', { timeout: 30_000 }, async (t) => {
  // present: blobs, metadata.sqlite, metadata.sqlite-wal, spool; staged: blobs, gateway, metadata.sqlite: 7 renames, then the commit.
  for (let failAt = 0; failAt <= 7; failAt++) {
    const dataDir = oldDataDir(t);
    const before = snapshot(dataDir);
    const staging = stage(dataDir, backupDir(t));
    await assert.rejects(
      swapIn(dataDir, staging, ['blobs', 'metadata.sqlite', 'metadata.sqlite-wal', 'spool'], (step) => {
        if (step === failAt) throw new Error(`injected failure before step ${step}`);
      }),
      /injected failure/,
    );
    assert.equal(await recoverInterruptedRestore(dataDir), false, 'nothing left to roll back: the failure rolled back');
    assert.deepEqual(snapshot(dataDir), before, `a failure before step ${failAt}`);
  }
});

test(
  'a restore killed (-9) at any step of the swap: the next start or restore puts the previous data back, and a restore then works',
  { timeout: 120_000 },
  async (t) => {
    const seen: string[] = [];
    for (let killAt = 0; killAt <= 7; killAt++) {
      const dataDir = oldDataDir(t);
      const before = snapshot(dataDir);
      const staging = stage(dataDir, backupDir(t));
      const signal = await swapAndDie(dataDir, staging, killAt);
      assert.equal(signal, 'SIGKILL');
      const entries = (dir: string) =>
        readdirSync(dir)
          .filter((name) => name !== LOCK_FILE && name !== OWNER_FILE)
          .sort()
          .join(' ');
      const replaced = readdirSync(dataDir).find((name) => name.startsWith('.restore-replaced-'));
      seen.push(
        `killed before rename ${killAt}: data dir [${entries(dataDir)}], staged [${entries(join(dataDir, staging))}], set aside [${replaced === undefined ? '' : entries(join(dataDir, replaced))}]`,
      );
      assert.equal(await recoverInterruptedRestore(dataDir), true, 'the plan was there: a swap to roll back');
      assert.deepEqual(snapshot(dataDir), before, `killed before step ${killAt}`);
    }
    for (const line of seen) t.diagnostic(line);
    // A plan left by a kill, found by the next restore itself.
    const dataDir = oldDataDir(t);
    await swapAndDie(dataDir, stage(dataDir, backupDir(t)), 5);
    const lines: string[] = [];
    await runRestore({ dir: backupDir(t), config: undefined, dataDir, force: true }, (line) => lines.push(line));
    assert.match(lines[0]!, /a restore into .* was cut short while swapping its data in: the previous data is back in place\./);
    assert.deepEqual(snapshot(dataDir), RESTORED);
  },
);

test('leftovers of a restore killed while copying are removed by the next one, and never count as data', { timeout: 30_000 }, async (t) => {
  const dataDir = join(tempDir(t), 'data');
  mkdirSync(join(dataDir, '.restore-staging-999999', 'blobs'), { recursive: true });
  writeFileSync(join(dataDir, '.restore-staging-999999', 'metadata.sqlite'), 'half copied');
  mkdirSync(join(dataDir, '.restore-replaced-999999'));
  writeFileSync(join(dataDir, '.restore-swap.json.tmp'), '{"format":');
  // Without --force: the leftovers are not "data already", so the restore goes ahead.
  await runRestore({ dir: backupDir(t), config: undefined, dataDir, force: false }, () => {});
  assert.deepEqual(snapshot(dataDir), RESTORED);
});

test('a hostile backup: links in it are skipped and named, never followed; fifos are skipped; nested folders are restored', { timeout: 30_000 }, async (t) => {
  const outside = outsideFile(tempDir(t));
  const backup = backupDir(t);
  symlinkSync(outside.path, join(backup, 'blobs', '0123456789abcdef0123456789abcdef'));
  symlinkSync(outside.path, join(backup, 'gateway', 'evil.chain.ndjson'));
  symlinkSync(join(outside.path, '..'), join(backup, 'gateway', 'outside-folder'));
  execFileSync('mkfifo', [join(backup, 'blobs', 'a-fifo')]);
  mkdirSync(join(backup, 'gateway', 'a', 'b', 'c'), { recursive: true });
  writeFileSync(join(backup, 'gateway', 'a', 'b', 'c', 'deep.ndjson'), 'nested');
  const dataDir = join(tempDir(t), 'data');
  const lines: string[] = [];
  await runRestore({ dir: backup, config: undefined, dataDir, force: false }, (line) => lines.push(line));
  for (const line of lines) t.diagnostic(line);
  assert.equal(
    lines[1],
    'edgeport: skipped 4 entries of the backup that are not files or folders (a link is never followed): ' +
      'blobs/0123456789abcdef0123456789abcdef (symbolic link), blobs/a-fifo (fifo), gateway/evil.chain.ndjson (symbolic link), gateway/outside-folder (symbolic link).',
  );
  assert.deepEqual(snapshot(dataDir), { ...RESTORED, 'gateway/a/b/c/deep.ndjson': 'nested' });
  assert.deepEqual(filesHolding(dataDir, outside.marker), []);
  if (outside.readTracked) assert.equal(outside.read(), false, 'the file a link pointed at was not read');
  else t.diagnostic('this file system records no reads (noatime): only the content check shows the outside file was not read');
  assert.ok(outside.unchanged());
});

test('a backup whose manifest or database is a link is refused before anything is copied', { timeout: 30_000 }, async (t) => {
  const outside = outsideFile(tempDir(t));
  const dataDir = oldDataDir(t);
  const before = snapshot(dataDir);
  const withLinkedDatabase = backupDir(t);
  const database = join(withLinkedDatabase, 'metadata.sqlite');
  execFileSync('rm', [database]);
  symlinkSync(outside.path, database);
  await assert.rejects(
    runRestore({ dir: withLinkedDatabase, config: undefined, dataDir, force: true }, () => {}),
    rejectsWith('CLI_BACKUP_INVALID', /metadata\.sqlite is a symbolic link, not a file: this is not a backup made by edgeport backup, or it was damaged\./),
  );
  const withLinkedManifest = backupDir(t);
  const manifest = join(withLinkedManifest, 'edgeport-backup.json');
  writeFileSync(outside.path + '.json', readFileSync(manifest));
  execFileSync('rm', [manifest]);
  symlinkSync(outside.path + '.json', manifest);
  await assert.rejects(
    runRestore({ dir: withLinkedManifest, config: undefined, dataDir, force: true }, () => {}),
    rejectsWith('CLI_BACKUP_INVALID', /is not a backup made by edgeport backup \(edgeport-backup\.json: a symbolic link, not a file\)/),
  );
  assert.deepEqual(snapshot(dataDir), before);
  if (outside.readTracked) assert.equal(outside.read(), false);
  assert.ok(outside.unchanged());
});

test(
  "an external blobs dir: a link at a body's name is replaced, never written through; a linked blobs/ or tmp/ is refused",
  { timeout: 30_000 },
  async (t) => {
    const outside = outsideFile(tempDir(t));
    const blobsRoot = join(tempDir(t), 'shared');
    mkdirSync(join(blobsRoot, 'blobs'), { recursive: true });
    symlinkSync(outside.path, join(blobsRoot, 'blobs', 'body-1'));
    writeFileSync(join(blobsRoot, 'blobs', 'body-2'), 'new body 2');
    writeFileSync(join(blobsRoot, 'blobs', 'another-instances-body'), 'kept');
    const dataDir = join(tempDir(t), 'data');
    const lines: string[] = [];
    await runRestore({ dir: backupDir(t), config: configWithBlobsUrl(t, blobsRoot), dataDir, force: false }, (line) => lines.push(line));
    for (const line of lines) t.diagnostic(line);
    assert.equal(
      lines[0],
      `edgeport: restored the backup of 2026-11-28T00:00:00.000Z into ${dataDir}: the database, 1 body files (1 more were in ${blobsRoot}/blobs already). Start edgeport on it.`,
    );
    assert.equal(
      lines[1],
      `edgeport: replaced 1 links or other non-files in ${blobsRoot}/blobs by the backup's bodies (nothing was written through them): ${blobsRoot}/blobs/body-1.`,
    );
    assert.deepEqual(snapshot(blobsRoot), { 'blobs/another-instances-body': 'kept', 'blobs/body-1': 'new body 1', 'blobs/body-2': 'new body 2' });
    assert.deepEqual(snapshot(dataDir), { 'gateway/sepolia.journal': 'new chain', 'metadata.sqlite': 'new database' });
    assert.ok(outside.unchanged(), 'the file the link pointed at was not written');
    if (outside.readTracked) assert.equal(outside.read(), false);

    // blobs/ itself a link to a folder elsewhere: refused, with what to do; nothing written there.
    for (const linked of ['blobs', 'tmp']) {
      const elsewhere = join(tempDir(t), 'elsewhere');
      mkdirSync(elsewhere);
      const root = join(tempDir(t), 'shared');
      mkdirSync(root);
      if (linked === 'tmp') mkdirSync(join(root, 'blobs'));
      symlinkSync(elsewhere, join(root, linked));
      const target = oldDataDir(t);
      const before = snapshot(target);
      await assert.rejects(
        runRestore({ dir: backupDir(t), config: configWithBlobsUrl(t, root), dataDir: target, force: true }, () => {}),
        rejectsWith(
          'CLI_RESTORE_FAILED',
          new RegExp(
            `${linked} is a symbolic link, not a folder, and a restore writes nothing through one: make it a folder \\(or point \\[blobs\\] url at the folder it stands for\\), then run the restore again\\. The data dir is unchanged\\.`,
          ),
        ),
      );
      assert.deepEqual(readdirSync(elsewhere), [], `nothing written through ${linked}/`);
      assert.deepEqual(snapshot(target), before);
    }
  },
);

/** Copies a backup into a staging folder of `dataDir`, as a restore does before its swap; answers the folder's name. */
function stage(dataDir: string, backup: string): string {
  const staging = '.restore-staging-4242';
  mkdirSync(join(dataDir, staging));
  execFileSync('cp', ['-R', join(backup, 'blobs'), join(backup, 'gateway'), join(backup, 'metadata.sqlite'), join(dataDir, staging)]);
  return staging;
}

/** Runs the swap in a process of its own that kills itself (-9) before rename step `killAt`; resolves with the signal that ended it. */
async function swapAndDie(dataDir: string, staging: string, killAt: number): Promise<NodeJS.Signals | null> {
  const script = `
    import { swapIn } from ${JSON.stringify(new URL('../../src/cli/restore-swap.ts', import.meta.url).href)};
    await swapIn(${JSON.stringify(dataDir)}, ${JSON.stringify(staging)}, ['blobs', 'metadata.sqlite', 'metadata.sqlite-wal', 'spool'], (step) => {
      if (step === ${killAt}) process.kill(process.pid, 'SIGKILL');
    });`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'ignore', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (_code, signal) => resolve(signal));
  });
}

test('the swap leaves nothing of its own behind once done', { timeout: 30_000 }, async (t) => {
  const dataDir = oldDataDir(t);
  await swapIn(dataDir, stage(dataDir, backupDir(t)), ['blobs', 'metadata.sqlite', 'metadata.sqlite-wal', 'spool']);
  assert.deepEqual(readdirSync(dataDir).sort(), ['blobs', 'gateway', 'metadata.sqlite']);
  assert.ok(lstatSync(join(dataDir, 'blobs')).isDirectory());
});

test('the log-files folder (the default root of file:// log jobs) is no data to replace: a restore leaves it as it is', { timeout: 30_000 }, async (t) => {
  const dataDir = join(tempDir(t), 'data');
  mkdirSync(join(dataDir, 'log-files', 'tour', '20261128'), { recursive: true });
  writeFileSync(join(dataDir, 'log-files', 'tour', '20261128', 'batch.log.gz'), 'delivered lines');
  // Without --force: a data dir holding only delivered log files holds no data a restore replaces.
  await runRestore({ dir: backupDir(t), config: undefined, dataDir, force: false }, () => {});
  assert.deepEqual(snapshot(dataDir), {
    'blobs/body-1': 'new body 1',
    'blobs/body-2': 'new body 2',
    'gateway/sepolia.journal': 'new chain',
    'log-files/tour/20261128/batch.log.gz': 'delivered lines',
    'metadata.sqlite': 'new database',
  });
});
