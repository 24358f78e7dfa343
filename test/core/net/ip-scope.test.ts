/** ipScope: which addresses are public, checked on examples and against node:net's BlockList for random addresses. */
import assert from 'node:assert/strict';
import { BlockList } from 'node:net';
import { test } from 'node:test';
import fc from 'fast-check';
import { canonicalIp, ipScope, parseIPv6 } from '../../../src/core/net/ip-scope.ts';

test('examples of every scope, IPv4-mapped, NAT64 and 6to4 forms judged by their IPv4 address', { timeout: 10_000 }, () => {
  const cases: Array<[string, string | null]> = [
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['2002:7f00:1::', 'loopback'],
    ['169.254.169.254', 'link-local'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.0.1', 'private'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['100.64.0.1', 'shared'],
    ['100.127.255.255', 'shared'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['::ffff:0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.255', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['::127.0.0.1', 'reserved'],
    ['100::1', 'reserved'],
    ['8.8.8.8', 'public'],
    ['1.1.1.1', 'public'],
    ['172.32.0.1', 'public'],
    ['100.128.0.1', 'public'],
    ['169.255.0.1', 'public'],
    ['::ffff:8.8.8.8', 'public'],
    ['64:ff9b::808:808', 'public'],
    ['2606:4700:4700::1111', 'public'],
    ['2a00:1450:4001::200e', 'public'],
    ['example.com', null],
    ['[::1]', null],
    ['127.1', null],
    ['', null],
  ];
  for (const [address, scope] of cases) assert.equal(ipScope(address), scope, address);
  assert.equal(canonicalIp('::ffff:127.0.0.1'), '127.0.0.1');
  assert.equal(canonicalIp('FE80::1%eth0'), 'fe80::1');
  assert.equal(canonicalIp('10.0.0.1'), '10.0.0.1');
});

/** The non-public ranges, written independently as node:net BlockList rules. */
function nonPublic(): BlockList {
  const list = new BlockList();
  for (const [net, bits] of [
    ['0.0.0.0', 8],
    ['10.0.0.0', 8],
    ['100.64.0.0', 10],
    ['127.0.0.0', 8],
    ['169.254.0.0', 16],
    ['172.16.0.0', 12],
    ['192.0.0.0', 24],
    ['192.0.2.0', 24],
    ['192.88.99.0', 24],
    ['192.168.0.0', 16],
    ['198.18.0.0', 15],
    ['198.51.100.0', 24],
    ['203.0.113.0', 24],
    ['224.0.0.0', 3],
  ] as const) {
    list.addSubnet(net, bits, 'ipv4');
  }
  return list;
}

test('IPv4: public exactly when outside every special-purpose range (random addresses, BlockList as the oracle)', { timeout: 30_000 }, () => {
  const list = nonPublic();
  const octet = fc.integer({ min: 0, max: 255 });
  // Half the addresses near the edges of the ranges, half anywhere.
  const near = fc.constantFrom(0, 10, 100, 127, 169, 172, 192, 198, 203, 223, 224, 255).chain((first) => fc.tuple(fc.constant(first), octet, octet, octet));
  fc.assert(
    fc.property(fc.oneof(fc.tuple(octet, octet, octet, octet), near), (parts) => {
      const address = parts.join('.');
      assert.equal(ipScope(address) === 'public', !list.check(address, 'ipv4'), address);
      assert.equal(ipScope(`::ffff:${address}`), ipScope(address), 'IPv4-mapped');
      assert.equal(canonicalIp(`::ffff:${address}`), address);
    }),
    { numRuns: 5000 },
  );
});

test('IPv6: every address parses to 16 bytes that format back to the same address; non-public ranges per BlockList', { timeout: 30_000 }, () => {
  const list = new BlockList();
  for (const [net, bits] of [
    ['fc00::', 7],
    ['fe80::', 10],
    ['ff00::', 8],
    ['2001:db8::', 32],
    ['::', 3],
    ['4000::', 2],
    ['8000::', 1],
  ] as const)
    list.addSubnet(net, bits, 'ipv6');
  fc.assert(
    fc.property(fc.ipV6(), (address) => {
      const bytes = parseIPv6(address);
      assert.ok(bytes && bytes.length === 16 && bytes.every((b) => Number.isInteger(b) && b >= 0 && b <= 255), address);
      const full = Array.from({ length: 8 }, (_, i) => ((bytes[2 * i]! << 8) | bytes[2 * i + 1]!).toString(16)).join(':');
      assert.deepEqual(parseIPv6(full), bytes, `${address} -> ${full}`);
      const scope = ipScope(address);
      assert.ok(scope !== null);
      // IPv4-mapped and NAT64 addresses are judged by their IPv4 address (the first test).
      const carriesIPv4 = [
        [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff],
        [0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0],
      ].some((prefix) => prefix.every((b, i) => bytes[i] === b));
      if (list.check(full, 'ipv6') && !carriesIPv4) assert.notEqual(scope, 'public', address);
    }),
    { numRuns: 3000 },
  );
});
