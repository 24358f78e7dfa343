/**
 * A ruleset's rules one at a time and its versions, through the official SDK (`rulesets.rules`,
 * `rulesets.versions`, `rulesets.phases.versions`): rules added at a position, changed, moved and
 * deleted, each answering the ruleset at its next version; the checks spanning rules hold for a
 * single rule (no name twice, 40 fields); the versions kept, read back with their rules, an earlier
 * one deleted and the current one refused; another account's ruleset is missing.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startApi, sdkError, type Json } from './helpers.ts';

const PHASE = 'http_log_custom_fields';
const rule = (names: string[], extra: object = {}) => ({
  action: 'log_custom_field' as const,
  expression: 'true',
  action_parameters: { request_fields: names.map((name) => ({ name })) },
  ...extra,
});

test('rules one at a time, and the versions they make, with the official SDK', { timeout: 20_000 }, async (t) => {
  const api = await startApi(t);
  const zone_id = (await api.call('/zones', { method: 'POST', json: { name: 'rules.test' } })).body.result.id as string;
  const cf = api.sdk();
  const entry = (await cf.rulesets.phases.update(PHASE, { zone_id, rules: [rule(['a-header'])] })) as Json;
  const first = entry.rules[0].id as string;

  const added = (await cf.rulesets.rules.create(entry.id, { zone_id, ...rule(['b-header']) })) as Json;
  assert.deepEqual([added.version, added.rules.map((r: Json) => r.action_parameters.request_fields[0].name)], ['2', ['a-header', 'b-header']]);
  const second = added.rules[1].id as string;
  const atFront = (await cf.rulesets.rules.create(entry.id, { zone_id, ...rule(['c-header']), position: { before: first } } as never)) as Json;
  assert.deepEqual(
    atFront.rules.map((r: Json) => r.action_parameters.request_fields[0].name),
    ['c-header', 'a-header', 'b-header'],
  );
  const third = atFront.rules[0].id as string;
  const byIndex = (await cf.rulesets.rules.create(entry.id, { zone_id, ...rule(['d-header']), position: { index: 2 } } as never)) as Json;
  assert.deepEqual(
    byIndex.rules.map((r: Json) => r.action_parameters.request_fields[0].name),
    ['c-header', 'd-header', 'a-header', 'b-header'],
  );

  const edited = (await cf.rulesets.rules.edit(second, { zone_id, ruleset_id: entry.id, ...rule(['b-header', 'e-header'], { description: 'more' }) })) as Json;
  const changed = edited.rules.find((r: Json) => r.id === second);
  assert.deepEqual([edited.version, changed.version, changed.description, changed.action_parameters.request_fields.length], ['5', '2', 'more', 2]);
  assert.equal(edited.rules.find((r: Json) => r.id === first).version, '1', 'the other rules keep their versions');
  const moved = await api.call(`/zones/${zone_id}/rulesets/${entry.id}/rules/${third}`, { method: 'PATCH', json: { position: { after: '' } } });
  assert.equal(moved.status, 200);
  assert.deepEqual([moved.body.result.rules.at(-1).id, moved.body.result.rules.at(-1).version], [third, '1'], "a move alone keeps the rule's version");

  const twice = await sdkError(cf.rulesets.rules.create(entry.id, { zone_id, ...rule(['a-header']) }));
  assert.equal(twice.status, 400);
  assert.match(JSON.stringify(twice.errors), /already listed/);
  const tooMany = await sdkError(cf.rulesets.rules.create(entry.id, { zone_id, ...rule(Array.from({ length: 36 }, (_, i) => `x-${i}`)) }));
  assert.equal((tooMany.errors[0] as Json).code, 20218, 'the 40 fields of a zone count every rule');
  const badPlace = await api.call(`/zones/${zone_id}/rulesets/${entry.id}/rules`, {
    method: 'POST',
    json: { ...rule(['f-header']), position: { before: 'f'.repeat(32) } },
  });
  assert.deepEqual([badPlace.status, badPlace.body.errors[0].source], [400, { pointer: '/position/before' }]);

  const deleted = (await cf.rulesets.rules.delete(first, { zone_id, ruleset_id: entry.id })) as Json;
  assert.equal(
    deleted.rules.some((r: Json) => r.id === first),
    false,
  );
  assert.equal(deleted.version, '7');
  assert.equal((await sdkError(cf.rulesets.rules.delete(first, { zone_id, ruleset_id: entry.id }))).status, 404);

  const versions: Json[] = [];
  for await (const version of cf.rulesets.versions.list(entry.id, { zone_id })) versions.push(version);
  assert.deepEqual(
    versions.map((v) => v.version),
    ['7', '6', '5', '4', '3', '2', '1'],
  );
  assert.equal(versions[0].rules, undefined, 'the list has no rules');
  const v2 = (await cf.rulesets.versions.get('2', { zone_id, ruleset_id: entry.id })) as Json;
  assert.deepEqual(
    v2.rules.map((r: Json) => r.action_parameters.request_fields[0].name),
    ['a-header', 'b-header'],
  );
  const viaPhase = (await cf.rulesets.phases.versions.get('2', { zone_id, ruleset_phase: PHASE })) as Json;
  assert.deepEqual(viaPhase, v2);
  const phaseVersions: Json[] = [];
  for await (const version of cf.rulesets.phases.versions.list(PHASE, { zone_id })) phaseVersions.push(version);
  assert.equal(phaseVersions.length, 7);

  await cf.rulesets.versions.delete('2', { zone_id, ruleset_id: entry.id });
  assert.equal((await sdkError(cf.rulesets.versions.get('2', { zone_id, ruleset_id: entry.id }))).status, 404);
  const current = await sdkError(cf.rulesets.versions.delete('7', { zone_id, ruleset_id: entry.id }));
  assert.equal(current.status, 400, 'the current version cannot be deleted');
  const next = (await cf.rulesets.rules.create(entry.id, { zone_id, ...rule(['g-header']) })) as Json;
  assert.equal(next.version, '8', 'version numbers are never reused');

  const other = await api.newAccount('other@example.com');
  const theirs = await api.call(`/zones/${zone_id}/rulesets/${entry.id}/versions`, { as: other });
  assert.equal(theirs.status, 404, "another account's zone is missing");
});

test('dry_run checks a write and makes none', { timeout: 20_000 }, async (t) => {
  const api = await startApi(t);
  const zone_id = (await api.call('/zones', { method: 'POST', json: { name: 'dry.test' } })).body.result.id as string;
  const base = `/zones/${zone_id}/rulesets`;
  const dryCreate = await api.call(`${base}?dry_run=true`, { method: 'POST', json: { name: 'x', kind: 'zone', phase: PHASE } });
  assert.deepEqual([dryCreate.status, dryCreate.body.result], [200, null]);
  assert.deepEqual((await api.call(base)).body.result, [], 'a dry create makes nothing');
  const entry = (await api.call(`${base}/phases/${PHASE}/entrypoint`, { method: 'PUT', json: { rules: [rule(['a-header'])] } })).body.result;
  const dryRule = await api.call(`${base}/${entry.id}/rules?dry_run=true`, { method: 'POST', json: rule(['b-header']) });
  assert.deepEqual([dryRule.status, dryRule.body.result], [200, null]);
  const invalid = await api.call(`${base}/${entry.id}/rules?dry_run=true`, { method: 'POST', json: rule(['A-Header']) });
  assert.equal(invalid.status, 400, "a dry run answers the real write's errors");
  const taken = await api.call(`${base}?dry_run=true`, { method: 'POST', json: { name: 'again', kind: 'zone', phase: PHASE } });
  assert.equal(taken.body.errors[0].code, 20217);
  const dryDelete = await api.call(`${base}/${entry.id}?dry_run=true`, { method: 'DELETE' });
  assert.equal(dryDelete.status, 204);
  const after = (await api.call(`${base}/${entry.id}`)).body.result;
  assert.deepEqual([after.version, after.rules.length], ['1', 1], 'nothing changed');
  const bad = await api.call(`${base}/${entry.id}?dry_run=maybe`, { method: 'DELETE' });
  assert.deepEqual([bad.status, bad.body.errors[0].code], [400, 1002]);
});
