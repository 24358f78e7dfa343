/** The server bundle is used only while every source it was built from is unchanged, and resolves paths as its sources do. */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { buildServer } from '../../bin/build-server.ts';
import { freshBundle, MANIFEST_FILE } from '../../bin/server-bundle.js';
import { tempDir } from '../helpers/temp-dir.ts';

test('a bundle is fresh until a source changes, moves or goes, and its import.meta.url names each source', { timeout: 30_000 }, async (t) => {
  const root = `${tempDir(t)}/`;
  const dist = join(root, 'dist');
  mkdirSync(join(root, 'src', 'cli'), { recursive: true });
  mkdirSync(join(root, 'src', 'core'), { recursive: true });
  writeFileSync(
    join(root, 'src', 'cli', 'main.ts'),
    "import { here } from '../core/here.ts';\n" +
      "console.log(here(), new URL('.', import.meta.url).pathname, process.argv[2] === 'late' ? (await import('../core/late.ts')).late : '');\n",
  );
  writeFileSync(join(root, 'src', 'core', 'late.ts'), "export const late = 'imported late from ' + new URL('.', import.meta.url).pathname;\n");
  writeFileSync(join(root, 'src', 'core', 'here.ts'), "export const here = (): string => new URL('.', import.meta.url).pathname;\n");

  assert.equal(freshBundle(root, dist), null, 'nothing built yet');
  assert.equal(await buildServer(root, dist), 3);
  const bundle = freshBundle(root, dist);
  assert.match(bundle!, /\/dist\/server-[^/]+\/edgeport\.mjs$/);
  assert.equal(execFileSync(process.execPath, [bundle!], { encoding: 'utf8' }).trim(), `${join(root, 'src', 'core')}/ ${join(root, 'src', 'cli')}/`);
  assert.doesNotMatch(readFileSync(bundle!, 'utf8'), /imported late/, 'a module imported with import() is a chunk of its own, loaded when it is needed');
  assert.equal(
    execFileSync(process.execPath, [bundle!, 'late'], { encoding: 'utf8' }).trim(),
    `${join(root, 'src', 'core')}/ ${join(root, 'src', 'cli')}/ imported late from ${join(root, 'src', 'core')}/`,
  );

  writeFileSync(join(root, 'src', 'core', 'here.ts'), "export const here = (): string => 'edited: import.meta.url';\n");
  assert.equal(freshBundle(root, dist), null, 'a source edited');
  await buildServer(root, dist);
  assert.notEqual(freshBundle(root, dist), null, 'rebuilt');
  assert.match(
    execFileSync(process.execPath, [freshBundle(root, dist)!], { encoding: 'utf8' }),
    /^edited: import\.meta\.url /,
    'text that mentions import.meta.url is left as it is',
  );
  const later = new Date(Date.now() + 60_000);
  utimesSync(join(root, 'src', 'cli', 'main.ts'), later, later);
  assert.equal(freshBundle(root, dist), null, 'a source touched (a checkout, say) is not trusted');

  const buildNamed = () => (JSON.parse(readFileSync(join(dist, MANIFEST_FILE), 'utf8')) as { build: string }).build;
  const second = buildNamed();
  await buildServer(root, dist);
  assert.deepEqual(
    readdirSync(dist)
      .filter((entry) => entry.startsWith('server-'))
      .sort(),
    [second, buildNamed()].sort(),
    'the build before is kept for a server still running it, older ones are removed',
  );
  const manifest = readFileSync(join(dist, MANIFEST_FILE), 'utf8');
  assert.equal(freshBundle(`${root}moved/`, dist), null, 'built for another directory');
  rmSync(join(root, 'src', 'core', 'here.ts'));
  assert.equal(freshBundle(root, dist), null, 'a source removed');
  writeFileSync(join(dist, MANIFEST_FILE), manifest.slice(0, 20));
  assert.equal(freshBundle(root, dist), null, 'a manifest cut short');
});
