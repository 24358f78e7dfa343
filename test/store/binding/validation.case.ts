/** The binding's argument checks one by one: ranges, Range headers, etag lists, onlyIf, checksum options, the include rule. */
import fc from 'fast-check';
import { toExpectedChecksum } from '../../../src/store/binding/checksums.ts';
import { parseEtagList, toConditional } from '../../../src/store/binding/conditional.ts';
import { listHonorsInclude } from '../../../src/store/binding/compat.ts';
import { parseRangeHeader, toRangeRequest } from '../../../src/store/binding/range.ts';
import { assert, type BindingCases } from './case-kit.ts';

export const CASES: BindingCases = {
  'range objects: exact runtime errors and coercion': () => {
    assert.deepEqual(toRangeRequest({ offset: '1' as never }), { offset: 1 });
    assert.deepEqual(toRangeRequest({ suffix: 3 }), { suffix: 3 });
    assert.equal(toRangeRequest({} as never), undefined);
    const cases: Array<[unknown, ErrorConstructor, string]> = [
      [{ offset: -1 }, RangeError, 'Invalid range. Starting offset (-1) must be greater than or equal to 0.'],
      [{ offset: 1.5 }, RangeError, 'Invalid range. Starting offset (1.5) must be an integer, not floating point.'],
      [{ length: -2 }, RangeError, 'Invalid range. Length (-2) must be greater than or equal to 0.'],
      [{ length: 0.5 }, RangeError, 'Invalid range. Length (0.5) must be an integer, not floating point.'],
      [{ suffix: 1, offset: 0 }, TypeError, 'Suffix is incompatible with offset.'],
      [{ suffix: 1, length: 1 }, TypeError, 'Suffix is incompatible with length.'],
      [{ suffix: -1 }, RangeError, 'Invalid suffix. Suffix (-1) must be greater than or equal to 0.'],
      [{ suffix: 1.5 }, RangeError, 'Invalid range. Suffix (1.5) must be an integer, not floating point.'],
    ];
    for (const [range, type, message] of cases)
      assert.throws(
        () => toRangeRequest(range as never),
        (e: unknown) => e instanceof type && (e as Error).message === message,
      );
  },
  'Range headers: one valid range is used, anything else means the whole object': () => {
    assert.deepEqual(parseRangeHeader('bytes=0-4'), { offset: 0, length: 5 });
    assert.deepEqual(parseRangeHeader('bytes=3-'), { offset: 3 });
    assert.deepEqual(parseRangeHeader('bytes=-2'), { suffix: 2 });
    for (const bad of ['bytes=3-1', 'bytes=0-1,3-4', 'items=0-1', 'garbage', 'bytes=-']) assert.equal(parseRangeHeader(bad), undefined, bad);
    assert.equal(toRangeRequest(new Headers()), undefined);
  },
  'property: Range header parsing never throws; object ranges accept exactly non-negative integers': () => {
    fc.assert(
      fc.property(fc.string(), (header) => {
        parseRangeHeader(header);
        parseRangeHeader(`bytes=${header}`);
      }),
    );
    fc.assert(
      fc.property(fc.oneof(fc.integer({ min: -1000, max: 1000 }), fc.double({ noNaN: true, min: -1e6, max: 1e6 })), (offset) => {
        const ok = Number.isInteger(offset) && offset >= 0;
        if (ok) assert.deepEqual(toRangeRequest({ offset }), { offset });
        else assert.throws(() => toRangeRequest({ offset }), RangeError);
      }),
    );
  },
  'etag lists follow RFC 7232 with the runtime errors': () => {
    assert.deepEqual(parseEtagList('"a", W/"b" ,,"c"', 'if-match'), [
      { type: 'strong', value: 'a' },
      { type: 'weak', value: 'b' },
      { type: 'strong', value: 'c' },
    ]);
    assert.deepEqual(parseEtagList(' * ', 'if-none-match'), [{ type: 'wildcard' }]);
    assert.throws(() => parseEtagList('abc', 'if-match'), { message: 'Invalid ETag in if-match header' });
    assert.throws(() => parseEtagList('abc', 'if-none-match'), { message: 'Invalid ETag in if-none-match header' });
    assert.throws(() => parseEtagList('"abc', 'if-match'), { message: 'Unclosed double quote for Etag' });
    assert.throws(() => parseEtagList('"a" "b"', 'if-match'), {
      message: `Comma was expected to separate etags. Encountered a double quote character '"' instead. This would otherwise indicate the start of a new strong etag.`,
    });
    assert.throws(() => parseEtagList('Wx"a"', 'if-match'), { message: 'Weak etags must start with W/ and their value must be quoted' });
    assert.throws(() => parseEtagList('Wx', 'if-match'), { message: 'Invalid ETag in if-match header' });
  },
  'onlyIf objects and Headers convert to engine conditions': () => {
    assert.deepEqual(toConditional({ etagMatches: 'x', etagDoesNotMatch: '*', uploadedBefore: new Date(5) }), {
      etagMatches: [{ type: 'strong', value: 'x' }],
      etagDoesNotMatch: [{ type: 'wildcard' }],
      uploadedBefore: 5,
    });
    assert.throws(() => toConditional({ etagMatches: '"x"' }), { name: 'TypeError', message: 'Conditional ETag should not be wrapped in quotes ("x").' });
    assert.throws(() => toConditional({ etagMatches: 123 as never }), {
      message: "Incorrect type for the 'etagMatches' field on 'Conditional': the provided value is not of type 'string'.",
    });
    assert.throws(() => toConditional({ uploadedBefore: '2020' as never }), {
      message: "Incorrect type for the 'uploadedBefore' field on 'Conditional': the provided value is not of type 'date'.",
    });
    const headers = new Headers({ 'if-modified-since': 'not a date', 'if-range': '"x"' });
    assert.deepEqual(toConditional(headers), { secondsGranularity: true, uploadedAfter: 0 });
    assert.equal(toConditional(new Headers({ 'if-range': '"x"' })), undefined);
  },
  'checksum options: one algorithm, right size, hex': () => {
    assert.deepEqual(toExpectedChecksum({ md5: 'AB'.repeat(16) }), { algorithm: 'md5', hex: 'ab'.repeat(16) });
    assert.deepEqual(toExpectedChecksum({ sha1: new Uint8Array(20).fill(255).buffer }), { algorithm: 'sha1', hex: 'ff'.repeat(20) });
    assert.throws(() => toExpectedChecksum({ md5: 'a'.repeat(32), sha1: 'a'.repeat(40) }), { message: 'You cannot specify multiple hashing algorithms.' });
    assert.throws(() => toExpectedChecksum({ md5: new ArrayBuffer(3) }), { message: 'MD5 is 16 bytes, not 3' });
    assert.throws(() => toExpectedChecksum({ md5: 'abc' }), { message: 'MD5 is 32 hex characters, not 3' });
    assert.throws(() => toExpectedChecksum({ md5: 'z'.repeat(32) }), { message: "Provided MD5 wasn't a valid hex string" });
    assert.throws(() => toExpectedChecksum({ sha256: 'a' }), { message: 'SHA-256 is 64 hex characters, not 1' });
    assert.throws(() => toExpectedChecksum({ sha384: new ArrayBuffer(1) }), { message: 'SHA-384 is 48 bytes, not 1' });
    assert.throws(() => toExpectedChecksum({ sha512: 'q'.repeat(128) }), { message: "Provided SHA-512 wasn't a valid hex string" });
  },
  'list honours include from 2022-08-04 or with the flag': () => {
    assert.equal(listHonorsInclude('2022-08-03', []), false);
    assert.equal(listHonorsInclude('2022-08-03', ['store_list_honor_include']), true);
    assert.equal(listHonorsInclude('2022-08-04', []), true);
  },
};
