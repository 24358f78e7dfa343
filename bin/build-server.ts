/**
 * Builds the server bundle (bin/server-bundle.js says how it is used): src/cli/main.ts and what it
 * imports into dist/edgeport.mjs with esbuild, packages left as imports, and a manifest of the
 * inputs' sizes and modification times. Each source's `import.meta.url` becomes that source's own
 * file URL, so paths it resolves (worker-boot.js, workerd's inside/, web/dist, package.json) are the
 * same bundled or not. Both files are written beside and renamed into place, manifest last: a
 * reader sees an old pair, a new pair, or a bundle without a manifest (not fresh), never a mix.
 * Run by bin/build.ts.
 */
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { BUNDLE_FILE, freshBundle, MANIFEST_FILE } from './server-bundle.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** `import.meta.url` in a source under src/ names that source, not the bundle. */
const sourceUrls: Plugin = {
  name: 'source-import-meta-url',
  setup(bundler) {
    bundler.onLoad({ filter: /\.ts$/ }, async (args) => {
      const text = await readFile(args.path, 'utf8');
      return { contents: text.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)), loader: 'ts' };
    });
  },
};

/** Builds the bundle of `root`'s sources into `outDir`; returns the number of inputs. */
export async function buildServer(root: string, outDir: string): Promise<number> {
  const bundle = join(outDir, BUNDLE_FILE);
  await mkdir(outDir, { recursive: true });
  const result = await build({
    absWorkingDir: root,
    entryPoints: [join(root, 'src/cli/main.ts')],
    outfile: `${bundle}.tmp`,
    bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external',
    sourcemap: 'linked', metafile: true, logLevel: 'error', plugins: [sourceUrls],
  });
  // esbuild names inputs relative to absWorkingDir, with forward slashes: the manifest's own form.
  const inputs = await Promise.all(Object.keys(result.metafile.inputs).map(async (path) => {
    const info = await stat(join(root, path));
    return { path, size: info.size, mtimeMs: info.mtimeMs };
  }));
  await rename(`${bundle}.tmp.map`, `${bundle}.map`);
  await rename(`${bundle}.tmp`, bundle);
  const manifest = join(outDir, MANIFEST_FILE);
  await writeFile(`${manifest}.tmp`, `${JSON.stringify({ root, inputs })}\n`);
  await rename(`${manifest}.tmp`, manifest);
  return inputs.length;
}

/** Builds the bundle into dist/ when it is stale (or always, with `force`). */
export async function buildServerIfStale(options: { force: boolean }): Promise<void> {
  const outDir = join(ROOT, 'dist');
  if (options.force || freshBundle(ROOT, outDir) === null) await buildServer(ROOT, outDir);
}
