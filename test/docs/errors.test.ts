/** docs/errors.md lists exactly the codes of the service catalogs, with their wire values. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { STORE_ERRORS } from '../../src/store/engine/errors.ts';

const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
const documented = new Map(
  [...doc.matchAll(/^\| `([A-Z_]+)` \| (\d+) \| `(\w+)` (\d+) \|/gm)].map((m) => [m[1]!, { v4: Number(m[2]), s3Code: m[3]!, status: Number(m[4]) }]),
);

test('every store error code is documented with its wire values, and nothing else is', { timeout: 10_000 }, () => {
  for (const [code, entry] of Object.entries(STORE_ERRORS)) {
    assert.deepEqual(documented.get(code), { v4: entry.v4, s3Code: entry.s3Code, status: entry.status }, `docs/errors.md row for ${code}`);
  }
  const catalog = new Set(Object.keys(STORE_ERRORS));
  for (const code of documented.keys()) assert.ok(catalog.has(code), `docs/errors.md lists ${code}, which no catalog has`);
});
