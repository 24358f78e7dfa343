import assert from 'node:assert/strict';
import { test } from 'node:test';
import { randomBase64UrlId, randomHexId } from '../../src/core/ids.ts';

test('randomHexId: 32 lowercase hex characters, never repeated across pool refills', { timeout: 10_000 }, () => {
  const seen = new Set<string>();
  // 4 KiB pool / 16 bytes = 256 ids per refill: this crosses many refills.
  for (let i = 0; i < 5000; i++) {
    const id = randomHexId();
    assert.match(id, /^[0-9a-f]{32}$/);
    seen.add(id);
  }
  assert.equal(seen.size, 5000);
});

test('randomBase64UrlId: URL-safe, of the asked length', { timeout: 10_000 }, () => {
  assert.match(randomBase64UrlId(48), /^[A-Za-z0-9_-]{64}$/);
  assert.notEqual(randomBase64UrlId(), randomBase64UrlId());
});
