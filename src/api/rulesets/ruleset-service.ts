/**
 * How a write changes a ruleset (pure; runs inside the store's transaction): rules are replaced
 * wholesale, a sent rule keeps the identity of the existing rule with its `id` or `ref`, a rule's
 * version advances only when its definition changes, and the ruleset's version on every write.
 */
import { randomHexId } from '../../core/ids.ts';
import type { RuleRecord, RulesetRecord } from '../../db/control-store.ts';
import { ApiError } from '../errors.ts';
import { CUSTOM_FIELDS_PHASE, toFieldNames, type RuleInput, type UpdateEntrypointBody, type UpdateRulesetBody } from './ruleset-schema.ts';

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
      action: input.action!, expression: input.expression!, description: input.description ?? '', enabled: input.enabled ?? true,
      actionParameters: toFieldNames(input),
    };
    if (!match) {
      const id = randomHexId();
      return { id, version: 1, ref: input.ref ?? id, ...definition, lastUpdated: now };
    }
    const changed = JSON.stringify(definitionOf(match)) !== JSON.stringify(definition);
    return {
      id: match.id, version: changed ? match.version + 1 : match.version, ref: input.ref ?? match.ref, ...definition,
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
    if (sent !== undefined && sent !== current[field]) invalid(`/${field}`, `'${sent}' is not a valid value for ${field} because the ${field} of a ruleset cannot be changed`);
  }
  return nextVersion(current, body, now);
}

/** PUT of the phase entry point: creates it when missing, else updates it like a ruleset PUT. */
export function planEntrypoint(current: RulesetRecord | null, zoneId: string, body: UpdateEntrypointBody, now: number): RulesetRecord {
  if (current === null) {
    return {
      id: randomHexId(), zoneId, name: body.name ?? 'default', description: body.description ?? '', kind: 'zone', phase: CUSTOM_FIELDS_PHASE,
      version: 1, lastUpdated: now, rules: planRules([], body.rules ?? [], now),
    };
  }
  if (body.name !== undefined && body.name !== current.name) invalid('/name', `'${body.name}' is not a valid value for name because the name of a ruleset cannot be changed`);
  return nextVersion(current, body, now);
}

function nextVersion(current: RulesetRecord, body: { rules?: RuleInput[]; description?: string }, now: number): RulesetRecord {
  return {
    ...current,
    description: body.description ?? current.description,
    rules: body.rules === undefined ? current.rules : planRules(current.rules, body.rules, now),
    version: current.version + 1,
    lastUpdated: now,
  };
}

function definitionOf(rule: RuleRecord) {
  return { action: rule.action, expression: rule.expression, description: rule.description, enabled: rule.enabled, actionParameters: rule.actionParameters };
}

function invalid(pointer: string, message: string): never {
  throw new ApiError('API_RULESET_INVALID', { message, pointer });
}
