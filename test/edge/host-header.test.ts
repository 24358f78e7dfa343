/** The edge's Host header check (RFC 9112 §3.2): exactly one, a valid host with an optional port, else a 400 problem. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { parseHostHeader } from '../../src/edge/host-header.ts';

const host = (value: string) => parseHostHeader(['Host', value]);

test('a host name, IPv4 or bracketed IPv6 address, with an optional port, routes by the host alone', { timeout: 10_000 }, () => {
  assert.deepEqual(host('Shop.Example.TEST'), { host: 'shop.example.test' });
  assert.deepEqual(host('shop.example.test.'), { host: 'shop.example.test' });
  assert.deepEqual(host('shop.example.test:8080'), { host: 'shop.example.test' });
  assert.deepEqual(host('shop.example.test:'), { host: 'shop.example.test' }, 'RFC 3986: port = *DIGIT');
  assert.deepEqual(host('_acme.example.test'), { host: '_acme.example.test' });
  assert.deepEqual(host('192.0.2.1:80'), { host: '192.0.2.1' });
  assert.deepEqual(host('a.1b.test'), { host: 'a.1b.test' }, 'a label may start with a digit');
  assert.deepEqual(host('0x7f.1'), { host: '0x7f.1' }, 'an IPv4 address as URL parsers read it');
  assert.deepEqual(host('[2001:DB8::1]:443'), { host: '[2001:db8::1]' });
  assert.deepEqual(parseHostHeader(['X-A', '1', 'hOsT', 'example.test', 'X-B', '2']), { host: 'example.test' });
});

test('none, several, empty or invalid Host headers are problems that say what is wrong', { timeout: 10_000 }, () => {
  assert.deepEqual(parseHostHeader(['X-A', '1']), { problem: 'the request has no Host header: send one naming the site, such as "Host: example.com".' });
  assert.deepEqual(parseHostHeader(['Host', 'a.test', 'Host', 'b.test']), { problem: 'the request has 2 Host headers: send exactly one.' });
  assert.deepEqual(
    parseHostHeader(['Host', 'a.test', 'host', 'a.test']),
    { problem: 'the request has 2 Host headers: send exactly one.' },
    'even when they agree',
  );
  assert.deepEqual(host(''), { problem: 'the Host header is empty: it must name the site, such as "Host: example.com".' });
  for (const bad of [
    'a.test:abc',
    'a.test:99999',
    'a.test:123456',
    'a b',
    'a.test/x',
    'user@a.test',
    '[::1',
    '[zz::1]',
    '[1.2.3.4]',
    'a..test',
    '.a.test',
    '*.a.test',
    'a.test:80:80',
    '%61.test',
    `${'a'.repeat(64)}.test`,
    `${'a.'.repeat(127)}test`,
    // Read as IPv4 addresses by URL parsers, and none.
    '127.t.0.1',
    '1.2.3.4.5',
    '256.0.0.1',
    'a.0x',
  ]) {
    const parsed = host(bad);
    assert.ok('problem' in parsed, `${bad} is refused`);
    assert.match(parsed.problem, /^the Host header ".*" is not a host name with an optional port, such as "example.com" or "example.com:8080"\.$/);
  }
  const long = host(`${'x'.repeat(300)}/`);
  assert.ok('problem' in long && long.problem.includes(`${'x'.repeat(100)}..."`), 'a long value is shown cut');
});

test('property: never throws; any domain name with any port routes by its lower-case name', { timeout: 10_000 }, () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.constantFrom('Host', 'host', 'X-Other', 'Hosts'), fc.string({ unit: 'binary' }))), (pairs) => {
      const parsed = parseHostHeader(pairs.flat());
      const count = pairs.filter(([name]) => name.toLowerCase() === 'host').length;
      if (count !== 1) assert.ok('problem' in parsed);
    }),
  );
  fc.assert(
    fc.property(fc.domain(), fc.option(fc.integer({ min: 0, max: 65535 })), (domain, port) => {
      assert.deepEqual(host(port === null ? domain : `${domain}:${port}`), { host: domain.toLowerCase() });
    }),
  );
  fc.assert(
    fc.property(fc.ipV6(), fc.ipV4(), (v6, v4) => {
      assert.deepEqual(host(`[${v6}]`), { host: `[${v6.toLowerCase()}]` });
      assert.deepEqual(host(v4), { host: v4 });
    }),
  );
});
