// The server bundle: src/cli/main.ts and every source file it imports, built into a directory
// under dist/ by `npm run build` (bin/build-server.ts). Loading it skips the TypeScript loader and a few hundred
// module loads, about a third of a start's CPU. It is used only while it is fresh: the manifest
// beside it records each input's size and modification time, and any difference (an edited,
// checked-out or removed source) means the sources are run directly instead, as they always can be.
// Plain JavaScript: bin/edgeport.js reads it before any TypeScript loader exists.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The entry point's name in a build directory (`<name>.mjs`). */
export const BUNDLE_NAME = 'edgeport';
/** Build directories under dist/ are named `server-<time>-<pid>`. */
export const BUILD_PREFIX = 'server-';
export const MANIFEST_FILE = 'edgeport.inputs.json';

/**
 * The manifest in `dir` (the root it was built for, its build directory, its inputs), or null when
 * it is missing, unreadable or not of that shape.
 * @param {string} dir
 * @returns {{ root: string, build: string, inputs: Array<{ path: string, size: number, mtimeMs: number }> } | null}
 */
export function readManifest(dir) {
  try {
    const manifest = JSON.parse(readFileSync(join(dir, MANIFEST_FILE), 'utf8'));
    return typeof manifest.root === 'string' && typeof manifest.build === 'string' && Array.isArray(manifest.inputs) ? manifest : null;
  } catch {
    return null;
  }
}

/**
 * The bundle's entry point in `dir` when its manifest matches the files it was built from (paths in the
 * manifest are relative to `root`), else null. A missing or unreadable manifest is not fresh.
 * @param {string} root
 * @param {string} dir
 * @returns {string | null}
 */
export function freshBundle(root, dir) {
  const manifest = readManifest(dir);
  if (manifest === null || manifest.root !== root) return null;
  for (const input of manifest.inputs) {
    const info = statSync(join(root, input.path), { throwIfNoEntry: false });
    if (info === undefined || info.size !== input.size || info.mtimeMs !== input.mtimeMs) return null;
  }
  const bundle = join(dir, manifest.build, `${BUNDLE_NAME}.mjs`);
  return statSync(bundle, { throwIfNoEntry: false }) === undefined ? null : bundle;
}
