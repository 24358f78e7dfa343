/**
 * CORS rules without a server: the wildcard match and S3's rule choice (properties), the
 * CORSConfiguration document written and read back exactly for any rules, and the rules cache
 * (time to live on the injected clock, invalidation, a bound on names).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { FakeClock } from '../../../src/core/clock.ts';
import { CORS_METHODS, CorsCache, matchCorsRule, requestedHeaders, wildcardMatch, type BucketCors, type CorsRule } from '../../../src/store/engine/cors.ts';
import { corsConfigurationXml, parseCorsConfiguration } from '../../../src/store/s3/operations/cors.ts';

const noStar = fc.string({ maxLength: 12 }).filter((s) => !s.includes('*'));

test('wildcardMatch: one * stands for any run of characters; without one, only the text itself matches', { timeout: 10_000 }, () => {
  fc.assert(
    fc.property(noStar, noStar, fc.string({ maxLength: 12 }), (head, tail, middle) => {
      assert.ok(wildcardMatch(`${head}*${tail}`, `${head}${middle}${tail}`));
      assert.ok(wildcardMatch(`${head}${tail}`, `${head}${tail}`));
    }),
  );
  fc.assert(
    fc.property(noStar, fc.string({ maxLength: 12 }), (pattern, value) => {
      assert.equal(wildcardMatch(pattern, value), pattern === value);
    }),
  );
  // The head and tail may not overlap: `ab*ba` needs at least 4 characters.
  assert.equal(wildcardMatch('ab*ba', 'aba'), false);
  assert.equal(wildcardMatch('https://*.example.com', 'https://example.com'), false);
  assert.equal(wildcardMatch('https://*.example.com', 'https://a.b.example.com'), true);
});

test('matchCorsRule: the first rule whose origin, method and every asked header match', { timeout: 10_000 }, () => {
  const rules: CorsRule[] = [
    { id: 'narrow', allowedOrigins: ['https://a.test'], allowedMethods: ['PUT'], allowedHeaders: ['Content-Type'], exposeHeaders: [] },
    { id: 'wide', allowedOrigins: ['*'], allowedMethods: ['GET', 'PUT'], allowedHeaders: ['*'], exposeHeaders: [] },
  ];
  const pick = (origin: string, method: string, headers: string) => matchCorsRule(rules, { origin, method, headers: requestedHeaders(headers) })?.id;
  assert.equal(pick('https://a.test', 'PUT', 'CONTENT-TYPE'), 'narrow', 'headers compare case-insensitively');
  assert.equal(pick('https://a.test', 'PUT', 'content-type, x-other'), 'wide', 'every header must be allowed by the same rule');
  assert.equal(pick('https://b.test', 'GET', ''), 'wide');
  assert.equal(pick('https://b.test', 'DELETE', ''), undefined);
  assert.equal(pick('https://b.test', 'get', ''), undefined, 'methods compare exactly, as S3 does');
  assert.deepEqual(requestedHeaders(' A, ,b ,'), ['a', 'b']);
  // No rule with no asked headers, any rule's headers: a rule allowing `*` headers allows any list.
  fc.assert(
    fc.property(fc.array(fc.stringMatching(/^[a-z][a-z0-9-]{0,15}$/), { maxLength: 8 }), (headers) => {
      assert.equal(matchCorsRule([rules[1]!], { origin: 'x', method: 'GET', headers })?.id, 'wide');
    }),
  );
});

const text = fc.string({ maxLength: 20 }).map((s) => s.replace(/\r/g, ''));
const rule: fc.Arbitrary<CorsRule> = fc
  .record({
    id: fc.option(text, { nil: undefined }),
    allowedOrigins: fc.array(text, { minLength: 1, maxLength: 3 }),
    allowedMethods: fc.uniqueArray(fc.constantFrom(...CORS_METHODS), { minLength: 1 }),
    allowedHeaders: fc.array(text, { maxLength: 3 }),
    exposeHeaders: fc.array(text, { maxLength: 3 }),
    maxAgeSeconds: fc.option(fc.integer({ min: 0, max: 999_999_999 }), { nil: undefined }),
  })
  .map((r) => Object.fromEntries(Object.entries(r).filter(([, v]) => v !== undefined)) as unknown as CorsRule);

test('the CORSConfiguration document reads back as the rules it was written from, whatever their text', { timeout: 30_000 }, () => {
  fc.assert(
    fc.property(fc.array(rule, { minLength: 1, maxLength: 5 }), (rules) => {
      assert.deepEqual(parseCorsConfiguration(corsConfigurationXml(rules)), rules);
    }),
    { numRuns: 300 },
  );
});

test(
  'CorsCache: one read per name within its time to live, read again after it or after an invalidation, at most maxNames names',
  { timeout: 10_000 },
  async () => {
    const clock = new FakeClock();
    const reads: string[] = [];
    let fail = false;
    const cache = new CorsCache({
      now: () => clock.now(),
      ttlMs: 1000,
      maxNames: 2,
      load: async (name): Promise<BucketCors[]> => {
        reads.push(name);
        if (fail) throw new Error('database down');
        return [];
      },
    });
    await cache.get('a');
    await cache.get('a');
    assert.deepEqual(reads, ['a']);
    clock.advance(1000);
    await cache.get('a');
    assert.deepEqual(reads, ['a', 'a'], 'expired');
    cache.invalidate('a');
    await cache.get('a');
    assert.deepEqual(reads, ['a', 'a', 'a'], 'invalidated');
    await cache.get('b');
    await cache.get('c');
    await cache.get('a');
    assert.deepEqual(reads.slice(3), ['b', 'c', 'a'], 'a, the oldest, went when c came');
    fail = true;
    cache.invalidate('d');
    await assert.rejects(cache.get('d'), /database down/);
    fail = false;
    await cache.get('d');
    assert.deepEqual(reads.slice(-2), ['d', 'd'], 'a failed read is not remembered');
  },
);
