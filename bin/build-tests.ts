/**
 * Builds the test files for `npm run test:unit` and `npm run test:postgres`: each test/**\/*.test.ts
 * and what it imports bundled into dist/tests/ (same tree, `.mjs`; bundle-tree.ts). A test
 * process then loads a few chunks instead of resolving and transforming a few hundred TypeScript
 * modules through tsx, which was most of the CPU of a short test file. The tests are the same code:
 * each source's `import.meta.url` stays its own, so fixtures, helpers a test spawns with
 * `--import tsx`, worker boot files and web/dist are found where they are.
 * Run: `node --import tsx bin/build-tests.ts`; prints nothing unless the build fails.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleTree } from './bundle-tree.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const entries = (await readdir(join(ROOT, 'test'), { recursive: true })).filter((path) => path.endsWith('.test.ts')).map((path) => join(ROOT, 'test', path));
await bundleTree({ root: ROOT, entries, outbase: join(ROOT, 'test'), outDir: join(ROOT, 'dist', 'tests') });
