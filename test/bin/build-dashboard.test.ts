/** `npm start` rebuilds the dashboard only when its sources (contents, not mtimes) or the build tools changed. */
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { buildIfChanged } from '../../bin/build-dashboard.ts';
import { tempDir } from '../helpers/temp-dir.ts';

test('the dashboard is built when web/dist is missing or its sources changed, and only then', { timeout: 10_000 }, async (t) => {
  const web = tempDir(t);
  mkdirSync(join(web, 'src', 'pages'), { recursive: true });
  writeFileSync(join(web, 'index.html'), '<div id="app"></div>');
  writeFileSync(join(web, 'vite.config.ts'), 'export default {};');
  writeFileSync(join(web, 'src', 'main.tsx'), 'render();');
  writeFileSync(join(web, 'src', 'pages', 'zones.tsx'), 'export const Zones = 1;');
  let builds = 0;
  const build = async () => {
    builds += 1;
    mkdirSync(join(web, 'dist'), { recursive: true });
    writeFileSync(join(web, 'dist', 'index.html'), `build ${builds}`);
  };
  const run = (tools = 'vite@8 preact@11') => buildIfChanged(web, build, tools);

  assert.equal(await run(), true, 'no web/dist yet');
  assert.equal(await run(), false, 'nothing changed');
  const later = new Date(Date.now() + 60_000);
  utimesSync(join(web, 'src', 'main.tsx'), later, later);
  assert.equal(await run(), false, 'a newer mtime alone is no change');
  writeFileSync(join(web, 'src', 'pages', 'zones.tsx'), 'export const Zones = 2;');
  assert.equal(await run(), true, 'a source file changed');
  writeFileSync(join(web, 'src', 'pages', 'keys.tsx'), 'export const Keys = 1;');
  assert.equal(await run(), true, 'a source file was added');
  writeFileSync(join(web, 'index.html'), '<div id="root"></div>');
  assert.equal(await run(), true, 'index.html changed');
  assert.equal(await run('vite@9 preact@11'), true, 'the build tools changed');
  rmSync(join(web, 'dist', 'index.html'));
  assert.equal(await run('vite@9 preact@11'), true, 'the build output is gone');
  assert.equal(builds, 6);
  assert.equal(await buildIfChanged(web, build, 'vite@9 preact@11', { force: true }), true, 'npm run build builds anyway');
  assert.equal(await run('vite@9 preact@11'), false, 'and leaves a current stamp');

  writeFileSync(join(web, 'src', 'main.tsx'), 'render(2);');
  await assert.rejects(
    buildIfChanged(
      web,
      async () => {
        throw new Error('vite failed');
      },
      'vite@9 preact@11',
    ),
    /vite failed/,
  );
  assert.equal(await run('vite@9 preact@11'), true, 'a failed build is tried again next time');
});
