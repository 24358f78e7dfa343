/** Canonical query and URI of SigV4: the fast path agrees with decode-then-AWS-encode everywhere; the HMAC agrees with node:crypto's. */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import fc from 'fast-check';
import { canonicalQuery, canonicalUri, hmacHex } from '../../../src/store/s3/sigv4.ts';

/** The definition, byte by byte: escapes and UTF-8 characters to bytes; unreserved bytes as characters, others as %XX. */
function canonical(text: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < text.length;) {
    if (text[i] === '%' && /^[0-9A-Fa-f]{2}$/.test(text.slice(i + 1, i + 3))) {
      bytes.push(parseInt(text.slice(i + 1, i + 3), 16));
      i += 3;
    } else {
      const char = String.fromCodePoint(text.codePointAt(i)!);
      bytes.push(...Buffer.from(char, 'utf8'));
      i += char.length;
    }
  }
  return bytes
    .map((b) => (/[A-Za-z0-9\-_.~]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`))
    .join('');
}

/** The definition: decode every component, AWS-encode it, sort by key then value. */
function referenceQuery(raw: string, skip?: string): string {
  const pairs = raw
    .split('&')
    .filter((part) => part !== '')
    .map((part) => {
      const eq = part.indexOf('=');
      return [canonical(eq < 0 ? part : part.slice(0, eq)), eq < 0 ? '' : canonical(part.slice(eq + 1))] as const;
    })
    .filter(([key]) => key !== skip);
  pairs.sort(([ak, av], [bk, bv]) => (ak < bk ? -1 : ak > bk ? 1 : av < bv ? -1 : av > bv ? 1 : 0));
  return pairs.map(([k, v]) => `${k}=${v}`).join('&');
}

const component = fc
  .array(
    fc.oneof(
      fc.constantFrom(
        'a',
        'Z',
        '0',
        '-',
        '.',
        '_',
        '~',
        '=',
        '/',
        ' ',
        '+',
        '!',
        '*',
        '(',
        'é',
        '%',
        '%2F',
        '%2f',
        '%41',
        '%7E',
        '%20',
        '%ZZ',
        'x-id',
        'X-Amz-Date',
      ),
      fc.string({ maxLength: 3 }),
    ),
    { maxLength: 5 },
  )
  .map((parts) => parts.join('').replace(/[&]/g, ''));

test('canonicalQuery equals the decode-encode-sort definition for any query', { timeout: 10_000 }, () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(component, fc.option(component)), { maxLength: 6 }), (pairs) => {
      const raw = pairs.map(([k, v]) => (v === null ? k : `${k}=${v}`)).join('&');
      assert.equal(canonicalQuery(raw), referenceQuery(raw));
      assert.equal(canonicalQuery(raw, 'X-Amz-Signature'), referenceQuery(raw, 'X-Amz-Signature'));
    }),
    { numRuns: 2000 },
  );
});

test('canonicalQuery of a query made of canonical characters only (the common case, checked once) equals the definition', { timeout: 10_000 }, () => {
  const canonicalPart = fc
    .array(fc.constantFrom('a', 'Z', '0', '-', '.', '_', '~', '=', '%2F', '%41', '%7E', '%7e', '%', 'x-id', 'X-Amz-Signature'), { maxLength: 4 })
    .map((parts) => parts.join(''));
  fc.assert(
    fc.property(fc.array(fc.tuple(canonicalPart, fc.option(canonicalPart)), { maxLength: 6 }), (pairs) => {
      const raw = pairs.map(([k, v]) => (v === null ? k : `${k}=${v}`)).join('&');
      assert.equal(canonicalQuery(raw), referenceQuery(raw));
      assert.equal(canonicalQuery(raw, 'X-Amz-Signature'), referenceQuery(raw, 'X-Amz-Signature'));
    }),
    { numRuns: 2000 },
  );
});

test('canonicalUri keeps slashes and canonicalises each segment', { timeout: 10_000 }, () => {
  assert.equal(canonicalUri('/bucket/a%2fb/c d/%7Etilde/%41'), '/bucket/a%2Fb/c%20d/~tilde/A');
  fc.assert(
    fc.property(fc.array(component, { maxLength: 4 }), (segments) => {
      const raw = `/${segments.map((s) => s.replace(/\//g, '')).join('/')}`;
      const expected = raw.split('/').map(canonical).join('/');
      assert.equal(canonicalUri(raw), expected);
    }),
  );
});

test('hmacHex equals createHmac for any key and text, the same key used again included', { timeout: 10_000 }, () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 100 }), fc.array(fc.string({ unit: 'binary', maxLength: 300 }), { minLength: 1, maxLength: 3 }), (bytes, texts) => {
      const key = Buffer.from(bytes);
      for (const text of texts) assert.equal(hmacHex(key, text), createHmac('sha256', key).update(text).digest('hex'));
    }),
    { numRuns: 1000 },
  );
});
