/** The store binding's wire: a call's or answer's JSON in a header value and back, unchanged. */
import assert from 'node:assert/strict';
import { validateHeaderValue } from 'node:http';
import { test } from 'node:test';
import fc from 'fast-check';
import { decodeHeader, encodeHeader, NATIVE_CALL_HEADER_LIMIT } from '../../../src/runtime/workerd/store-wire.ts';

test('any JSON value survives a header, which holds only printable ASCII that node:http accepts', { timeout: 30_000 }, () => {
  fc.assert(
    fc.property(fc.jsonValue(), fc.string({ unit: 'binary' }), (value, key) => {
      const message = { op: 'get', args: ['bucket', key, value] };
      const header = encodeHeader(message);
      if (header === undefined) return;
      assert.match(header, /^[\x20-\x7e]*$/);
      assert.doesNotThrow(() => validateHeaderValue('x-store-call', header));
      assert.deepEqual(decodeHeader(header), JSON.parse(JSON.stringify(message)));
    }),
    { numRuns: 500 },
  );
});

test('keys outside ASCII (accents, emoji, a lone surrogate, controls, DEL) keep every code unit', { timeout: 10_000 }, () => {
  for (const key of ['café/ü', 'emoji/\u{1F600}', 'lone/\ud800', 'tab\tnew\nline\u0000', 'del\u007f', '\\u0041 literal']) {
    const header = encodeHeader({ op: 'head', args: ['b', key] })!;
    assert.match(header, /^[\x20-\x7e]*$/);
    assert.deepEqual(decodeHeader(header), { op: 'head', args: ['b', key] });
  }
});

test('JSON too long for a header is refused, so that it goes as a frame', { timeout: 10_000 }, () => {
  assert.equal(encodeHeader({ op: 'delete', args: ['b', Array.from({ length: 1000 }, (_, i) => `key-${i}`)] }), undefined);
  // Escapes count against the limit: 2,000 non-ASCII characters are 12,000 header bytes.
  assert.equal(encodeHeader({ op: 'head', args: ['b', 'é'.repeat(2000)] }), undefined);
  assert.notEqual(encodeHeader({ op: 'head', args: ['b', 'é'.repeat(1000)] }), undefined);
});

test("a call whose body is the script's own stream takes a header as long as a frame may be", { timeout: 10_000 }, () => {
  // Nothing may go in front of such a body, whose Content-Length is the stream's own.
  const call = { op: 'put', args: ['b', 'k', { customMetadata: { k: 'é'.repeat(4000) } }], body: { kind: 'native' } };
  assert.equal(encodeHeader(call), undefined);
  assert.deepEqual(decodeHeader(encodeHeader(call, NATIVE_CALL_HEADER_LIMIT)!), call);
  assert.equal(encodeHeader({ op: 'put', args: ['b', 'x'.repeat(NATIVE_CALL_HEADER_LIMIT)] }, NATIVE_CALL_HEADER_LIMIT), undefined);
});
