/** docs/gateway.md's error table lists exactly the catalog's codes, with their wire values. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { GATEWAY_ERRORS } from '../../src/gateway/errors.ts';

const readme = readFileSync(new URL('../../docs/gateway.md', import.meta.url), 'utf8');
const documented = new Map(
  [...readme.matchAll(/^\| `(GATEWAY_[A-Z_]+)` \| (-?\d+) \| (\d{3}) \|/gm)].map((m) => [m[1]!, { rpc: Number(m[2]), status: Number(m[3]) }]),
);

test('every gateway error code is in docs/gateway.md with its JSON-RPC code and HTTP status, and nothing else is', { timeout: 10_000 }, () => {
  for (const [code, entry] of Object.entries(GATEWAY_ERRORS)) {
    assert.deepEqual(documented.get(code), { rpc: entry.rpc.code, status: entry.status }, `docs/gateway.md row for ${code}`);
  }
  for (const code of documented.keys()) assert.ok(code in GATEWAY_ERRORS, `docs/gateway.md lists ${code}, which the catalog does not have`);
});
