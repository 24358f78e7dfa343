/**
 * For esbuild bundles of the sources (the server bundle, the test bundles): each TypeScript
 * source's `import.meta.url` stays that source's own file URL, so the paths it resolves (worker
 * boot files, workerd's inside/, web/dist, package.json, test fixtures) are the same bundled or not.
 * The plugin declares the URL at the start of each source (on its first line, so source maps keep
 * their lines) and the define makes `import.meta.url` that declaration, which esbuild renames per
 * module like any other top-level name. Text that merely mentions `import.meta.url` is untouched.
 */
import { readFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import type { BuildOptions, Plugin } from 'esbuild';

const NAME = '__edgeportSourceUrl';

const sourceUrls: Plugin = {
  name: 'source-import-meta-url',
  setup(bundler) {
    bundler.onLoad({ filter: /\.ts$/ }, async (args) => {
      const text = await readFile(args.path, 'utf8');
      return { contents: `var ${NAME} = ${JSON.stringify(pathToFileURL(args.path).href)}; ${text}`, loader: 'ts' };
    });
  },
};

/** The build options that go with the plugin. */
export const sourceUrlOptions: Pick<BuildOptions, 'define' | 'plugins'> = {
  define: { 'import.meta.url': NAME },
  plugins: [sourceUrls],
};
