/**
 * `expires_on` / `not_before` of API tokens: strict RFC 3339 date-times with a time zone. Property
 * tests against an oracle of their own (calendar arithmetic by Date.UTC), what Date.parse used to
 * take refused, and the refusal through the API: 400 / 1002 with the pointer and what to send.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { tokenDateTime } from '../../src/api/tokens/token-schema.ts';
import { startApi } from './helpers.ts';

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** Whether the fields name a real day and time of day (Date.UTC rolls over what does not). */
function realInstant(y: number, mo: number, d: number, h: number, mi: number, s: number): boolean {
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59) return false;
  const date = new Date(Date.UTC(2000, mo - 1, d));
  date.setUTCFullYear(y, mo - 1, d);
  return date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

test('accepted exactly when the fields are a real date and time with an offset of at most 23:59, and parsed to that instant', { timeout: 30_000 }, () => {
  const fields = fc.record({
    y: fc.integer({ min: 0, max: 9999 }),
    mo: fc.integer({ min: 0, max: 13 }),
    d: fc.integer({ min: 0, max: 32 }),
    h: fc.integer({ min: 0, max: 25 }),
    mi: fc.integer({ min: 0, max: 61 }),
    s: fc.integer({ min: 0, max: 61 }),
    fraction: fc.option(fc.stringMatching(/^[0-9]{1,9}$/), { nil: undefined }),
    zone: fc.oneof(
      fc.constant('Z' as const),
      fc.record({ sign: fc.constantFrom('+', '-'), oh: fc.integer({ min: 0, max: 25 }), om: fc.integer({ min: 0, max: 61 }) }),
    ),
  });
  fc.assert(
    fc.property(fields, ({ y, mo, d, h, mi, s, fraction, zone }) => {
      const zoneText = zone === 'Z' ? 'Z' : `${zone.sign}${pad(zone.oh)}:${pad(zone.om)}`;
      const text = `${pad(y, 4)}-${pad(mo)}-${pad(d)}T${pad(h)}:${pad(mi)}:${pad(s)}${fraction === undefined ? '' : `.${fraction}`}${zoneText}`;
      const zoneOk = zone === 'Z' || (zone.oh <= 23 && zone.om <= 59);
      const expected = realInstant(y, mo, d, h, mi, s) && zoneOk;
      assert.equal(tokenDateTime.safeParse(text).success, expected, text);
      if (!expected) return;
      const offsetMs = zone === 'Z' ? 0 : (zone.sign === '+' ? 1 : -1) * (zone.oh * 60 + zone.om) * 60_000;
      const utc = new Date(0);
      utc.setUTCFullYear(y, mo - 1, d);
      utc.setUTCHours(h, mi, s, fraction === undefined ? 0 : Math.floor(Number(`0.${fraction}`) * 1000 + 1e-9));
      assert.equal(Date.parse(text), utc.getTime() - offsetMs, `${text} is stored as the instant it names`);
    }),
    { numRuns: 3_000 },
  );
});

test('every instant as toISOString writes it is accepted; what Date.parse alone took is refused', { timeout: 10_000 }, () => {
  fc.assert(
    fc.property(fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }), (date) => {
      assert.ok(tokenDateTime.safeParse(date.toISOString()).success, date.toISOString());
      // Date's other renderings parse, but are not RFC 3339.
      for (const text of [
        date.toString(),
        date.toUTCString(),
        date.toISOString().slice(0, 10),
        date.toISOString().slice(0, 16),
        date.toISOString().replace('Z', ''),
      ]) {
        assert.ok(!tokenDateTime.safeParse(text).success, text);
      }
    }),
    { numRuns: 500 },
  );
  for (const text of [
    '1',
    '2030',
    'March 7',
    '2030-03-07',
    '2030-03-07T10:00',
    '2030-03-07T10:00:00',
    '2030-03-07 10:00:00Z',
    '2030-03-07T10:00:00+0200',
    '2030-02-30T00:00:00Z',
    '2029-02-29T00:00:00Z',
    '2030-01-01T24:00:00Z',
    '2030-01-01T23:59:60Z',
    '+002030-01-01T00:00:00Z',
    ' 2030-01-01T00:00:00Z',
    '',
  ]) {
    assert.ok(!tokenDateTime.safeParse(text).success, JSON.stringify(text));
  }
  fc.assert(
    fc.property(fc.string({ maxLength: 40 }), (text) => {
      // Whatever is accepted is a date-time with a zone that Date.parse reads.
      if (tokenDateTime.safeParse(text).success)
        assert.ok(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(text) && !Number.isNaN(Date.parse(text)), text);
    }),
    { numRuns: 2_000 },
  );
});

test("the API refuses a loose date with 400 / 1002, the field's pointer and what to send, and makes no token", { timeout: 30_000 }, async (t) => {
  const api = await startApi(t);
  const policies = [
    {
      effect: 'allow',
      resources: { [`com.cloudflare.api.account.${api.admin.accountId}`]: '*' },
      permission_groups: [{ id: 'b4992e1108244f5d8bfbd5744320c2e1' }],
    },
  ];
  for (const [field, value] of [
    ['expires_on', '1'],
    ['expires_on', '2030'],
    ['not_before', 'March 7'],
    ['expires_on', '2030-03-07T10:00:00'],
  ] as const) {
    const refused = await api.call('/user/tokens', { method: 'POST', json: { name: 'loose', policies, [field]: value } });
    assert.equal(refused.status, 400, JSON.stringify(refused.body));
    assert.deepEqual(refused.body.errors, [
      {
        code: 1002,
        source: { pointer: `/${field}` },
        message: `'${value}' is not a valid value for ${field} because it must be an RFC 3339 date-time with a time zone, such as 2030-01-01T00:00:00Z or 2030-01-01T09:00:00+09:00`,
      },
    ]);
  }
  assert.deepEqual(await api.control.apiTokens.list(api.admin.accountId), []);
  const made = await api.call('/user/tokens', {
    method: 'POST',
    json: { name: 'strict', policies, not_before: '2030-01-01T09:00:00+09:00', expires_on: '2030-01-02T00:00:00.5Z' },
  });
  assert.equal(made.status, 200, JSON.stringify(made.body));
  assert.deepEqual([made.body.result.not_before, made.body.result.expires_on], ['2030-01-01T00:00:00Z', '2030-01-02T00:00:00Z']);
  const update = await api.call(`/user/tokens/${made.body.result.id}`, { method: 'PUT', json: { name: 'strict', policies, expires_on: 'tomorrow' } });
  assert.equal(update.status, 400);
  assert.equal(update.body.errors[0].source.pointer, '/expires_on');
});
