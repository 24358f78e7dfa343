/** clientKey: IPv4 as is, IPv4-mapped IPv6 as IPv4, IPv6 by its /64 whatever its spelling (by example and by property). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { clientKey, UNKNOWN_CLIENT } from '../../src/core/auth/client-address.ts';

test('examples: IPv4, mapped IPv4, IPv6 prefixes, zone ids, no address', { timeout: 10_000 }, () => {
  assert.equal(clientKey('203.0.113.9'), '203.0.113.9');
  assert.equal(clientKey('::ffff:127.0.0.1'), '127.0.0.1');
  assert.equal(clientKey('::FFFF:10.1.2.3'), '10.1.2.3');
  assert.equal(clientKey('2001:db8:1:2:3:4:5:6'), '2001:db8:1:2::/64');
  assert.equal(clientKey('2001:0db8:0001:0002:ffff:ffff:ffff:ffff'), '2001:db8:1:2::/64', 'one /64, one key');
  assert.equal(clientKey('2001:db8::1'), '2001:db8:0:0::/64');
  assert.equal(clientKey('::1'), '0:0:0:0::/64');
  assert.equal(clientKey('fe80::1%eth0'), 'fe80:0:0:0::/64');
  assert.equal(clientKey('64:ff9b::192.0.2.33'), '64:ff9b:0:0::/64');
  assert.equal(clientKey(undefined), UNKNOWN_CLIENT);
  assert.equal(clientKey(''), UNKNOWN_CLIENT);
});

/** An IPv6 address in one of its spellings: leading zeros or not, upper or lower case, the longest zero run as `::` or not. */
function spell(groups: number[], options: { pad: boolean; upper: boolean; compress: boolean }): string {
  const text = groups.map((g) => (options.pad ? g.toString(16).padStart(4, '0') : g.toString(16)));
  let out = text.join(':');
  if (options.compress) {
    let best = { at: -1, length: 0 };
    for (let i = 0; i < 8; i++) {
      let j = i;
      while (j < 8 && groups[j] === 0) j++;
      if (j - i > best.length) best = { at: i, length: j - i };
    }
    if (best.length >= 2) out = `${text.slice(0, best.at).join(':')}::${text.slice(best.at + best.length).join(':')}`;
  }
  return options.upper ? out.toUpperCase() : out;
}

test('property: every spelling of an IPv6 address counts under its /64', { timeout: 30_000 }, () => {
  const group = fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 0xffff }));
  fc.assert(
    fc.property(fc.array(group, { minLength: 8, maxLength: 8 }), fc.boolean(), fc.boolean(), fc.boolean(), (groups, pad, upper, compress) => {
      // ::ffff:a.b.c.d is IPv4 (checked above); keep to the other addresses here.
      fc.pre(!(groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff));
      const expected = `${groups
        .slice(0, 4)
        .map((g) => g.toString(16))
        .join(':')}::/64`;
      assert.equal(clientKey(spell(groups, { pad, upper, compress })), expected);
    }),
    { numRuns: 2000 },
  );
});
