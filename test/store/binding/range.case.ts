/** Range objects and Range headers, with fast-check properties and engine reads. */
import fc from 'fast-check';
import type { GetResult, StoreRange } from '../../../src/store/binding/index.ts';
import { parseRangeHeader, toRangeRequest } from '../../../src/store/binding/range.ts';
import { assert, rejectsWith, type BindingCases } from './case-kit.ts';

const range = (value: unknown) => toRangeRequest(value as StoreRange);

export const CASES: BindingCases = {
  'range object: forms, coercion, and `{}` as the whole object': () => {
    assert.equal(range(undefined), undefined);
    assert.equal(range(null), undefined);
    assert.equal(range({}), undefined, 'range: {} serves the whole object (production: 10001)');
    assert.deepEqual(range({ offset: 2 }), { offset: 2 });
    assert.deepEqual(range({ length: 3 }), { length: 3 });
    assert.deepEqual(range({ offset: 0, length: 0 }), { offset: 0, length: 0 }, 'length 0 passes the runtime; the engine refuses it');
    assert.deepEqual(range({ suffix: 0 }), { suffix: 0 });
    assert.deepEqual(range({ offset: '1', length: '2' }), { offset: 1, length: 2 });
    assert.deepEqual(range({ suffix: '4' }), { suffix: 4 });
  },
  'range object: the runtime errors, in the runtime order': () => {
    const cases: Array<[unknown, ErrorConstructor, string]> = [
      [{ offset: -1 }, RangeError, 'Invalid range. Starting offset (-1) must be greater than or equal to 0.'],
      [{ offset: 1.5 }, RangeError, 'Invalid range. Starting offset (1.5) must be an integer, not floating point.'],
      [{ length: -2 }, RangeError, 'Invalid range. Length (-2) must be greater than or equal to 0.'],
      [{ length: 0.5 }, RangeError, 'Invalid range. Length (0.5) must be an integer, not floating point.'],
      [{ suffix: 1, offset: 0 }, TypeError, 'Suffix is incompatible with offset.'],
      [{ suffix: 1, length: 1 }, TypeError, 'Suffix is incompatible with length.'],
      [{ suffix: -1 }, RangeError, 'Invalid suffix. Suffix (-1) must be greater than or equal to 0.'],
      [{ suffix: 1.5 }, RangeError, 'Invalid range. Suffix (1.5) must be an integer, not floating point.'],
      // Offset and length are checked before the suffix combination.
      [{ suffix: 1, offset: -1 }, RangeError, 'Invalid range. Starting offset (-1) must be greater than or equal to 0.'],
      [{ suffix: -1, length: 0.5 }, RangeError, 'Invalid range. Length (0.5) must be an integer, not floating point.'],
      [{ offset: -1, length: -1 }, RangeError, 'Invalid range. Starting offset (-1) must be greater than or equal to 0.'],
    ];
    for (const [value, type, message] of cases) {
      assert.throws(
        () => range(value),
        (error: unknown) => error instanceof type && error.constructor === type && error.message === message,
        JSON.stringify(value),
      );
    }
  },
  'Range header: single ranges are used; anything else is the whole object': () => {
    assert.deepEqual(parseRangeHeader('bytes=0-4'), { offset: 0, length: 5 });
    assert.deepEqual(parseRangeHeader('bytes=2-2'), { offset: 2, length: 1 });
    assert.deepEqual(parseRangeHeader(' bytes = 3 - '), { offset: 3 });
    assert.deepEqual(parseRangeHeader('bytes=-2'), { suffix: 2 });
    assert.deepEqual(parseRangeHeader('bytes=5-99999999999999999999999'), { offset: 5 }, 'an end past any size is open-ended');
    for (const whole of [
      '',
      'bytes=',
      'bytes=-',
      'bytes=3-1',
      'bytes=0-1,3-4',
      'bytes=-0',
      'items=0-1',
      'bytes=a-b',
      'bytes=1.5-2',
      'bytes=99999999999999999999-',
    ]) {
      assert.equal(parseRangeHeader(whole), undefined, whole);
    }
    assert.equal(range(new Headers()), undefined);
    assert.equal(range(new Headers({ 'content-range': 'bytes 0-1/2' })), undefined);
    assert.deepEqual(range(new Headers({ range: 'bytes=1-2' })), { offset: 1, length: 2 });
  },
  'property: Range header parsing never throws, and what it returns is a valid range': () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.string().map((s) => `bytes=${s}`),
          fc.tuple(fc.option(fc.nat()), fc.option(fc.nat())).map(([a, b]) => `bytes=${a ?? ''}-${b ?? ''}`),
        ),
        (header) => {
          const parsed = parseRangeHeader(header);
          if (parsed === undefined) return;
          for (const value of Object.values(parsed)) assert.ok(Number.isSafeInteger(value) && value >= 0, header);
          if ('suffix' in parsed) assert.ok(parsed.suffix > 0);
          else assert.ok(parsed.length === undefined || parsed.length > 0);
          assert.doesNotThrow(() => range(parsed));
        },
      ),
    );
  },
  'property: a range object is accepted exactly when each number is a non-negative integer': () => {
    const number = fc.oneof(fc.integer({ min: -1000, max: 1000 }), fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }));
    const ok = (n: number) => Number.isInteger(n) && n >= 0;
    fc.assert(
      fc.property(fc.option(number, { nil: undefined }), fc.option(number, { nil: undefined }), (offset, length) => {
        const value = { ...(offset === undefined ? {} : { offset }), ...(length === undefined ? {} : { length }) };
        const valid = (offset === undefined || ok(offset)) && (length === undefined || ok(length));
        if (valid) assert.deepEqual(range(value), offset === undefined && length === undefined ? undefined : value);
        else assert.throws(() => range(value), RangeError);
      }),
    );
    fc.assert(
      fc.property(number, (suffix) => {
        if (ok(suffix)) assert.deepEqual(range({ suffix }), { suffix });
        else assert.throws(() => range({ suffix }), RangeError);
      }),
    );
  },
  'ranged reads through the engine: served bytes and the range field': async ({ bucket: b }) => {
    await b.put('k', 'hello world');
    const read = async (r: StoreRange | Headers) => {
      const got = (await b.get('k', { range: r })) as GetResult;
      return [await got.text(), got.range];
    };
    assert.deepEqual(await read({ offset: 6 }), ['world', { offset: 6, length: 5 }]);
    assert.deepEqual(await read({ offset: 0, length: 5 }), ['hello', { offset: 0, length: 5 }]);
    assert.deepEqual(await read({ length: 4 }), ['hell', { offset: 0, length: 4 }]);
    assert.deepEqual(await read({ offset: 6, length: 100 }), ['world', { offset: 6, length: 5 }], 'length is clamped');
    assert.deepEqual(await read({ suffix: 2 }), ['ld', { offset: 9, length: 2 }]);
    assert.deepEqual(await read({ suffix: 100 }), ['hello world', { offset: 0, length: 11 }], 'suffix is clamped');
    assert.deepEqual(await read({} as StoreRange), ['hello world', { offset: 0, length: 11 }]);
    assert.deepEqual(await read(new Headers({ range: 'bytes=0-4' })), ['hello', { offset: 0, length: 5 }]);
    assert.deepEqual(await read(new Headers({ range: 'bytes=-5' })), ['world', { offset: 6, length: 5 }]);
    assert.deepEqual(await read(new Headers({ range: 'bytes=6-' })), ['world', { offset: 6, length: 5 }]);
    assert.deepEqual(await read(new Headers()), ['hello world', { offset: 0, length: 11 }]);
    const got = (await b.get('k')) as GetResult;
    assert.deepEqual(got.range, { offset: 0, length: 11 }, 'range is filled in without a range option');
  },
  'unsatisfiable: a range object rejects with 10039, a Range header serves the whole object': async ({ bucket: b }) => {
    await b.put('k', 'hello');
    await b.put('empty', '');
    const unsatisfiable = 'get: The requested range is not satisfiable (10039)';
    await rejectsWith(b.get('k', { range: { offset: 5 } }), Error, unsatisfiable);
    await rejectsWith(b.get('k', { range: { offset: 9 } }), Error, unsatisfiable);
    await rejectsWith(b.get('k', { range: { offset: 1, length: 0 } }), Error, unsatisfiable);
    await rejectsWith(b.get('k', { range: { length: 0 } }), Error, unsatisfiable);
    await rejectsWith(b.get('k', { range: { suffix: 0 } }), Error, unsatisfiable);
    await rejectsWith(b.get('empty', { range: { offset: 0 } }), Error, unsatisfiable);
    await rejectsWith(b.get('empty', { range: { suffix: 1 } }), Error, unsatisfiable);
    for (const header of ['bytes=10-', 'bytes=5-9', 'bytes=-0', 'bytes=3-1', 'bytes=0-1,2-3', 'bytes=x']) {
      const got = (await b.get('k', { range: new Headers({ range: header }) })) as GetResult;
      assert.equal(await got.text(), 'hello', header);
      assert.deepEqual(got.range, { offset: 0, length: 5 }, header);
    }
    const empty = (await b.get('empty', { range: new Headers({ range: 'bytes=0-' }) })) as GetResult;
    assert.equal(await empty.text(), '');
    const headers = new Headers({ range: 'bytes=10-', 'if-none-match': '"nope"' });
    assert.equal(await ((await b.get('k', { onlyIf: headers, range: headers })) as GetResult).text(), 'hello', 'one Headers for both');
    await rejectsWith(b.get('k', { range: { offset: -1 } }), RangeError, 'Invalid range. Starting offset (-1) must be greater than or equal to 0.');
  },
};
