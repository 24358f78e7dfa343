import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { z } from 'zod';
import { rulesetResult } from '../../src/api/rulesets/ruleset-schema.ts';
import { startApi, type ApiFixture, type ErrorEntry, type Json } from './helpers.ts';

const PHASE = 'http_log_custom_fields';
type Ruleset = z.infer<typeof rulesetResult>;
const fields = (prefix: string, count: number, kind: 'request' | 'response' | 'cookie' = 'request') =>
  Array.from({ length: count }, (_, i) => ({ name: kind === 'cookie' ? `${prefix}Cookie${i}` : `${prefix}-${i}` }));
const logRule = (params: object, extra: object = {}) => ({ action: 'log_custom_field', expression: 'true', action_parameters: params, ...extra });

async function zoneOf(api: ApiFixture, name = 'example.com'): Promise<string> {
  return (await api.call('/zones', { method: 'POST', json: { name } })).body.result.id;
}

test(
  'the custom-fields walkthrough (docs/management-api.md) with the official SDK: list, create only if missing, put rules, read back',
  { timeout: 10_000 },
  async (t) => {
    const api = await startApi(t);
    const zoneId = await zoneOf(api);
    const cf = api.sdk();
    const find = async () => {
      for await (const ruleset of cf.rulesets.list({ zone_id: zoneId })) if (ruleset.kind === 'zone' && ruleset.phase === PHASE) return ruleset.id;
      return undefined;
    };
    await assert.rejects(
      cf.rulesets.phases.get(PHASE, { zone_id: zoneId }),
      (error: Json) =>
        error.status === 404 && error.errors[0].code === 10003 && error.errors[0].message === `could not find entrypoint ruleset in the ${PHASE} phase`,
    );
    let rulesetId = await find();
    assert.equal(rulesetId, undefined);
    const created = rulesetResult.parse(
      await cf.rulesets.create({ zone_id: zoneId, name: 'Zone-level phase entry point', kind: 'zone', description: 'Custom log fields', phase: PHASE }),
    );
    assert.deepEqual([created.version, created.rules, created.kind, created.phase], ['1', [], 'zone', PHASE]);
    rulesetId = await find();
    assert.equal(rulesetId, created.id);
    const updated = (await cf.rulesets.update(rulesetId!, {
      zone_id: zoneId,
      rules: [
        {
          action: 'log_custom_field',
          expression: 'true',
          description: 'Set Logpush custom fields for HTTP requests',
          action_parameters: {
            request_fields: [{ name: 'content-type' }, { name: 'x-forwarded-for' }, { name: 'host' }],
            response_fields: [{ name: 'server' }, { name: 'content-type' }, { name: 'allow' }],
            cookie_fields: [{ name: '__ga' }, { name: 'accountNumber' }, { name: '__cfruid' }],
          },
        },
      ],
    })) as Ruleset;
    rulesetResult.parse(updated);
    assert.equal(updated.version, '2');
    const [rule] = updated.rules;
    assert.deepEqual(Object.keys(rule!).sort(), [
      'action',
      'action_parameters',
      'description',
      'enabled',
      'expression',
      'id',
      'last_updated',
      'ref',
      'version',
    ]);
    assert.deepEqual([rule!.version, rule!.enabled, rule!.ref, rule!.expression], ['1', true, rule!.id, 'true']);
    assert.match(updated.last_updated, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    assert.deepEqual(await cf.rulesets.get(rulesetId!, { zone_id: zoneId }), updated);
    assert.deepEqual(await cf.rulesets.phases.get(PHASE, { zone_id: zoneId }), updated);
    assert.deepEqual(
      await api.control.getCustomFieldsRule(zoneId),
      {
        requestFields: ['content-type', 'x-forwarded-for', 'host'],
        responseFields: ['server', 'content-type', 'allow'],
        cookieFields: ['__ga', 'accountNumber', '__cfruid'],
      },
      'the edge reads the new rule at once',
    );
    await assert.rejects(cf.rulesets.create({ zone_id: zoneId, name: 'again', kind: 'zone', phase: PHASE }), (error: Json) => {
      assert.equal(error.status, 400);
      assert.deepEqual(error.errors, [
        {
          code: 20217,
          message: `'zone' is not a valid value for kind because exceeded maximum number of zone rulesets for phase ${PHASE}`,
          source: { pointer: '/kind' },
        },
      ]);
      return true;
    });
    await cf.rulesets.delete(rulesetId!, { zone_id: zoneId });
    const deleted = await api.call(`/zones/${zoneId}/rulesets/${rulesetId}`, { method: 'DELETE' });
    assert.deepEqual([deleted.status, deleted.body.errors[0]], [404, { code: 10003, message: `could not find ruleset ${rulesetId}` }]);
    assert.equal(await api.control.getCustomFieldsRule(zoneId), null);
  },
);

test('DELETE answers 204 with no body; PUT entrypoint creates; versions and rule identity', { timeout: 10_000 }, async (t) => {
  const api = await startApi(t);
  const zoneId = await zoneOf(api);
  const entry = `/zones/${zoneId}/rulesets/phases/${PHASE}/entrypoint`;
  const first = await api.call(entry, {
    method: 'PUT',
    json: { rules: [logRule({ request_fields: [{ name: 'x-a' }] }, { ref: 'mine' }), logRule({ cookie_fields: [{ name: 'Sid' }] })] },
  });
  assert.deepEqual([first.status, first.body.result.name, first.body.result.version], [200, 'default', '1']);
  const [kept, other] = first.body.result.rules;
  api.clock.advance(1000);
  const second = await api.call(entry, {
    method: 'PUT',
    json: {
      rules: [
        logRule({ request_fields: [{ name: 'x-a' }] }, { ref: 'mine' }),
        logRule({ cookie_fields: [{ name: 'Sid' }, { name: 'Other' }] }, { id: other.id }),
        logRule({ response_fields: [{ name: 'server' }] }),
      ],
    },
  });
  const rules = second.body.result.rules;
  assert.equal(second.body.result.version, '2');
  assert.deepEqual(
    [rules[0].id, rules[0].version, rules[0].last_updated],
    [kept.id, '1', kept.last_updated],
    'unchanged rule keeps id and version (matched by ref)',
  );
  assert.deepEqual([rules[1].id, rules[1].version], [other.id, '2'], 'changed rule (matched by id) advances');
  assert.notEqual(rules[1].last_updated, other.last_updated);
  assert.deepEqual([rules[2].version, rules[2].ref], ['1', rules[2].id]);
  const third = await api.call(`/zones/${zoneId}/rulesets/${first.body.result.id}`, { method: 'PUT', json: { description: 'only the description' } });
  assert.deepEqual([third.body.result.version, third.body.result.rules.length, third.body.result.description], ['3', 3, 'only the description']);
  const disabled = await api.call(entry, { method: 'PUT', json: { rules: [logRule({ request_fields: [{ name: 'x-a' }] }, { enabled: false })] } });
  assert.equal(disabled.body.result.rules[0].enabled, false);
  assert.deepEqual(await api.control.getCustomFieldsRule(zoneId), { requestFields: [], responseFields: [], cookieFields: [] }, 'disabled rules log nothing');
  const deleted = await fetch(`${api.base}/zones/${zoneId}/rulesets/${first.body.result.id}`, {
    method: 'DELETE',
    headers: { 'x-auth-email': api.admin.email, 'x-auth-key': api.admin.key },
  });
  assert.deepEqual([deleted.status, await deleted.text(), deleted.headers.get('content-type')], [204, '', null]);
  assert.equal((await api.call(entry)).status, 404);
});

test('the 40-field limit: exactly 40 across the three kinds and several rules is accepted, 41 is refused', { timeout: 10_000 }, async (t) => {
  const api = await startApi(t);
  const zoneId = await zoneOf(api);
  const entry = `/zones/${zoneId}/rulesets/phases/${PHASE}/entrypoint`;
  const forty = [logRule({ request_fields: fields('x-req', 15), response_fields: fields('x-res', 10) }), logRule({ cookie_fields: fields('c', 15, 'cookie') })];
  const accepted = await api.call(entry, { method: 'PUT', json: { rules: forty } });
  assert.equal(accepted.status, 200);
  const fortyOne = [...forty, logRule({ response_fields: [{ name: 'x-one-more' }] }, { enabled: false })];
  const refused = await api.call(entry, { method: 'PUT', json: { rules: fortyOne } });
  assert.deepEqual(
    [refused.status, refused.body.errors],
    [
      400,
      [
        {
          code: 20218,
          source: { pointer: '/rules' },
          message:
            'exceeded maximum number of custom fields per zone: the rules configure 41, at most 40 are allowed (request headers, response headers and cookies together)',
        },
      ],
    ],
  );
  assert.equal((await api.call(entry)).body.result.version, '1', 'the refused PUT changed nothing');
  assert.equal((await api.control.getCustomFieldsRule(zoneId))?.cookieFields.length, 15);
});

test('every rule validation error has its code and pointer, and leaves the ruleset as it was', { timeout: 10_000 }, async (t) => {
  const api = await startApi(t);
  const zoneId = await zoneOf(api);
  const entry = `/zones/${zoneId}/rulesets/phases/${PHASE}/entrypoint`;
  const good = await api.call(entry, { method: 'PUT', json: { rules: [logRule({ request_fields: [{ name: 'x-keep' }] })] } });
  const before = JSON.stringify(good.body.result);
  const rule = (overrides: object) => ({ ...logRule({ request_fields: [{ name: 'x-a' }] }), ...overrides });
  const cases: Array<[unknown, number, string, RegExp]> = [
    [
      [rule({ action: 'block' })],
      20021,
      '/rules/0/action',
      /^'block' is not a valid value for action because it is not allowed in the http_log_custom_fields phase/,
    ],
    [[{ expression: 'true', action_parameters: { request_fields: [{ name: 'x' }] } }], 20021, '/rules/0/action', /^action is required for action parameters$/],
    [[{ expression: 'true' }], 20021, '/rules/0/action', /^action is required$/],
    [[rule({ expression: '' })], 20125, '/rules/0/expression', /^'' is not a valid value for expression because the expression cannot be blank$/],
    [[{ action: 'log_custom_field', action_parameters: { request_fields: [{ name: 'x' }] } }], 20125, '/rules/0/expression', /cannot be blank/],
    [[rule({ expression: 'http.host eq "a"' })], 20021, '/rules/0/expression', /only accepts the expression "true"/],
    [[rule({ action_parameters: {} })], 20021, '/rules/0/action_parameters', /at least one of request_fields, response_fields, cookie_fields/],
    [[rule({ action_parameters: undefined })], 20021, '/rules/0/action_parameters', /action_parameters is required/],
    [[rule({ action_parameters: { request_fields: [] } })], 20021, '/rules/0/action_parameters/request_fields', /must list at least one field/],
    [
      [rule({ action_parameters: { request_fields: [{ name: 'X-Upper' }] } })],
      20021,
      '/rules/0/action_parameters/request_fields/0/name',
      /^'X-Upper' is not a valid value for name because header names must be lower case$/,
    ],
    [[rule({ action_parameters: { response_fields: [{ name: 'Server' }] } })], 20021, '/rules/0/action_parameters/response_fields/0/name', /lower case/],
    [
      [rule({ action_parameters: { request_fields: [{ name: 'bad header' }] } })],
      20021,
      '/rules/0/action_parameters/request_fields/0/name',
      /not a valid HTTP header name/,
    ],
    [
      [rule({ action_parameters: { request_fields: [{ name: '' }] } })],
      20021,
      '/rules/0/action_parameters/request_fields/0/name',
      /not a valid HTTP header name/,
    ],
    [[rule({ action_parameters: { cookie_fields: [{ name: 'a;b' }] } })], 20021, '/rules/0/action_parameters/cookie_fields/0/name', /not a valid cookie name/],
    [
      [rule({ action_parameters: { request_fields: [{ name: 'x-a' }, { name: 'x-a' }] } })],
      20021,
      '/rules/0/action_parameters/request_fields/1/name',
      /already listed at \/rules\/0\/action_parameters\/request_fields\/0/,
    ],
    [[rule({}), rule({})], 20021, '/rules/1/action_parameters/request_fields/0/name', /already listed/],
    [
      [rule({ action_parameters: { request_fields: [{ name: 'x' }], transformed_request_fields: [{ name: 'y' }] } })],
      20021,
      '/rules/0/action_parameters/transformed_request_fields',
      /not supported/,
    ],
    [
      [rule({ action_parameters: { response_fields: [{ name: 'set-cookie', preserve_duplicates: true }] } })],
      20021,
      '/rules/0/action_parameters/response_fields/0/preserve_duplicates',
      /first instance/,
    ],
    [
      [rule({ action_parameters: { request_fields: [{ name: 'x' }], unknown_fields: [] } })],
      20021,
      '/rules/0/action_parameters/unknown_fields',
      /'unknown_fields' is not a valid field of action_parameters/,
    ],
    [[rule({ action_parameters: { request_fields: ['x-a'] } })], 20021, '/rules/0/action_parameters/request_fields/0', /must be an object/],
    [[rule({ logging: { enabled: true } })], 20021, '/rules/0/logging', /logging options only allowed in the skip action/],
    [[rule({ id: 'c'.repeat(32) })], 20021, '/rules/0/id', /the ruleset has no rule with this id/],
    [[rule({ ref: 'same' }), rule({ ref: 'same', action_parameters: { cookie_fields: [{ name: 'c' }] } })], 20021, '/rules/1/ref', /same ref/],
    ['not an array', 20021, '/rules', /must be an array/],
  ];
  for (const [rules, code, pointer, message] of cases) {
    const response = await api.call(entry, { method: 'PUT', json: { rules } });
    assert.equal(response.status, 400, JSON.stringify(rules));
    assert.ok(
      response.body.errors.some((e: ErrorEntry) => e.code === code && e.source?.pointer === pointer && message.test(e.message)),
      `${JSON.stringify(rules)} -> ${JSON.stringify(response.body.errors)}`,
    );
  }
  assert.equal(JSON.stringify((await api.call(entry)).body.result), before, 'no refused request changed the ruleset');
  assert.deepEqual(await api.control.getCustomFieldsRule(zoneId), { requestFields: ['x-keep'], responseFields: [], cookieFields: [] });
  const rulesetId = good.body.result.id;
  for (const [body, pointer] of [
    [{ name: 'renamed' }, '/name'],
    [{ kind: 'custom' }, '/kind'],
    [{ phase: 'http_ratelimit' }, '/phase'],
  ] as const) {
    const response = await api.call(`/zones/${zoneId}/rulesets/${rulesetId}`, { method: 'PUT', json: body });
    assert.deepEqual([response.status, response.body.errors[0].source.pointer], [400, pointer]);
    assert.match(response.body.errors[0].message, /cannot be changed/);
  }
  assert.equal(JSON.stringify((await api.call(entry)).body.result), before);
});

test('creating rulesets: kinds, phases and bodies', { timeout: 10_000 }, async (t) => {
  const api = await startApi(t);
  const zoneId = await zoneOf(api);
  const create = (body: object) => api.call(`/zones/${zoneId}/rulesets`, { method: 'POST', json: body });
  const cases: Array<[object, number, string, RegExp]> = [
    [{ kind: 'zone', phase: PHASE }, 20021, '/name', /name is required/],
    [{ name: 'x', kind: 'custom', phase: PHASE }, 20021, '/kind', /only zone entry point rulesets can be created at zone level/],
    [{ name: 'x', kind: 'weird', phase: PHASE }, 20021, '/kind', /must be one of managed, custom, root, zone/],
    [{ name: 'x', kind: 'zone', phase: 'http_request_firewall_custom' }, 50002, '/phase', /^not entitled to use the phase http_request_firewall_custom$/],
    [{ name: 'x', kind: 'zone', phase: 'nope' }, 20021, '/phase', /'nope' is not a valid value for phase/],
    [
      { name: 'x', kind: 'zone', phase: PHASE, rules: [logRule({ request_fields: [{ name: 'x' }] }, { id: 'a'.repeat(32) })] },
      20021,
      '/rules/0/id',
      /assigned by the server/,
    ],
    [{ name: 'x', kind: 'zone', phase: PHASE, colour: 'red' }, 20021, '/colour', /not a valid field/],
  ];
  for (const [body, code, pointer, message] of cases) {
    const response = await create(body);
    assert.equal(response.status, 400, JSON.stringify(body));
    assert.ok(
      response.body.errors.some((e: ErrorEntry) => e.code === code && e.source?.pointer === pointer && message.test(e.message)),
      `${JSON.stringify(body)} -> ${JSON.stringify(response.body.errors)}`,
    );
  }
  assert.deepEqual((await api.call(`/zones/${zoneId}/rulesets`)).body.result, []);
  const withRules = await create({ name: 'x', kind: 'zone', phase: PHASE, rules: [logRule({ cookie_fields: [{ name: 'Sid' }] })] });
  assert.deepEqual([withRules.status, withRules.body.result.rules.length], [200, 1]);
  const notEntitled = await api.call(`/zones/${zoneId}/rulesets/phases/http_ratelimit/entrypoint`, { method: 'PUT', json: { rules: [] } });
  assert.deepEqual([notEntitled.status, notEntitled.body.errors[0].code], [400, 50002]);
  const list = await api.call(`/zones/${zoneId}/rulesets?per_page=1`);
  assert.deepEqual(list.body.result_info, { count: 1, per_page: 1 }, 'no cursor on the last page');
  assert.equal(list.body.result[0].rules, undefined, 'lists omit rules');
  assert.equal((await api.call(`/zones/${zoneId}/rulesets?cursor=bm9wZQ`)).body.errors[0].code, 1002);
  assert.equal((await api.call(`/zones/${zoneId}/rulesets?per_page=0`)).status, 400);
});
