/**
 * Bundles TypeScript entry files with what they import (sources, helpers) into a tree of `.mjs`
 * files with esbuild: the same relative paths under `outDir`, code shared between entries in
 * chunks, packages left as imports, source maps. Each source keeps its own `import.meta.url`
 * (source-urls.ts). Built beside `outDir`, then swapped in, so a failed build leaves the last good
 * one. Used for the test files (build-tests.ts) and the benchmarks (build-bench.ts).
 */
import { rename, rm } from 'node:fs/promises';
import { build } from 'esbuild';
import { sourceUrlOptions } from './source-urls.ts';

export async function bundleTree(options: { root: string; entries: string[]; outbase: string; outDir: string }): Promise<void> {
  const { root, entries, outbase, outDir } = options;
  const building = `${outDir}.tmp-${process.pid}`;
  try {
    await build({
      absWorkingDir: root,
      entryPoints: entries,
      outbase,
      outdir: building,
      chunkNames: 'chunks/[hash]',
      outExtension: { '.js': '.mjs' },
      bundle: true,
      splitting: true,
      platform: 'node',
      format: 'esm',
      target: 'node22.13',
      packages: 'external',
      sourcemap: 'linked',
      logLevel: 'error',
      ...sourceUrlOptions,
    });
    await rm(outDir, { recursive: true, force: true });
    await rename(building, outDir);
  } finally {
    await rm(building, { recursive: true, force: true });
  }
}
