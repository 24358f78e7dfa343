/** docs/errors.md lists exactly the command line's codes, with their kinds. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { CLI_ERRORS } from '../../src/cli/cli-errors.ts';

const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
const documented = new Map([...doc.matchAll(/^\| `(CLI_[A-Z_]+)` \| (user|system) \|/gm)].map((m) => [m[1]!, m[2]!]));

test('every command-line error code is in docs/errors.md with its kind, and nothing else is', { timeout: 5_000 }, () => {
  for (const [code, entry] of Object.entries(CLI_ERRORS)) assert.equal(documented.get(code), entry.kind, `docs/errors.md row for ${code}`);
  for (const code of documented.keys()) assert.ok(code in CLI_ERRORS, `docs/errors.md lists ${code}, which the catalog does not have`);
});
