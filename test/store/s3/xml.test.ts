import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { decodeXmlText, element, escapeXml, requestXml } from '../../../src/store/s3/xml.ts';

/** Any key: full Unicode with control characters, spaces at either end, markup characters. */
const anyText = fc.string({
  unit: fc.oneof(
    fc.constantFrom('&', '<', '>', '"', "'", ' ', '\r', '\n', '\t', '\u0001', '\u001f', ';', '#'),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
  ),
  maxLength: 40,
});

function keysOf(document: string): string[] {
  const doc = requestXml.parse(document) as { Delete: { Object: Array<{ Key: string }> } };
  return doc.Delete.Object.map((o) => o.Key);
}

test('a request document gives back every key exactly, however the client escaped it', { timeout: 10_000 }, () => {
  fc.assert(
    fc.property(anyText, (key) => {
      // As edgeport (and most clients) escape: the five markup characters by name, controls by number.
      assert.deepEqual(keysOf(`<Delete><Object><Key>${escapeXml(key)}</Key></Object></Delete>`), [key]);
      // As Go's encoding/xml does for quotes, and the AWS SDKs for CR/LF: numeric references, here for every character.
      const numeric = [...key].map((c) => `&#x${c.codePointAt(0)!.toString(16)};`).join('');
      assert.deepEqual(keysOf(`<?xml version="1.0"?>\n<Delete>\n  <Object><Key>${numeric}</Key></Object>\n  <Quiet>true</Quiet>\n</Delete>`), [key]);
    }),
    { numRuns: 300 },
  );
});

test('responses escape markup and control characters, and text decodes back', { timeout: 10_000 }, () => {
  assert.equal(element('Key', 'a&b<c>"d\'e'), '<Key>a&amp;b&lt;c&gt;&quot;d&apos;e</Key>');
  assert.equal(escapeXml('cr\rlf\ntab\tbell\u0007'), 'cr&#13;lf&#10;tab&#9;bell&#7;');
  fc.assert(
    fc.property(anyText, (text) => decodeXmlText(escapeXml(text)) === text),
    { numRuns: 300 },
  );
  // Unknown entities and references to surrogates stay as written; one pass only (no double decoding).
  assert.equal(decodeXmlText('&nbsp;&#xD800;&amp;lt;&#38;#38;'), '&nbsp;&#xD800;&lt;&#38;');
});
