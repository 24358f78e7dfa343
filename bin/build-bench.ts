/**
 * Builds `npm run bench` into dist/bench/ (bundle-tree.ts): the benchmarks measure the code as
 * `edgeport start` runs it, bundled by esbuild, not as tsx transforms it on the fly (tsx keeps
 * every function's name with a call wrapped around its creation, a cost the server never pays).
 * Run: `node --import tsx bin/build-bench.ts`; prints nothing unless the build fails.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleTree } from './bundle-tree.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
await bundleTree({ root: ROOT, entries: [join(ROOT, 'bench', 'run.ts')], outbase: join(ROOT, 'bench'), outDir: join(ROOT, 'dist', 'bench') });
