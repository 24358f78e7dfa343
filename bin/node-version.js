// The Node.js versions edgeport runs on, checked by bin/edgeport.js before it loads anything else.
// The strictest engines among the dependencies set them: the embedded chain (@nomicfoundation/edr)
// needs 22, wrangler (a devDependency, the wrangler test) 22.12, eslint 22.13 on the 22 line and
// then 24 (23 is left out). Plain JavaScript in syntax any old node parses, so that it prints this
// check's one line instead of failing on a later module.

/** package.json's `engines.node` (test/bin/node-version.test.ts keeps the two equal). */
export const SUPPORTED_NODE = '^22.13.0 || >=24';

/**
 * Null when `version` (`process.version`, e.g. `v22.13.0`) is supported, else the one line that
 * says what edgeport needs, what it found and how to get it.
 * @param {string} version
 * @returns {string | null}
 */
export function nodeVersionProblem(version) {
  var match = /^v?(\d+)\.(\d+)\.\d+/.exec(version);
  if (match !== null) {
    var major = Number(match[1]);
    var minor = Number(match[2]);
    if ((major === 22 && minor >= 13) || major >= 24) return null;
  }
  return (
    'edgeport needs Node.js 22.13 or later on the 22 line, or 24 or later; this is Node.js ' +
    version +
    ": install Node.js 24 (with your system's package manager, or `nvm install 24`) and run edgeport with it"
  );
}
