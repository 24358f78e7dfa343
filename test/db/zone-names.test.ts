/**
 * The names both control stores look for when a zone is created: the zones above a name stop at
 * its registrable domain (a public suffix is no one's zone), and every one of them shares the
 * name's family (the PostgreSQL lock that serializes creates that could conflict).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { ancestorNames, registrableDomain, zoneFamily } from '../../src/db/zone-names.ts';

test('registrableDomain follows the Public Suffix List, private section included', { timeout: 10_000 }, () => {
  const cases: Array<[string, string | null]> = [
    ['co.uk', null],
    ['shop.co.uk', 'shop.co.uk'],
    ['www.shop.co.uk', 'shop.co.uk'],
    ['github.io', null],
    ['alice.github.io', 'alice.github.io'],
    ['example.test', 'example.test'],
    ['test', null],
    ['a.b.example.com', 'example.com'],
    ['foo.ck', null],
    ['www.ck', 'www.ck'],
    ['x.compute.amazonaws.com', null],
    ['a.x.compute.amazonaws.com', 'a.x.compute.amazonaws.com'],
  ];
  for (const [name, expected] of cases) assert.equal(registrableDomain(name), expected, name);
});

test('ancestorNames: nearest first, down to the registrable domain, never a public suffix, all in one family', { timeout: 20_000 }, () => {
  assert.deepEqual(ancestorNames('a.b.shop.co.uk'), ['b.shop.co.uk', 'shop.co.uk']);
  assert.deepEqual(ancestorNames('shop.co.uk'), []);
  assert.deepEqual(ancestorNames('co.uk'), []);
  assert.deepEqual(ancestorNames('www.shop.test'), ['shop.test']);
  const label = fc.stringMatching(/^[a-z0-9](?:[a-z0-9-]{0,8}[a-z0-9])?$/);
  const suffix = fc.constantFrom('co.uk', 'github.io', 'test', 'com', 'x.compute.amazonaws.com', 'kawasaki.jp', 'ck', 'blogspot.com', 'uk');
  fc.assert(
    fc.property(fc.array(label, { minLength: 0, maxLength: 6 }), suffix, (labels, tail) => {
      const name = [...labels, tail].join('.');
      const ancestors = ancestorNames(name);
      const registrable = registrableDomain(name);
      if (registrable === null) return assert.deepEqual(ancestors, []);
      assert.equal(ancestors.at(-1) ?? name, registrable);
      let below = name;
      for (const above of ancestors) {
        assert.ok(below.endsWith(`.${above}`), `${above} is the parent of ${below}`);
        assert.equal(below.length - below.indexOf('.') - 1, above.length, `${above} is the nearest after ${below}`);
        assert.notEqual(registrableDomain(above), null, `${above} is not a public suffix`);
        assert.equal(zoneFamily(above), zoneFamily(name));
        below = above;
      }
    }),
    { numRuns: 500 },
  );
});
