/**
 * Builds the test files for `npm run test:unit` and `npm run test:postgres`: each test/**\/*.test.ts
 * and what it imports (sources, helpers) bundled with esbuild into dist/tests/ (same tree, `.mjs`;
 * code shared between files in chunks), packages left as imports, with source maps. A test
 * process then loads a few chunks instead of resolving and transforming a few hundred TypeScript
 * modules through tsx, which was most of the CPU of a short test file. The tests are the same code:
 * each source's `import.meta.url` stays its own (source-urls.ts), so fixtures, helpers a test
 * spawns with `--import tsx`, worker boot files and web/dist are found where they are.
 * Run: `node --import tsx bin/build-tests.ts`; prints nothing unless the build fails.
 */
import { readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { sourceUrlOptions } from './source-urls.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Where the built tests go (the scripts in package.json run them from there). */
const TESTS_OUT = join(ROOT, 'dist', 'tests');

/** Builds every test file under `root`/test into `outDir`, replacing what was there. */
async function buildTests(root: string, outDir: string): Promise<void> {
  const entries = (await readdir(join(root, 'test'), { recursive: true }))
    .filter((path) => path.endsWith('.test.ts'))
    .map((path) => join(root, 'test', path));
  // Built beside, then swapped in: a failed build leaves the last good one.
  const building = `${outDir}.tmp-${process.pid}`;
  try {
    await build({
      absWorkingDir: root,
      entryPoints: entries, outbase: join(root, 'test'), outdir: building,
      chunkNames: 'chunks/[hash]', outExtension: { '.js': '.mjs' },
      bundle: true, splitting: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external',
      sourcemap: 'linked', logLevel: 'error', ...sourceUrlOptions,
    });
    await rm(outDir, { recursive: true, force: true });
    await rename(building, outDir);
  } finally {
    await rm(building, { recursive: true, force: true });
  }
}

await buildTests(ROOT, TESTS_OUT);
