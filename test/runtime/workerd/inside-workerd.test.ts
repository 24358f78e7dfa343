/**
 * The code edgeport runs inside workerd, in the isolate of the script it serves, uses only what
 * that isolate has: each module of src/runtime/workerd/inside/, bundled as workerd-host.ts bundles
 * it, refers to no Node.js global (Buffer, process, require...) and imports no node:* module; and
 * every source file in those bundles is under the lint rule that keeps them out (eslint.config.js),
 * whose list of globals this check uses. A fixture that breaks both rules shows the check finds it.
 */
import assert from 'node:assert/strict';
import { readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ESLint, Linter } from 'eslint';
import { bundleWithInputs, type Bundle } from '../../../src/runtime/workerd/bundle.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const INSIDE = join(ROOT, 'src/runtime/workerd/inside');
const INSIDE_MODULES = readdirSync(INSIDE)
  .filter((file) => file.endsWith('.ts'))
  .map((file) => join(INSIDE, file));

type RestrictedGlobal = string | { name: string; message?: string };

/** The globals no-restricted-globals forbids in `file` under eslint.config.js (none when the rule is off there). */
async function restrictedGlobals(eslint: ESLint, file: string): Promise<string[]> {
  const config = (await eslint.calculateConfigForFile(file)) as { rules?: Record<string, unknown> };
  const setting = config.rules?.['no-restricted-globals'];
  if (!Array.isArray(setting) || setting[0] === 0 || setting[0] === 'off') return [];
  return (setting.slice(1) as RestrictedGlobal[]).map((entry) => (typeof entry === 'string' ? entry : entry.name)).sort();
}

/** What in `bundle` a script's isolate lacks: free references to `globals` (shadowed names are fine), and node:* imports. */
function problems(bundle: Bundle, globals: string[]): string[] {
  const linter = new Linter({ configType: 'flat' });
  const messages = linter.verify(bundle.code, [
    {
      languageOptions: { ecmaVersion: 'latest', sourceType: 'module' },
      rules: { 'no-restricted-globals': ['error', ...globals] },
    },
  ]);
  return [
    ...messages.map((message) => `${message.line}:${message.column} ${message.message}`),
    ...bundle.externalImports.filter((path) => path.startsWith('node:')).map((path) => `imports ${path}`),
  ];
}

test(
  "edgeport's modules inside workerd refer to no Node.js global and import no node:* module; every file in them is linted for it",
  { timeout: 60_000 },
  async () => {
    const eslint = new ESLint({ cwd: ROOT });
    const globals = await restrictedGlobals(eslint, join(INSIDE, 'store-binding.ts'));
    assert.deepEqual(globals, ['Buffer', '__dirname', '__filename', 'clearImmediate', 'exports', 'global', 'module', 'process', 'require', 'setImmediate']);
    assert.ok(INSIDE_MODULES.length >= 2, `found ${INSIDE_MODULES.join(', ')}`);
    for (const module of INSIDE_MODULES) {
      const bundle = await bundleWithInputs(module);
      assert.deepEqual(problems(bundle, globals), [], module);
      for (const input of bundle.inputs.filter((path) => !path.includes('node_modules/'))) {
        assert.deepEqual(
          await restrictedGlobals(eslint, resolve(input)),
          globals,
          `${input} (bundled into ${module}) is under eslint.config.js's INSIDE_WORKERD rule`,
        );
      }
    }
  },
);

test('the check finds a Node.js global and a node:* import in a bundle, and leaves a shadowed name alone', { timeout: 60_000 }, async (t) => {
  const dir = tempDir(t);
  const helper = join(dir, 'helper.ts');
  writeFileSync(helper, "export const encoded = (text: string) => Buffer.from(text).toString('hex');\n");
  const entry = join(dir, 'entry.ts');
  writeFileSync(
    entry,
    [
      "import { readFileSync } from 'node:fs';",
      "import { encoded } from './helper.ts';",
      'export default function make(process: unknown) { return [encoded("x"), readFileSync, process, typeof setImmediate]; }',
    ].join('\n'),
  );
  const bundle = await bundleWithInputs(entry);
  const found = problems(bundle, ['Buffer', 'process', 'setImmediate']);
  assert.equal(found.filter((line) => /Unexpected use of 'Buffer'/.test(line)).length, 1, found.join('\n'));
  assert.equal(found.filter((line) => /Unexpected use of 'setImmediate'/.test(line)).length, 1, found.join('\n'));
  assert.ok(found.includes('imports node:fs'), found.join('\n'));
  assert.equal(found.length, 3, `a parameter named process is not the global: ${found.join('\n')}`);
});
