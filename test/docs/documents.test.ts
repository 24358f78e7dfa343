/** Every user document is run by the docs-examples test (the README links it), and the README stays a front door. */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { readingOrder } from './documents.ts';
import { ROOT } from './example-session.ts';

const DOCUMENTS = readingOrder(readFileSync(`${ROOT}/README.md`, 'utf8'));

test("the README links every Markdown document in docs/, so the docs test (in the README's order) runs each", { timeout: 10_000 }, () => {
  const present = [
    'README.md',
    ...readdirSync(`${ROOT}/docs`)
      .filter((name) => name.endsWith('.md'))
      .map((name) => `docs/${name}`),
  ];
  assert.deepEqual([...DOCUMENTS].sort(), present.sort());
});

test('the README is short, and no document points at material users do not have', { timeout: 10_000 }, () => {
  assert.ok(readFileSync(`${ROOT}/README.md`, 'utf8').split('\n').length <= 310, 'README.md is at most 310 lines');
  for (const document of DOCUMENTS) {
    const text = readFileSync(`${ROOT}/${document}`, 'utf8');
    for (const outside of [/SPEC\.md|DESIGN\.md|STYLE\.md/, /shared\/reference/, /\bissue \d+\b/i, /\bstop \d+\b/]) {
      assert.doesNotMatch(text, outside, `${document} names ${outside}`);
    }
  }
});

test('relative links between documents lead to documents that exist', { timeout: 10_000 }, () => {
  for (const document of DOCUMENTS) {
    const text = readFileSync(`${ROOT}/${document}`, 'utf8');
    const base = document.includes('/') ? document.slice(0, document.lastIndexOf('/') + 1) : '';
    for (const [, target] of text.matchAll(/\]\(([^)#:\s]+\.md)(?:#[^)]*)?\)/g)) {
      const path = new URL(target!, `file://${ROOT}/${base}`).pathname;
      assert.doesNotThrow(() => readFileSync(path), `${document} links to ${target}, which does not exist`);
    }
  }
});

test('no file of the repository cites, reads or needs material outside it (the design notes, the spec, ../shared)', { timeout: 10_000 }, () => {
  const tracked = execFileSync(
    'git',
    ['ls-files', '-co', '--exclude-standard', 'src', 'test', 'web/src', 'bench', 'bin', '.ci', 'eslint.config.js', 'package.json'],
    { cwd: ROOT, encoding: 'utf8' },
  )
    .split('\n')
    .filter((path) => path !== '' && path !== 'test/docs/documents.test.ts');
  assert.ok(tracked.length > 100, `found ${tracked.length} files`);
  const outside = [/\bSPEC(\.md|\s*§)/, /\bDESIGN\.md/, /\bSTYLE\.md/, /shared\/reference/, /\breference (\S+\.md )?§/, /\.\.\/shared\b/, /\/work\/shared\b/];
  for (const path of tracked) {
    const text = readFileSync(`${ROOT}/${path}`, 'utf8');
    for (const pattern of outside) assert.doesNotMatch(text, pattern, `${path} names ${pattern}`);
  }
});
