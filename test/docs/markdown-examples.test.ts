/** The docs-examples parser: which block is what, and the output matcher. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { outputMismatch, parseExamples } from './markdown-examples.ts';

test('blocks are told apart by their language and the directive right before them', { timeout: 10_000 }, () => {
  const doc = [
    '# Title',
    '',
    '```sh',
    'echo hi',
    '```',
    '',
    '<!-- output -->',
    '```',
    'hi',
    '```',
    'The script, `hello.mjs`:',
    '<!-- file: hello.mjs -->',
    '',
    '```js',
    'export default {};',
    '```',
    '```sh',
    'node hello.mjs',
    '```',
    '<!-- config -->',
    '```toml',
    'host = "127.0.0.1"',
    '```',
    '<!-- not run: installs packages -->',
    '```sh',
    'npm install',
    '```',
    '```text',
    'a picture',
    '```',
    '- a list',
    '  ```bash',
    '  ls',
    '  ```',
  ].join('\n');
  assert.deepEqual(
    parseExamples(doc, 'x.md').map((e) => [e.line, e.what, e.code]),
    [
      [3, { kind: 'shell' }, 'echo hi\n'],
      [8, { kind: 'output' }, 'hi\n'],
      [14, { kind: 'file', name: 'hello.mjs' }, 'export default {};\n'],
      [17, { kind: 'shell' }, 'node hello.mjs\n'],
      [21, { kind: 'config' }, 'host = "127.0.0.1"\n'],
      [25, { kind: 'not-run', why: 'installs packages' }, 'npm install\n'],
      [28, { kind: 'illustration' }, 'a picture\n'],
      [32, { kind: 'shell' }, 'ls\n'],
    ],
  );
});

test('a config or program block that says nothing, or a fence never closed, is refused with its line', { timeout: 10_000 }, () => {
  assert.throws(() => parseExamples('text\n\n```toml\na = 1\n```\n', 'x.md'), /x\.md:3: a toml block must say what it is/);
  assert.throws(() => parseExamples('```sh\nls\n', 'x.md'), /x\.md:1: a fenced block is never closed/);
  assert.throws(() => parseExamples('<!-- config -->\n```sh\nls\n```\n', 'x.md'), /<!-- config --> goes before a toml block/);
  // A program says where it is saved, and the page says so in words too (the comment does not show).
  for (const language of ['js', 'mjs', 'ts']) {
    assert.throws(() => parseExamples(`Run this:\n\n\`\`\`${language}\nconsole.log(1);\n\`\`\`\n`, 'x.md'), /x\.md:3: a program must say where it is saved/);
  }
  assert.throws(
    () => parseExamples('A program:\n<!-- file: a.mjs -->\n```js\n1;\n```\n', 'x.md'),
    /x\.md:3: the text before the block must name its file, `a\.mjs`/,
  );
  assert.throws(
    () => parseExamples('Save `a.mjs`:\n```sh\nls\n```\n<!-- file: a.mjs -->\n```js\n1;\n```\n', 'x.md'),
    /x\.md:6: the text before the block must name its file/,
    'the name must be in the text since the previous block',
  );
  // A directive applies only to the block right after it, blank lines aside.
  assert.deepEqual(parseExamples('<!-- not run: x -->\nprose\n```sh\nls\n```\n', 'x.md')[0]!.what, { kind: 'shell' });
});

test('any block contents (without a fence) come back as written', { timeout: 10_000 }, () => {
  const line = fc.string({ unit: fc.constantFrom('a', 'b', ' ', '$', '…', '`', '-', '<', '>') }).filter((l) => !/^\s*`{3}/.test(l));
  fc.assert(
    fc.property(fc.array(fc.array(line, { maxLength: 5 }), { minLength: 1, maxLength: 5 }), (blocks) => {
      const doc = blocks.map((lines) => ['```sh', ...lines, '```', ''].join('\n')).join('\n');
      assert.deepEqual(
        parseExamples(doc, 'p.md').map((e) => e.code),
        blocks.map((lines) => `${[...lines, ''].join('\n')}`),
      );
    }),
  );
});

test('output: line by line, … standing for any run of characters', { timeout: 10_000 }, () => {
  assert.equal(outputMismatch('{"id":"…","ok":true}\ndone\n', '{"id":"a1b2","ok":true}\ndone\n'), null);
  assert.match(outputMismatch('a\nb\n', 'a\n')!, /expected 2 lines, got 1/);
  assert.match(outputMismatch('x…z\n', 'xyy\n')!, /line 1: expected "x…z", got "xyy"/);
  assert.equal(outputMismatch('a.b (c)\n', 'a.b (c)\n'), null, 'other characters are literal');
  assert.notEqual(outputMismatch('a.b\n', 'axb\n'), null);
});
