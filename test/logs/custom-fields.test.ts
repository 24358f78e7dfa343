/** Custom fields (docs/edge-and-logs.md): matching, first instance, cookies, the 8 KB limit. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { CUSTOM_FIELDS_MAX_BYTES, extractCustomFields, truncateUtf8 } from '../../src/logs/custom-fields.ts';

test('header names match case-insensitively and are logged lower case; only the first instance counts', { timeout: 10_000 }, () => {
  const fields = extractCustomFields(
    { requestFields: ['x-trace', 'accept', 'absent'], responseFields: ['set-cookie', 'server'], cookieFields: [] },
    ['X-Trace', 'one', 'Accept', 'text/html', 'x-TRACE', 'two'],
    ['Set-Cookie', 'a=1', 'Server', 'origin', 'set-cookie', 'b=2'],
  );
  assert.deepEqual(fields.RequestHeaders, { 'x-trace': 'one', accept: 'text/html' });
  assert.deepEqual(fields.ResponseHeaders, { 'set-cookie': 'a=1', server: 'origin' });
});

test('cookie names are case-sensitive; the first of a repeated cookie counts, across Cookie headers', { timeout: 10_000 }, () => {
  const fields = extractCustomFields(
    { requestFields: [], responseFields: [], cookieFields: ['session', 'Theme'] },
    ['Cookie', 'SESSION=upper; session=abc; theme=dark', 'cookie', 'Theme=light; session=later'],
    [],
  );
  assert.deepEqual(fields.Cookies, { session: 'abc', Theme: 'light' });
});

test('8 KB across the three kinds: the crossing value is cut at a character boundary, the rest dropped, no error', { timeout: 10_000 }, () => {
  const big = 'é'.repeat(3000); // 6000 bytes
  const fields = extractCustomFields(
    { requestFields: ['a', 'b'], responseFields: ['c'], cookieFields: ['k'] },
    ['a', big, 'b', big, 'Cookie', 'k=v'],
    ['c', 'late'],
  );
  assert.equal(fields.RequestHeaders.a, big);
  const cut = fields.RequestHeaders.b!;
  assert.ok(big.startsWith(cut) && cut.length < big.length);
  assert.equal(Buffer.byteLength('a') + 6000 + Buffer.byteLength('b') + Buffer.byteLength(cut), CUSTOM_FIELDS_MAX_BYTES);
  assert.deepEqual(fields.Cookies, {});
  assert.deepEqual(fields.ResponseHeaders, {});
});

test('property: logged data never exceeds 8 KB and every logged value is a prefix of the first instance', { timeout: 10_000 }, () => {
  const name = fc.constantFrom('a', 'b', 'x-one', 'x-two');
  fc.assert(
    fc.property(fc.array(fc.tuple(name, fc.string({ maxLength: 4000, unit: 'grapheme' })), { maxLength: 8 }), (headers) => {
      const raw = headers.flat();
      const fields = extractCustomFields({ requestFields: ['a', 'b', 'x-one', 'x-two'], responseFields: ['a'], cookieFields: [] }, raw, raw);
      let bytes = 0;
      for (const map of [fields.RequestHeaders, fields.ResponseHeaders]) {
        for (const [key, value] of Object.entries(map)) {
          bytes += Buffer.byteLength(key) + Buffer.byteLength(value);
          const first = headers.find(([n]) => n === key)![1];
          assert.ok(first.startsWith(value), `${key} is a prefix of its first instance`);
        }
      }
      assert.ok(bytes <= CUSTOM_FIELDS_MAX_BYTES);
    }),
  );
});

test('truncateUtf8 never splits a character', { timeout: 10_000 }, () => {
  fc.assert(
    fc.property(fc.string({ unit: 'grapheme', maxLength: 50 }), fc.nat(200), (text, max) => {
      const cut = truncateUtf8(text, max);
      assert.ok(Buffer.byteLength(cut) <= Math.max(max, 0));
      assert.ok(text.startsWith(cut));
      assert.ok(!cut.includes('\ufffd') || text.includes('\ufffd'));
    }),
  );
});
