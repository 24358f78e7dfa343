#!/usr/bin/env node
// The `edgeport` command. Sources are TypeScript: a fresh server bundle (built by `npm run build`,
// see bin/server-bundle.js) is loaded when there is one, else the sources themselves through tsx's
// module hooks. Scripts run in workerd processes, not in this one (src/runtime/workerd). First of
// all, a node too old for edgeport is refused with one line and exit code 2 (bin/node-version.js),
// before any other module is loaded.
import { nodeVersionProblem } from './node-version.js';

const problem = nodeVersionProblem(process.version);
if (problem !== null) {
  process.stderr.write(`${problem}\n`);
  process.exit(2);
}

const { fileURLToPath, pathToFileURL } = await import('node:url');
const { freshBundle } = await import('./server-bundle.js');
const root = fileURLToPath(new URL('..', import.meta.url));
const bundle = freshBundle(root, `${root}dist`);
if (bundle !== null) {
  // Stack traces name the sources, not the bundle.
  process.setSourceMapsEnabled(true);
  await import(pathToFileURL(bundle).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
