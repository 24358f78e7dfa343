/**
 * Builds the server bundle (bin/server-bundle.js says how it is used): src/cli/main.ts and what it
 * imports, with esbuild, into a directory of its own under dist/ (edgeport.mjs, and a chunk for
 * each module the server imports only when it needs it: the PostgreSQL client, the AWS SDK,
 * undici), packages left as imports, and a manifest naming that directory and the inputs' sizes and
 * modification times. Each source's `import.meta.url` stays its own (source-urls.ts). The manifest
 * is written last and renamed into place: a reader sees the old build or the new one, never a mix.
 * The build before is kept, for a server still running it (its chunks load late); older ones are
 * removed. Run by bin/build.ts.
 */
import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build as esbuild } from 'esbuild';
import { BUILD_PREFIX, BUNDLE_NAME, freshBundle, MANIFEST_FILE, readManifest } from './server-bundle.js';
import { sourceUrlOptions } from './source-urls.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Builds the bundle of `root`'s sources into a new directory in `outDir`; returns the number of inputs. */
export async function buildServer(root: string, outDir: string): Promise<number> {
  await mkdir(outDir, { recursive: true });
  const before = readManifest(outDir)?.build;
  const build = `${BUILD_PREFIX}${Date.now().toString(36)}-${process.pid}`;
  const result = await esbuild({
    absWorkingDir: root,
    entryPoints: { [BUNDLE_NAME]: join(root, 'src/cli/main.ts') },
    outdir: join(outDir, build),
    entryNames: '[name]',
    chunkNames: 'chunk-[hash]',
    outExtension: { '.js': '.mjs' },
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node22.13',
    packages: 'external',
    sourcemap: 'linked',
    metafile: true,
    logLevel: 'error',
    ...sourceUrlOptions,
  });
  // esbuild names inputs relative to absWorkingDir, with forward slashes: the manifest's own form.
  const inputs = await Promise.all(
    Object.keys(result.metafile.inputs).map(async (path) => {
      const info = await stat(join(root, path));
      return { path, size: info.size, mtimeMs: info.mtimeMs };
    }),
  );
  const manifest = join(outDir, MANIFEST_FILE);
  await writeFile(`${manifest}.tmp`, `${JSON.stringify({ root, build, inputs })}\n`);
  await rename(`${manifest}.tmp`, manifest);
  for (const entry of await readdir(outDir)) {
    if (entry.startsWith(BUILD_PREFIX) && entry !== build && entry !== before) await rm(join(outDir, entry), { recursive: true, force: true });
  }
  return inputs.length;
}

/** Builds the bundle into dist/ when it is stale (or always, with `force`). */
export async function buildServerIfStale(options: { force: boolean }): Promise<void> {
  const outDir = join(ROOT, 'dist');
  if (options.force || freshBundle(ROOT, outDir) === null) await buildServer(ROOT, outDir);
}
