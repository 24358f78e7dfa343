/**
 * Rulesets of the custom-fields phase (docs/management-api.md, "Custom fields"): request schemas with every rule
 * check, response shapes, and the conversion from RulesetRecord. Messages follow the real API's
 * pattern `'<value>' is not a valid value for <field> because <reason>`, pointers name the field
 * (`/rules/0/action_parameters/request_fields/2/name`).
 */
import { z } from 'zod';
import type { CustomFieldNames, RuleRecord, RulesetRecord, RulesetVersionRecord } from '../../db/control-store.ts';
import { refuse, refuseValue } from '../refinements.ts';
import { HTTP_TOKEN } from '../../core/http/token.ts';

export const CUSTOM_FIELDS_PHASE = 'http_log_custom_fields';
/** The real API's limit of custom fields per zone, request headers, response headers and cookies together. */
export const MAX_CUSTOM_FIELDS_PER_ZONE = 40;

/** Every phase of the real API (SDK `Phase`); edgeport serves only http_log_custom_fields. */
export const RULESET_PHASES = [
  'ddos_l4',
  'ddos_l7',
  'http_config_settings',
  'http_custom_errors',
  'http_log_custom_fields',
  'http_ratelimit',
  'http_request_cache_settings',
  'http_request_dynamic_redirect',
  'http_request_firewall_custom',
  'http_request_firewall_managed',
  'http_request_late_transform',
  'http_request_origin',
  'http_request_redirect',
  'http_request_sanitize',
  'http_request_sbfm',
  'http_request_transform',
  'http_response_cache_settings',
  'http_response_compression',
  'http_response_firewall_managed',
  'http_response_headers_transform',
  'magic_transit',
  'magic_transit_ids_managed',
  'magic_transit_managed',
  'magic_transit_ratelimit',
] as const;

const RULESET_KINDS = ['managed', 'custom', 'root', 'zone'] as const;

type FieldKind = keyof CustomFieldNames;
const FIELD_ARRAYS: Record<string, FieldKind> = { request_fields: 'requestFields', response_fields: 'responseFields', cookie_fields: 'cookieFields' };

const fieldItem = z.strictObject({
  name: z.string().describe('Header name (lower case) or cookie name (case-sensitive)'),
  preserve_duplicates: z.boolean().optional().describe('Only false: edgeport logs the first instance of a repeated header'),
});
const fieldList = z.array(fieldItem);

const actionParameters = z.strictObject({
  request_fields: fieldList.optional(),
  response_fields: fieldList.optional(),
  cookie_fields: fieldList.optional(),
  transformed_request_fields: z.unknown().optional().describe('Not supported: edgeport has no transform rules'),
  raw_response_fields: z.unknown().optional().describe('Not supported: edgeport has no transform rules'),
});

/** A rule as sent; read-only fields of a rule read back (version, last_updated, categories) are accepted and ignored. */
export const ruleInput = z
  .strictObject({
    id: z.string().optional().describe('Keeps the identity of an existing rule of the ruleset'),
    ref: z.string().min(1).max(256).optional(),
    action: z.string().optional().describe('Must be log_custom_field'),
    expression: z.string().optional().describe('Must be "true"'),
    description: z.string().max(500).optional(),
    enabled: z.boolean().optional(),
    action_parameters: actionParameters.optional(),
    logging: z.unknown().optional(),
    ratelimit: z.unknown().optional(),
    exposed_credential_check: z.unknown().optional(),
    version: z.string().optional(),
    last_updated: z.string().optional(),
    categories: z.array(z.string()).optional(),
  })
  .superRefine(checkRule);

export type RuleInput = z.infer<typeof ruleInput>;

function checkRule(rule: RuleInput, ctx: z.RefinementCtx): void {
  if (rule.id !== undefined && !/^[0-9a-f]{32}$/.test(rule.id)) refuseValue(ctx, ['id'], rule.id, 'a rule id is 32 lowercase hex characters');
  if (rule.logging !== undefined) refuse(ctx, ['logging'], 'logging options only allowed in the skip action');
  for (const key of ['ratelimit', 'exposed_credential_check'] as const) {
    if (rule[key] !== undefined) refuseValue(ctx, [key], rule[key], `it is not allowed in the ${CUSTOM_FIELDS_PHASE} phase`);
  }
  if (rule.action === undefined) {
    refuse(ctx, ['action'], rule.action_parameters === undefined ? 'action is required' : 'action is required for action parameters');
  } else if (rule.action !== 'log_custom_field') {
    refuseValue(ctx, ['action'], rule.action, `it is not allowed in the ${CUSTOM_FIELDS_PHASE} phase: use log_custom_field`);
  }
  if (rule.expression === undefined || rule.expression.trim() === '') {
    refuse(ctx, ['expression'], "'' is not a valid value for expression because the expression cannot be blank", 'API_EXPRESSION_BLANK');
  } else if (rule.expression !== 'true') {
    refuseValue(ctx, ['expression'], rule.expression, `the ${CUSTOM_FIELDS_PHASE} phase only accepts the expression "true"`);
  }
  const params = rule.action_parameters;
  if (params === undefined) {
    refuse(ctx, ['action_parameters'], 'action_parameters is required: give at least one of request_fields, response_fields, cookie_fields');
    return;
  }
  for (const key of ['transformed_request_fields', 'raw_response_fields'] as const) {
    if (params[key] !== undefined) {
      refuse(
        ctx,
        ['action_parameters', key],
        `${key} is not supported: edgeport has no transform rules, so request_fields and response_fields log the original headers`,
      );
    }
  }
  const present = Object.keys(FIELD_ARRAYS).filter((key) => params[key as keyof typeof params] !== undefined);
  if (present.length === 0) {
    refuse(ctx, ['action_parameters'], 'action_parameters must contain at least one of request_fields, response_fields, cookie_fields');
  }
  for (const key of present) {
    const list = params[key as 'request_fields']!;
    if (list.length === 0) refuseValue(ctx, ['action_parameters', key], list, 'it must list at least one field');
    list.forEach((item, i) => {
      const path = ['action_parameters', key, i, 'name'];
      if (item.preserve_duplicates === true) {
        refuse(
          ctx,
          ['action_parameters', key, i, 'preserve_duplicates'],
          key === 'response_fields'
            ? 'preserve_duplicates is not supported: edgeport logs the first instance of a repeated header'
            : `preserve_duplicates applies only to response_fields`,
        );
      } else if (item.preserve_duplicates === false && key !== 'response_fields') {
        refuse(ctx, ['action_parameters', key, i, 'preserve_duplicates'], 'preserve_duplicates applies only to response_fields');
      }
      if (!HTTP_TOKEN.test(item.name)) {
        refuseValue(ctx, path, item.name, key === 'cookie_fields' ? 'it is not a valid cookie name' : 'it is not a valid HTTP header name');
      } else if (key !== 'cookie_fields' && item.name !== item.name.toLowerCase()) {
        refuseValue(ctx, path, item.name, 'header names must be lower case');
      }
    });
  }
}

/**
 * The checks that span rules: no duplicate ids or refs, no name configured twice for one kind,
 * and at most 40 custom fields in all (the real API's limit), counted over every rule, enabled or not.
 */
export const rulesInput = z.array(ruleInput).superRefine((rules, ctx) => {
  const ids = new Map<string, number>();
  const refs = new Map<string, number>();
  const names = new Map<string, string>();
  let count = 0;
  rules.forEach((rule, i) => {
    if (rule.id !== undefined) {
      if (ids.has(rule.id)) refuseValue(ctx, [i, 'id'], rule.id, `rule ${ids.get(rule.id)} has the same id`);
      ids.set(rule.id, i);
    }
    if (rule.ref !== undefined) {
      if (refs.has(rule.ref)) refuseValue(ctx, [i, 'ref'], rule.ref, `rule ${refs.get(rule.ref)} has the same ref`);
      refs.set(rule.ref, i);
    }
    for (const key of Object.keys(FIELD_ARRAYS)) {
      const list = rule.action_parameters?.[key as 'request_fields'] ?? [];
      count += list.length;
      list.forEach((item, j) => {
        const seen = `${key}\0${item.name}`;
        const first = names.get(seen);
        if (first !== undefined) refuseValue(ctx, [i, 'action_parameters', key, j, 'name'], item.name, `it is already listed at ${first}`);
        else names.set(seen, `/rules/${i}/action_parameters/${key}/${j}`);
      });
    }
  });
  if (count > MAX_CUSTOM_FIELDS_PER_ZONE) {
    refuse(
      ctx,
      [],
      `exceeded maximum number of custom fields per zone: the rules configure ${count}, at most ${MAX_CUSTOM_FIELDS_PER_ZONE} are allowed (request headers, response headers and cookies together)`,
      'API_CUSTOM_FIELDS_LIMIT',
    );
  }
});

function checkPhase(phase: string, ctx: z.RefinementCtx, path: PropertyKey[]): void {
  if (!(RULESET_PHASES as readonly string[]).includes(phase)) refuseValue(ctx, path, phase, `it must be one of ${RULESET_PHASES.join(', ')}`);
  else if (phase !== CUSTOM_FIELDS_PHASE) refuse(ctx, path, `not entitled to use the phase ${phase}`, 'API_PHASE_NOT_ENTITLED');
}

export const createRulesetBody = z
  .strictObject({
    name: z.string().min(1).max(256),
    kind: z.string().describe('zone: the phase entry point (the only kind a zone can create)'),
    phase: z.string().describe(`Only ${CUSTOM_FIELDS_PHASE} is served`),
    description: z.string().max(500).optional(),
    rules: rulesInput.optional(),
  })
  .superRefine((body, ctx) => {
    if (!(RULESET_KINDS as readonly string[]).includes(body.kind)) refuseValue(ctx, ['kind'], body.kind, `it must be one of ${RULESET_KINDS.join(', ')}`);
    else if (body.kind !== 'zone') refuseValue(ctx, ['kind'], body.kind, 'only zone entry point rulesets can be created at zone level');
    checkPhase(body.phase, ctx, ['phase']);
    body.rules?.forEach((rule, i) => {
      if (rule.id !== undefined) refuseValue(ctx, ['rules', i, 'id'], rule.id, 'a new ruleset has no rules yet: rule ids are assigned by the server');
    });
  });
export type CreateRulesetBody = z.infer<typeof createRulesetBody>;

/** PUT of a ruleset: replaces the rules (when given) and the description; name, kind and phase cannot change. */
export const updateRulesetBody = z.strictObject({
  rules: rulesInput.optional(),
  description: z.string().max(500).optional(),
  name: z.string().optional(),
  kind: z.string().optional(),
  phase: z.string().optional(),
  id: z.string().optional(),
  version: z.string().optional(),
  last_updated: z.string().optional(),
});
export type UpdateRulesetBody = z.infer<typeof updateRulesetBody>;

/** PUT of a phase entry point: creates it (named "default" unless named) or updates it. */
export const updateEntrypointBody = z.strictObject({
  rules: rulesInput.optional(),
  description: z.string().max(500).optional(),
  name: z.string().min(1).max(256).optional(),
});
export type UpdateEntrypointBody = z.infer<typeof updateEntrypointBody>;

export function phaseProblem(phase: string): { message: string; apiCode?: 'API_PHASE_NOT_ENTITLED' } | null {
  if (!(RULESET_PHASES as readonly string[]).includes(phase))
    return { message: `'${phase}' is not a valid value for phase because it must be one of ${RULESET_PHASES.join(', ')}` };
  if (phase !== CUSTOM_FIELDS_PHASE) return { message: `not entitled to use the phase ${phase}`, apiCode: 'API_PHASE_NOT_ENTITLED' };
  return null;
}

export const listRulesetsQuery = z.object({
  cursor: z.string().optional(),
  per_page: z.coerce.number().int().min(1).max(100).default(50),
});

const fieldResult = z.array(z.object({ name: z.string() }));
export const ruleResult = z.object({
  id: z.string(),
  version: z.string(),
  action: z.literal('log_custom_field'),
  action_parameters: z.object({ request_fields: fieldResult.optional(), response_fields: fieldResult.optional(), cookie_fields: fieldResult.optional() }),
  expression: z.string(),
  description: z.string(),
  last_updated: z.string(),
  ref: z.string(),
  enabled: z.boolean(),
});
export const rulesetSummaryResult = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  kind: z.string(),
  version: z.string().describe('A string of digits; advances on every update'),
  last_updated: z.string(),
  phase: z.string(),
});
export const rulesetResult = rulesetSummaryResult.extend({ rules: z.array(ruleResult) });

/** ISO 8601 with microseconds, as the real rulesets API writes `last_updated`. */
export function isoMicros(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export function toRulesetSummaryJson(ruleset: RulesetRecord): z.infer<typeof rulesetSummaryResult> {
  return {
    id: ruleset.id,
    name: ruleset.name,
    description: ruleset.description,
    kind: ruleset.kind,
    version: String(ruleset.version),
    last_updated: isoMicros(ruleset.lastUpdated),
    phase: ruleset.phase,
  };
}

export function toRulesetJson(ruleset: RulesetRecord): z.infer<typeof rulesetResult> {
  return { ...toRulesetSummaryJson(ruleset), rules: ruleset.rules.map(toRuleJson) };
}

function toRuleJson(rule: RuleRecord): z.infer<typeof ruleResult> {
  const params: z.infer<typeof ruleResult>['action_parameters'] = {};
  for (const [key, kind] of Object.entries(FIELD_ARRAYS)) {
    const names = rule.actionParameters[kind];
    if (names !== undefined) params[key as 'request_fields'] = names.map((name) => ({ name }));
  }
  return {
    id: rule.id,
    version: String(rule.version),
    action: 'log_custom_field',
    action_parameters: params,
    expression: rule.expression,
    description: rule.description,
    last_updated: isoMicros(rule.lastUpdated),
    ref: rule.ref,
    enabled: rule.enabled,
  };
}

/** The names of a validated rule's action parameters, keeping which arrays were sent. */
export function toFieldNames(rule: RuleInput): Partial<CustomFieldNames> {
  const out: Partial<CustomFieldNames> = {};
  for (const [key, kind] of Object.entries(FIELD_ARRAYS)) {
    const list = rule.action_parameters?.[key as 'request_fields'];
    if (list !== undefined) out[kind] = list.map((item) => item.name);
  }
  return out;
}

/** A stored rule as a rule input (its id and ref keep its identity when the list is planned again). */
export function toRuleInput(rule: RuleRecord): RuleInput {
  const params: NonNullable<RuleInput['action_parameters']> = {};
  for (const [key, kind] of Object.entries(FIELD_ARRAYS)) {
    const names = rule.actionParameters[kind];
    if (names !== undefined) params[key as 'request_fields'] = names.map((name) => ({ name }));
  }
  return {
    id: rule.id,
    ref: rule.ref,
    action: rule.action,
    expression: rule.expression,
    description: rule.description,
    enabled: rule.enabled,
    action_parameters: params,
  };
}

/** Where a rule added or moved goes: exactly one of before/after a rule (`''`: first/last) or a 1-based index. */
export const rulePosition = z.union([
  z.strictObject({ before: z.string().regex(/^([0-9a-f]{32})?$/, 'a rule id (32 lowercase hex characters) or empty for the first place') }),
  z.strictObject({ after: z.string().regex(/^([0-9a-f]{32})?$/, 'a rule id (32 lowercase hex characters) or empty for the last place') }),
  z.strictObject({ index: z.number().int().min(1) }),
]);
export type RulePosition = z.infer<typeof rulePosition>;

/** The versions list's entry: a version without its rules. */
export function toVersionSummaryJson(ruleset: RulesetRecord, version: RulesetVersionRecord): z.infer<typeof rulesetSummaryResult> {
  return toRulesetSummaryJson({ ...ruleset, version: version.version, description: version.description, lastUpdated: version.lastUpdated });
}

export function toVersionJson(ruleset: RulesetRecord, version: RulesetVersionRecord): z.infer<typeof rulesetResult> {
  return toRulesetJson({ ...ruleset, version: version.version, description: version.description, lastUpdated: version.lastUpdated, rules: version.rules });
}
