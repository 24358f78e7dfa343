/**
 * How a write changes a ruleset (pure; runs inside the store's transaction): rules are replaced
 * wholesale, a sent rule keeps the identity of the existing rule with its `id` or `ref`, a rule's
 * version advances only when its definition changes, and the ruleset's version on every write.
 * One rule at a time (add, change or move, delete) plans the whole list again, so the same checks
 * span the rules (40 custom fields, no name twice). Every write keeps the version it replaces in
 * the ruleset's history (the newest MAX_VERSIONS_KEPT); version numbers are never reused.
 */
import { randomHexId } from '../../core/ids.ts';
import type { RuleRecord, RulesetRecord } from '../../db/control-store.ts';
import { ApiError } from '../errors.ts';
import { validateBody } from '../validation.ts';
import {
  CUSTOM_FIELDS_PHASE,
  rulesInput,
  toFieldNames,
  toRuleInput,
  type RuleInput,
  type RulePosition,
  type UpdateEntrypointBody,
  type UpdateRulesetBody,
} from './ruleset-schema.ts';

export function planRules(current: readonly RuleRecord[], inputs: readonly RuleInput[], now: number): RuleRecord[] {
  const byId = new Map(current.map((rule) => [rule.id, rule]));
  const byRef = new Map(current.map((rule) => [rule.ref, rule]));
  const used = new Set<string>();
  const planned = inputs.map((input, i): RuleRecord => {
    let match: RuleRecord | undefined;
    if (input.id !== undefined) {
      match = byId.get(input.id);
      if (!match) invalid(`/rules/${i}/id`, `'${input.id}' is not a valid value for id because the ruleset has no rule with this id`);
    } else if (input.ref !== undefined) {
      match = byRef.get(input.ref);
    }
    if (match && used.has(match.id)) invalid(`/rules/${i}`, `rule ${match.id} is listed twice (by id or ref)`);
    if (match) used.add(match.id);
    const definition = {
      action: input.action!,
      expression: input.expression!,
      description: input.description ?? '',
      enabled: input.enabled ?? true,
      actionParameters: toFieldNames(input),
    };
    if (!match) {
      const id = randomHexId();
      return { id, version: 1, ref: input.ref ?? id, ...definition, lastUpdated: now };
    }
    const changed = JSON.stringify(definitionOf(match)) !== JSON.stringify(definition);
    return {
      id: match.id,
      version: changed ? match.version + 1 : match.version,
      ref: input.ref ?? match.ref,
      ...definition,
      lastUpdated: changed ? now : match.lastUpdated,
    };
  });
  const refs = new Set<string>();
  planned.forEach((rule, i) => {
    if (refs.has(rule.ref)) invalid(`/rules/${i}/ref`, `'${rule.ref}' is not a valid value for ref because another rule of the ruleset has it`);
    refs.add(rule.ref);
  });
  return planned;
}

/** PUT /rulesets/:id: name, kind, phase and id are immutable; when sent they must be the current ones. */
export function planRulesetUpdate(current: RulesetRecord, body: UpdateRulesetBody, now: number): RulesetRecord {
  for (const field of ['name', 'kind', 'phase', 'id'] as const) {
    const sent = body[field];
    if (sent !== undefined && sent !== current[field])
      invalid(`/${field}`, `'${sent}' is not a valid value for ${field} because the ${field} of a ruleset cannot be changed`);
  }
  return nextVersion(current, body, now);
}

/** PUT of the phase entry point: creates it when missing, else updates it like a ruleset PUT. */
export function planEntrypoint(current: RulesetRecord | null, zoneId: string, body: UpdateEntrypointBody, now: number): RulesetRecord {
  if (current === null) {
    return {
      id: randomHexId(),
      zoneId,
      name: body.name ?? 'default',
      description: body.description ?? '',
      kind: 'zone',
      phase: CUSTOM_FIELDS_PHASE,
      version: 1,
      lastUpdated: now,
      rules: planRules([], body.rules ?? [], now),
    };
  }
  if (body.name !== undefined && body.name !== current.name)
    invalid('/name', `'${body.name}' is not a valid value for name because the name of a ruleset cannot be changed`);
  return nextVersion(current, body, now);
}

/** Earlier versions a ruleset keeps (older ones are dropped as new ones are made). */
export const MAX_VERSIONS_KEPT = 100;

function nextVersion(current: RulesetRecord, body: { rules?: RuleInput[]; description?: string }, now: number): RulesetRecord {
  const { history = [], ...rest } = current;
  return {
    ...rest,
    description: body.description ?? current.description,
    rules: body.rules === undefined ? current.rules : planRules(current.rules, body.rules, now),
    version: current.version + 1,
    lastUpdated: now,
    history: [{ version: current.version, description: current.description, lastUpdated: current.lastUpdated, rules: current.rules }, ...history].slice(
      0,
      MAX_VERSIONS_KEPT,
    ),
  };
}

/** The rules as inputs with `inputs` checked as a whole list, as a PUT of them would be. */
function replanned(current: RulesetRecord, inputs: RuleInput[], now: number): RulesetRecord {
  return nextVersion(current, { rules: validateBody(rulesInput, inputs, 'API_RULESET_INVALID') }, now);
}

/** Where `position` puts a rule in `rules` (the rule itself left out); 400 when it names no rule of the ruleset or no place. */
function placeOf(rules: readonly RuleInput[], position: RulePosition | undefined): number {
  if (position === undefined) return rules.length;
  if ('index' in position) {
    if (position.index > rules.length + 1)
      invalid(
        '/position/index',
        `'${position.index}' is not a valid value for index because the ruleset has ${rules.length} other rules: use 1 to ${rules.length + 1}`,
      );
    return position.index - 1;
  }
  const [field, id] = 'before' in position ? ['before', position.before] : ['after', position.after];
  if (id === '') return field === 'before' ? 0 : rules.length;
  const at = rules.findIndex((rule) => rule.id === id);
  if (at < 0) invalid(`/position/${field}`, `'${id}' is not a valid value for ${field} because the ruleset has no other rule with this id`);
  return field === 'before' ? at : at + 1;
}

/** POST .../rules: one rule added (last unless `position` says). */
export function planRuleAdd(current: RulesetRecord, rule: RuleInput, position: RulePosition | undefined, now: number): RulesetRecord {
  if (rule.id !== undefined) invalid('/id', `'${rule.id}' is not a valid value for id because a new rule's id is assigned by the server`);
  const inputs = current.rules.map(toRuleInput);
  inputs.splice(placeOf(inputs, position), 0, rule);
  return replanned(current, inputs, now);
}

/** PATCH .../rules/<id>: the rule's definition replaced (when `rule` is given) and/or moved; null when the ruleset has no such rule. */
export function planRuleEdit(
  current: RulesetRecord,
  ruleId: string,
  rule: RuleInput | undefined,
  position: RulePosition | undefined,
  now: number,
): RulesetRecord | null {
  const inputs = current.rules.map(toRuleInput);
  const at = inputs.findIndex((input) => input.id === ruleId);
  if (at < 0) return null;
  const [existing] = inputs.splice(at, 1);
  if (rule?.id !== undefined && rule.id !== ruleId)
    invalid('/id', `'${rule.id}' is not a valid value for id because it is not the id of the rule being changed`);
  const next = rule === undefined ? existing! : { ...rule, id: ruleId, ref: rule.ref ?? existing!.ref };
  inputs.splice(position === undefined ? at : placeOf(inputs, position), 0, next);
  return replanned(current, inputs, now);
}

/** DELETE .../rules/<id>; null when the ruleset has no such rule. */
export function planRuleDelete(current: RulesetRecord, ruleId: string, now: number): RulesetRecord | null {
  if (!current.rules.some((rule) => rule.id === ruleId)) return null;
  return replanned(current, current.rules.filter((rule) => rule.id !== ruleId).map(toRuleInput), now);
}

/** DELETE .../versions/<n>: an earlier version forgotten ('latest': the current one cannot be; null: no such version kept). */
export function planVersionDelete(current: RulesetRecord, version: number): RulesetRecord | 'latest' | null {
  if (version === current.version) return 'latest';
  const history = current.history ?? [];
  if (!history.some((kept) => kept.version === version)) return null;
  return { ...current, history: history.filter((kept) => kept.version !== version) };
}

function definitionOf(rule: RuleRecord) {
  return { action: rule.action, expression: rule.expression, description: rule.description, enabled: rule.enabled, actionParameters: rule.actionParameters };
}

function invalid(pointer: string, message: string): never {
  throw new ApiError('API_RULESET_INVALID', { message, pointer });
}
