/** onlyIf as objects and Headers, and their truth table through a real engine. */
import { parseEtagList, toConditional } from '../../../src/store/binding/conditional.ts';
import type { StoreConditional } from '../../../src/store/binding/index.ts';
import { assert, rejectsWith, type BindingCases } from './case-kit.ts';

const strong = (value: string) => ({ type: 'strong', value });
const weak = (value: string) => ({ type: 'weak', value });

/** The conditional cases for a stored object of etag E uploaded at T (ms), named, with whether each passes. */
function truthTable(E: string, T: number): Array<[string, StoreConditional | Headers, boolean]> {
  const second = (ms: number) => new Date(ms).toUTCString();
  // The whole second T falls in: with secondsGranularity, dates in it are T's own second.
  const secondStart = T - (T % 1000);
  return [
    ['no condition', {}, true],
    ['etagMatches E', { etagMatches: E }, true],
    ['etagMatches other', { etagMatches: 'other' }, false],
    ['etagMatches *', { etagMatches: '*' }, true],
    ['etagDoesNotMatch E', { etagDoesNotMatch: E }, false],
    ['etagDoesNotMatch other', { etagDoesNotMatch: 'other' }, true],
    ['etagDoesNotMatch *', { etagDoesNotMatch: '*' }, false],
    ['uploadedAfter T-1', { uploadedAfter: new Date(T - 1) }, true],
    ['uploadedAfter T (strict)', { uploadedAfter: new Date(T) }, false],
    ['uploadedAfter T+1', { uploadedAfter: new Date(T + 1) }, false],
    ['uploadedBefore T+1', { uploadedBefore: new Date(T + 1) }, true],
    ['uploadedBefore T (strict)', { uploadedBefore: new Date(T) }, false],
    ['uploadedBefore T-1', { uploadedBefore: new Date(T - 1) }, false],
    ['passing etagMatches overrides uploadedBefore', { etagMatches: E, uploadedBefore: new Date(T - 1) }, true],
    ['failing etagMatches, passing uploadedBefore', { etagMatches: 'other', uploadedBefore: new Date(T + 1) }, false],
    ['passing etagDoesNotMatch overrides uploadedAfter', { etagDoesNotMatch: 'other', uploadedAfter: new Date(T + 1) }, true],
    ['failing etagDoesNotMatch, passing uploadedAfter', { etagDoesNotMatch: E, uploadedAfter: new Date(T - 1) }, false],
    ['etagMatches E and etagDoesNotMatch E', { etagMatches: E, etagDoesNotMatch: E }, false],
    ['passing etagMatches does not override uploadedAfter', { etagMatches: E, uploadedAfter: new Date(T + 1) }, false],
    ['passing etagDoesNotMatch does not override uploadedBefore', { etagDoesNotMatch: 'other', uploadedBefore: new Date(T - 1) }, false],
    [
      'all four, each etag test overriding its date test',
      { etagMatches: E, uploadedBefore: new Date(T - 1), etagDoesNotMatch: 'other', uploadedAfter: new Date(T + 1) },
      true,
    ],
    [
      'all four, a failing etagMatches failing the passing rest',
      { etagMatches: 'other', etagDoesNotMatch: 'other', uploadedAfter: new Date(T - 1), uploadedBefore: new Date(T + 1) },
      false,
    ],
    ['seconds: uploadedAfter the start of its second', { uploadedAfter: new Date(secondStart), secondsGranularity: true }, false],
    ['seconds: uploadedBefore the end of its second', { uploadedBefore: new Date(secondStart + 999), secondsGranularity: true }, false],
    ['seconds: uploadedAfter the second before', { uploadedAfter: new Date(secondStart - 1), secondsGranularity: true }, true],
    ['seconds: uploadedBefore the next second', { uploadedBefore: new Date(secondStart + 1000), secondsGranularity: true }, true],
    ['If-Match "E"', new Headers({ 'if-match': `"${E}"` }), true],
    ['If-Match W/"E" (strong comparison)', new Headers({ 'if-match': `W/"${E}"` }), false],
    ['If-Match list', new Headers({ 'if-match': `"x", "${E}"` }), true],
    ['If-Match *', new Headers({ 'if-match': '*' }), true],
    ['If-None-Match "E"', new Headers({ 'if-none-match': `"${E}"` }), false],
    ['If-None-Match W/"E" (weak comparison)', new Headers({ 'if-none-match': `W/"${E}"` }), false],
    ['If-None-Match other', new Headers({ 'if-none-match': '"x"' }), true],
    ['If-None-Match *', new Headers({ 'if-none-match': '*' }), false],
    ['If-Modified-Since own Last-Modified', new Headers({ 'if-modified-since': second(T) }), false],
    ['If-Modified-Since a second earlier', new Headers({ 'if-modified-since': second(T - 1000) }), true],
    ['If-Modified-Since garbage (epoch 0)', new Headers({ 'if-modified-since': 'garbage' }), true],
    ['If-Unmodified-Since own Last-Modified (strict)', new Headers({ 'if-unmodified-since': second(T) }), false],
    ['If-Unmodified-Since a second later', new Headers({ 'if-unmodified-since': second(T + 1000) }), true],
    ['If-Range alone is ignored', new Headers({ 'if-range': '"nope"' }), true],
  ];
}

export const CASES: BindingCases = {
  'etag lists: elements, whitespace, empty elements, wildcard': () => {
    assert.deepEqual(parseEtagList('"a"', 'if-match'), [strong('a')]);
    assert.deepEqual(parseEtagList('W/"a"', 'if-match'), [weak('a')]);
    assert.deepEqual(parseEtagList(' "a" , , W/"b",,"c" ', 'if-match'), [strong('a'), weak('b'), strong('c')]);
    assert.deepEqual(parseEtagList('"a,b"', 'if-match'), [strong('a,b')], 'commas inside quotes belong to the etag');
    assert.deepEqual(parseEtagList('""', 'if-match'), [strong('')]);
    assert.deepEqual(parseEtagList('*', 'if-none-match'), [{ type: 'wildcard' }]);
    assert.deepEqual(parseEtagList('"a", *', 'if-none-match'), [{ type: 'wildcard' }], 'a wildcard replaces the list');
    assert.deepEqual(parseEtagList('"a" trailing', 'if-match'), [strong('a')], 'text without quotes or * ends the scan');
    assert.deepEqual(parseEtagList('junk "a"', 'if-match'), [strong('a')], 'the scan looks for the next quote');
  },
  'etag lists: the runtime errors, word for word': () => {
    const cases: Array<[string, 'if-match' | 'if-none-match', string]> = [
      ['abc', 'if-match', 'Invalid ETag in if-match header'],
      ['abc', 'if-none-match', 'Invalid ETag in if-none-match header'],
      ['', 'if-match', 'Invalid ETag in if-match header'],
      [' , ,', 'if-none-match', 'Invalid ETag in if-none-match header'],
      ['"abc', 'if-match', 'Unclosed double quote for Etag'],
      ['"a", "b', 'if-match', 'Unclosed double quote for Etag'],
      ['W"a"', 'if-match', 'Weak etags must start with W/ and their value must be quoted'],
      ['W/ "a"', 'if-match', 'Weak etags must start with W/ and their value must be quoted'],
      [
        '"a" "b"',
        'if-match',
        `Comma was expected to separate etags. Encountered a double quote character '"' instead. This would otherwise indicate the start of a new strong etag.`,
      ],
      ['"a" *', 'if-none-match', "Comma was expected to separate etags. Encountered a wildcard character '*' instead."],
      [
        '"a" W/"b"',
        'if-match',
        "Comma was expected to separate etags. Encountered a weak quotation character 'W' instead. This would otherwise indicate the start of a new weak etag.",
      ],
    ];
    for (const [header, name, message] of cases) {
      assert.throws(
        () => parseEtagList(header, name),
        (error: unknown) => error instanceof Error && error.constructor === Error && error.message === message,
        header,
      );
    }
  },
  'onlyIf object: conversion, wildcard, quotes, dates': () => {
    assert.equal(toConditional(undefined), undefined);
    assert.equal(toConditional(null), undefined);
    assert.deepEqual(toConditional({}), {});
    assert.deepEqual(
      toConditional({
        etagMatches: 'e',
        etagDoesNotMatch: '*',
        uploadedAfter: 7,
        uploadedBefore: new Date(9),
        secondsGranularity: true,
      } as unknown as StoreConditional),
      {
        etagMatches: [strong('e')],
        etagDoesNotMatch: [{ type: 'wildcard' }],
        uploadedAfter: 7,
        uploadedBefore: 9,
        secondsGranularity: true,
      },
    );
    for (const quoted of ['"e"', '"', '""']) {
      assert.throws(() => toConditional({ etagDoesNotMatch: quoted }), {
        name: 'TypeError',
        message: `Conditional ETag should not be wrapped in quotes (${quoted}).`,
      });
    }
    assert.deepEqual(toConditional({ etagMatches: 'W/"e"' }), { etagMatches: [strong('W/"e"')] }, 'only a value quoted at both ends is refused');
    assert.throws(() => toConditional({ etagDoesNotMatch: 5 } as unknown as StoreConditional), {
      name: 'TypeError',
      message: "Incorrect type for the 'etagDoesNotMatch' field on 'Conditional': the provided value is not of type 'string'.",
    });
    assert.throws(() => toConditional({ uploadedAfter: '2020-01-01' } as unknown as StoreConditional), {
      name: 'TypeError',
      message: "Incorrect type for the 'uploadedAfter' field on 'Conditional': the provided value is not of type 'date'.",
    });
    assert.throws(() => toConditional({ uploadedBefore: 1e16 } as unknown as StoreConditional), {
      name: 'TypeError',
      message: "This API doesn't support dates after 2189.",
    });
    assert.throws(() => toConditional('x' as never, 'PutOptions'), { name: 'TypeError', message: /on 'PutOptions'/ });
  },
  'onlyIf Headers: four headers, seconds granularity, lenient dates, If-Range ignored': () => {
    assert.equal(toConditional(new Headers()), undefined);
    assert.equal(toConditional(new Headers({ 'if-range': '"x"', 'content-type': 'a/b' })), undefined);
    assert.deepEqual(
      toConditional(
        new Headers({
          'if-match': '"a", W/"b"',
          'if-none-match': '*',
          'if-modified-since': 'Sun, 22 Nov 2026 12:00:00 GMT',
          'if-unmodified-since': 'garbage',
        }),
      ),
      {
        secondsGranularity: true,
        etagMatches: [strong('a'), weak('b')],
        etagDoesNotMatch: [{ type: 'wildcard' }],
        uploadedAfter: Date.UTC(2026, 10, 22, 12),
        uploadedBefore: 0,
      },
    );
    assert.throws(() => toConditional(new Headers({ 'if-none-match': 'bare' })), { message: 'Invalid ETag in if-none-match header' });
  },
  'truth table through the engine: get gives a body or a bodiless object, put writes or gives null': async ({ bucket: b }) => {
    const stored = (await b.put('k', 'value'))!;
    const E = stored.etag;
    for (const [name, onlyIf, passes] of truthTable(E, stored.uploaded.getTime())) {
      const got = await b.get('k', { onlyIf });
      assert.ok(got, name);
      assert.equal('body' in got, passes, `get: ${name}`);
      assert.equal(got.etag, E);
      if (!passes) assert.deepEqual(got.range, { offset: 0, length: 5 }, 'a failed condition reports the full range');
    }
    for (let i = 0; i < truthTable(E, 0).length; i++) {
      // Each object has its own upload time: the row is made for it.
      const { uploaded } = (await b.put(`p${i}`, 'value'))!;
      const [name, onlyIf, passes] = truthTable(E, uploaded.getTime())[i]!;
      const put = await b.put(`p${i}`, 'other', { onlyIf });
      assert.equal(put !== null, passes, `put: ${name}`);
      assert.equal(await ((await b.get(`p${i}`)) as { text(): Promise<string> }).text(), passes ? 'other' : 'value', `stored after put: ${name}`);
    }
  },
  'conditions on a missing key: get is null; put proceeds unless etagMatches or uploadedAfter is given': async ({ bucket: b }) => {
    assert.equal(await b.get('none', { onlyIf: { etagMatches: '*' } }), null);
    assert.equal(await b.get('none', { onlyIf: new Headers({ 'if-none-match': '*' }) }), null);
    assert.equal(await b.put('a', 'x', { onlyIf: { etagMatches: '*' } }), null);
    assert.equal(await b.put('b', 'x', { onlyIf: { etagMatches: 'e' } }), null);
    assert.equal(await b.put('c', 'x', { onlyIf: { uploadedAfter: new Date(0) } }), null);
    assert.equal(await b.head('a'), null);
    assert.ok(await b.put('d', 'x', { onlyIf: { etagDoesNotMatch: '*' } }), 'create only if absent');
    assert.ok(await b.put('e', 'x', { onlyIf: { uploadedBefore: new Date(0) } }));
    assert.ok(await b.put('g', 'x', { onlyIf: { etagDoesNotMatch: 'e', uploadedBefore: new Date(0) } }));
    assert.equal(await b.put('h', 'x', { onlyIf: { etagMatches: 'e', uploadedBefore: new Date(0) } }), null);
    assert.equal(await b.put('i', 'x', { onlyIf: { etagDoesNotMatch: 'e', uploadedAfter: new Date(0) } }), null);
    assert.ok(await b.put('f', 'x', { onlyIf: new Headers({ 'if-none-match': '*' }) }));
    assert.equal(await b.put('f', 'y', { onlyIf: new Headers({ 'if-none-match': '*' }) }), null, 'and not a second time');
  },
  'a failing condition suppresses range errors; bad conditions reject before any I/O': async ({ bucket: b }) => {
    const { etag } = (await b.put('k', 'abc'))!;
    const got = await b.get('k', { onlyIf: { etagDoesNotMatch: etag }, range: { offset: 99 } });
    assert.ok(got && !('body' in got));
    await rejectsWith(b.get('k', { onlyIf: { etagMatches: `"${etag}"` } }), TypeError, `Conditional ETag should not be wrapped in quotes ("${etag}").`);
    await rejectsWith(b.put('k', 'new', { onlyIf: new Headers({ 'if-match': '"a" "b"' }) }), Error, /^Comma was expected/);
    assert.equal(await ((await b.get('k')) as { text(): Promise<string> }).text(), 'abc');
  },
};
