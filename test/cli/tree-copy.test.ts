/**
 * The copying under backup and restore: folders at any depth up to MAX_DEPTH, and no link followed
 * or written through, even one swapped in after a folder was opened or an entry was listed.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { NoFollowDir } from '../../src/cli/no-follow-dir.ts';
import { CopyReport, copyTree, MAX_DEPTH } from '../../src/cli/tree-copy.ts';
import { outsideFile } from '../helpers/outside-file.ts';
import { tempDir } from '../helpers/temp-dir.ts';

function open(t: Parameters<typeof tempDir>[0], path: string): NoFollowDir {
  mkdirSync(path, { recursive: true });
  const dir = NoFollowDir.openRoot(path);
  t.after(() => dir.close());
  return dir;
}

test(`folders are copied to a depth of ${MAX_DEPTH}; deeper ones are skipped and named`, { timeout: 30_000 }, (t) => {
  const from = join(tempDir(t), 'from');
  let path = from;
  for (let depth = 1; depth <= MAX_DEPTH + 5; depth++) {
    path = join(path, `d${depth}`);
    mkdirSync(path, { recursive: true });
    writeFileSync(join(path, 'file'), `at ${depth}`);
  }
  const to = join(tempDir(t), 'to');
  const report = new CopyReport();
  copyTree(open(t, from), open(t, to), { prefix: 'gateway', report, sync: false });
  const deepest = Array.from({ length: MAX_DEPTH - 1 }, (_, i) => `d${i + 1}`);
  assert.equal(readFileSync(join(to, ...deepest, 'file'), 'utf8'), `at ${MAX_DEPTH - 1}`);
  assert.deepEqual(report.skipped, [{ path: `gateway/${[...deepest, `d${MAX_DEPTH}`].join('/')}`, kind: 'folder nested too deep' }]);
  assert.equal(report.files, MAX_DEPTH - 1);
});

test('an entry replaced by a link after it was listed is not read: the copy answers what it is now', { timeout: 30_000 }, (t) => {
  const outside = outsideFile(tempDir(t));
  const from = join(tempDir(t), 'from');
  mkdirSync(from);
  writeFileSync(join(from, 'body'), 'a body');
  const source = open(t, from);
  const target = open(t, join(tempDir(t), 'to'));
  assert.equal(source.kind('body'), 'file');
  rmSync(join(from, 'body'));
  symlinkSync(outside.path, join(from, 'body'));
  assert.equal(source.copyFile('body', target, 'body', false), 'symbolic link');
  assert.deepEqual(readdirSync(target.path), [], 'nothing written');
  if (outside.readTracked) assert.equal(outside.read(), false);
});

test('a folder swapped for a link after it was opened is still the one read (Linux: through its descriptor), or refused', { timeout: 30_000 }, (t) => {
  const root = join(tempDir(t), 'root');
  mkdirSync(join(root, 'gateway'), { recursive: true });
  writeFileSync(join(root, 'gateway', 'journal'), 'the real journal');
  const elsewhere = join(tempDir(t), 'elsewhere');
  mkdirSync(elsewhere);
  writeFileSync(join(elsewhere, 'journal'), 'not this one');
  const gateway = open(t, root).sub('gateway')!;
  t.after(() => gateway.close());
  renameSync(join(root, 'gateway'), join(root, 'moved'));
  symlinkSync(elsewhere, join(root, 'gateway'));
  const target = open(t, join(tempDir(t), 'to'));
  const copy = () => copyTree(gateway, target, { prefix: 'gateway', report: new CopyReport(), sync: false });
  if (process.platform === 'linux') {
    copy();
    assert.equal(readFileSync(join(target.path, 'journal'), 'utf8'), 'the real journal');
  } else {
    // Without /proc, names go through the folder's path, which is checked to still be the folder opened.
    assert.throws(copy, /was replaced while it was being copied/);
  }
  assert.equal(open(t, root).sub('gateway'), null, 'a link is never opened as a folder');
});

test('a copy never writes over an existing name, a link there included', { timeout: 30_000 }, (t) => {
  const outside = outsideFile(tempDir(t));
  const from = join(tempDir(t), 'from');
  mkdirSync(from);
  writeFileSync(join(from, 'body'), 'a body');
  const to = join(tempDir(t), 'to');
  mkdirSync(to);
  symlinkSync(outside.path, join(to, 'body'));
  assert.throws(() => open(t, from).copyFile('body', open(t, to), 'body', false), { code: 'EEXIST' });
  assert.ok(outside.unchanged());
});
