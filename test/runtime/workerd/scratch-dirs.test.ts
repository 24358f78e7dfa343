/**
 * workerd hosts' scratch directories: a process removes its own at exit even when it crashes, and
 * a start removes those whose owner process is gone, never a running process's or one without an
 * owner file.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { makeScratchDir, removeStaleScratchDirs } from '../../../src/runtime/workerd/scratch-dirs.ts';
import { exitOf, spawnNode } from '../../helpers/child-processes.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

const MODULE = fileURLToPath(new URL('../../../src/runtime/workerd/scratch-dirs.ts', import.meta.url));

/** The pid of a process that has exited. */
async function deadPid(): Promise<number> {
  const child = spawnNode(['-e', '']);
  await exitOf(child);
  return child.pid!;
}

test('a start removes scratch directories whose owner is gone, and no others', { timeout: 30_000 }, async (t) => {
  const root = tempDir(t);
  const make = (name: string, owner?: number): string => {
    const path = join(root, name);
    mkdirSync(path);
    writeFileSync(join(path, 'config.capnp'), 'x');
    if (owner !== undefined) writeFileSync(join(path, 'owner.pid'), `${owner}\n`);
    return path;
  };
  const stale = make('edgeport-workerd-stale', await deadPid());
  const live = make('edgeport-workerd-live', process.ppid);
  const own = make('edgeport-workerd-own', process.pid);
  const unowned = make('edgeport-workerd-unowned');
  const other = make('not-edgeport', await deadPid());
  assert.deepEqual(await removeStaleScratchDirs(root), [stale]);
  assert.deepEqual([stale, live, own, unowned, other].map(existsSync), [false, true, true, true, true]);
  // makeScratchDir sweeps too, and marks its own directory.
  const next = await makeScratchDir(root);
  assert.equal(Number(await import('node:fs/promises').then((fs) => fs.readFile(join(next.path, 'owner.pid'), 'utf8'))), process.pid);
  await next.remove();
  assert.equal(existsSync(next.path), false);
});

test('a process that crashes (an uncaught exception) or exits removes its scratch directories', { timeout: 30_000 }, async (t) => {
  const root = tempDir(t);
  for (const ending of ['throw new Error("crash")', 'process.exit(3)']) {
    const child = spawnNode([
      '--import',
      'tsx',
      '-e',
      `
      const { makeScratchDir } = await import(${JSON.stringify(MODULE)});
      const dir = await makeScratchDir(${JSON.stringify(root)});
      console.log(dir.path);
      ${ending};
    `,
      '--input-type=module',
    ]);
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    const code = await exitOf(child);
    assert.notEqual(code, 0, ending);
    const path = out.trim();
    assert.match(path, /edgeport-workerd-/, `${ending}: ${out}`);
    assert.equal(existsSync(path), false, `${ending}: ${path} is gone`);
  }
});
