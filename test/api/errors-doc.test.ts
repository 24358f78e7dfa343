/** docs/errors.md lists exactly the management API's codes with their wire values, in both directions. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { ACCOUNT_ERRORS, API_ERRORS } from '../../src/api/index.ts';

const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');

test('every API error code is documented with its status, envelope code and message, and nothing else is', { timeout: 10_000 }, () => {
  const rows = new Map(
    [...doc.matchAll(/^\| `(API_[A-Z_]+)` \| (\d{3}) \| (\d+) \| `(.+)` \|$/gm)].map((m) => [
      m[1]!,
      { status: Number(m[2]), code: Number(m[3]), message: m[4]!.replaceAll('\\|', '|') },
    ]),
  );
  for (const [code, entry] of Object.entries(API_ERRORS)) {
    assert.deepEqual(rows.get(code), { status: entry.status, code: entry.code, message: entry.message }, `docs/errors.md row for ${code}`);
  }
  for (const code of rows.keys()) assert.ok(code in API_ERRORS, `docs/errors.md lists ${code}, which API_ERRORS does not have`);
});

test('every account error code is documented, and nothing else is', { timeout: 10_000 }, () => {
  const rows = new Map([...doc.matchAll(/^\| `(ACCOUNT_[A-Z_]+)` \| (.+) \|$/gm)].map((m) => [m[1]!, m[2]!]));
  assert.deepEqual(Object.fromEntries(rows), Object.fromEntries(Object.entries(ACCOUNT_ERRORS).map(([code, entry]) => [code, entry.message])));
});
