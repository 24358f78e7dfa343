/** docs/errors.md lists exactly POST /graphql's refusal codes (GRAPHQL_ERRORS) with their HTTP statuses. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { GRAPHQL_ERRORS } from '../../../src/api/graphql/graphql-errors.ts';

const doc = readFileSync(new URL('../../../docs/errors.md', import.meta.url), 'utf8');

test('every GraphQL refusal code is documented with its status, and nothing else is', { timeout: 10_000 }, () => {
  const rows = new Map([...doc.matchAll(/^\| `(GRAPHQL_[A-Z_]+)` \| (\d{3}) \|/gm)].map((m) => [m[1]!, Number(m[2])]));
  assert.deepEqual(Object.fromEntries(rows), Object.fromEntries(Object.entries(GRAPHQL_ERRORS).map(([code, entry]) => [code, entry.status])));
});
