/**
 * A zone ruleset's rules one at a time and its versions: add a rule (last, or where `position` says), change or move one (the body replaces its
 * definition; a body with only `position` moves it), delete one; each answers the whole ruleset
 * at its new version. The versions of a ruleset (the current one and the earlier ones it keeps,
 * newest first, without rules), one version with its rules, an earlier version deleted (204); the
 * same for a phase's entry point. `dry_run=true` checks a write and makes none (dry-run.ts).
 */
import { z } from 'zod';
import type { RulesetRecord, RulesetVersionRecord } from '../../db/control-store.ts';
import { noContentResponse, successResponse } from '../envelope.ts';
import { ApiError } from '../errors.ts';
import { defineRoute, type ApiRoute, type RouteContext } from '../route.ts';
import { validateBody } from '../validation.ts';
import { requireZone } from '../zones/zone-lookup.ts';
import {
  phaseProblem,
  ruleInput,
  rulePosition,
  rulesetResult,
  rulesetSummaryResult,
  toRulesetJson,
  toVersionJson,
  toVersionSummaryJson,
  type RuleInput,
  type RulePosition,
} from './ruleset-schema.ts';
import { isDryRun } from './dry-run.ts';
import { planRuleAdd, planRuleDelete, planRuleEdit, planVersionDelete } from './ruleset-service.ts';

const TAG = 'Rulesets';
const RULESET = '/zones/:zone_id/rulesets/:ruleset_id';
const ENTRYPOINT = '/zones/:zone_id/rulesets/phases/:phase/entrypoint';

/** A single-rule body: the rule's fields and, apart, where it goes. */
const ruleBody = z.looseObject({ position: rulePosition.optional() });

function rulesetNotFound(id: string): ApiError {
  return new ApiError('API_RULESET_NOT_FOUND', { message: `could not find ruleset ${id.slice(0, 64)}` });
}

function ruleNotFound(id: string): ApiError {
  return new ApiError('API_RULE_NOT_FOUND', { message: `could not find rule ${id.slice(0, 64)} in the ruleset` });
}

/** The body's rule (every field but `position`) and position; `ruleRequired: false` lets a body of `position` alone through. */
function splitRuleBody(
  body: Record<string, unknown> & { position?: RulePosition },
  ruleRequired: boolean,
): { rule: RuleInput | undefined; position: RulePosition | undefined } {
  const { position, ...rest } = body;
  const rule = !ruleRequired && Object.keys(rest).length === 0 ? undefined : validateBody(ruleInput, rest, 'API_RULESET_INVALID');
  return { rule, position };
}

/** Writes the ruleset as `plan` says; a dry run (`dry_run=true`) plans it on the current ruleset and writes nothing. */
async function writeRuleset(ctx: RouteContext<unknown>, plan: (current: RulesetRecord) => RulesetRecord): Promise<Response> {
  const zone = await requireZone(ctx);
  const id = ctx.params.ruleset_id ?? '';
  if (isDryRun(ctx)) {
    const current = await ctx.deps.control.getRuleset(zone.id, id);
    if (!current) throw rulesetNotFound(id);
    plan(current);
    return successResponse(null);
  }
  const updated = await ctx.deps.control.updateRuleset(zone.id, id, plan);
  if (!updated) throw rulesetNotFound(id);
  return successResponse(toRulesetJson(updated));
}

/** The ruleset of the path: by id, or the phase's entry point. */
async function rulesetOf(ctx: RouteContext<unknown>, byPhase: boolean): Promise<RulesetRecord | null> {
  const zone = await requireZone(ctx);
  if (!byPhase) {
    const ruleset = await ctx.deps.control.getRuleset(zone.id, ctx.params.ruleset_id ?? '');
    if (!ruleset) throw rulesetNotFound(ctx.params.ruleset_id ?? '');
    return ruleset;
  }
  const problem = phaseProblem(ctx.params.phase ?? '');
  if (problem) throw new ApiError(problem.apiCode ?? 'API_RULESET_INVALID', { message: problem.message });
  return ctx.deps.control.getEntrypoint(zone.id, ctx.params.phase!);
}

function allVersions(ruleset: RulesetRecord): RulesetVersionRecord[] {
  return [{ version: ruleset.version, description: ruleset.description, lastUpdated: ruleset.lastUpdated, rules: ruleset.rules }, ...(ruleset.history ?? [])];
}

function versionNumber(ctx: RouteContext<unknown>): number {
  const raw = ctx.params.version ?? '';
  if (!/^[1-9][0-9]{0,9}$/.test(raw))
    throw new ApiError('API_RULESET_INVALID', {
      message: `'${raw.slice(0, 32)}' is not a valid value for version because it must be a version number (1, 2, ...)`,
    });
  return Number(raw);
}

function versionNotFound(version: number): ApiError {
  return new ApiError('API_RULESET_VERSION_NOT_FOUND', { message: `could not find version ${version} of the ruleset: it never was, or is no longer kept` });
}

function versionRoutes(base: string, byPhase: boolean): ApiRoute[] {
  const kind = byPhase ? 'entrypoint' : 'ruleset';
  return [
    defineRoute({
      method: 'GET',
      path: `${base}/versions`,
      operationId: `rulesets-${kind}-versions-list`,
      summary: `The ${kind}'s versions, newest first (without rules)`,
      tag: TAG,
      result: z.array(rulesetSummaryResult),
      async handler(ctx) {
        const ruleset = await rulesetOf(ctx, byPhase);
        return successResponse(ruleset ? allVersions(ruleset).map((version) => toVersionSummaryJson(ruleset, version)) : []);
      },
    }),
    defineRoute({
      method: 'GET',
      path: `${base}/versions/:version`,
      operationId: `rulesets-${kind}-versions-get`,
      summary: `One version of the ${kind}, with its rules`,
      tag: TAG,
      result: rulesetResult,
      async handler(ctx) {
        const number = versionNumber(ctx);
        const ruleset = await rulesetOf(ctx, byPhase);
        const version = ruleset ? allVersions(ruleset).find((kept) => kept.version === number) : undefined;
        if (!ruleset || !version) throw versionNotFound(number);
        return successResponse(toVersionJson(ruleset, version));
      },
    }),
  ];
}

export const RULESET_RULE_ROUTES: ApiRoute[] = [
  defineRoute<z.infer<typeof ruleBody>>({
    method: 'POST',
    path: `${RULESET}/rules`,
    operationId: 'rulesets-rules-create',
    summary: 'Add a rule (last, or at `position`): the ruleset at its new version',
    tag: TAG,
    body: { schema: ruleBody, invalid: 'API_RULESET_INVALID' },
    result: rulesetResult,
    handler(ctx) {
      const { rule, position } = splitRuleBody(ctx.body, true);
      const now = ctx.deps.clock.now();
      return writeRuleset(ctx, (current) => planRuleAdd(current, rule!, position, now));
    },
  }),
  defineRoute<z.infer<typeof ruleBody>>({
    method: 'PATCH',
    path: `${RULESET}/rules/:rule_id`,
    operationId: 'rulesets-rules-edit',
    summary: "Replace a rule's definition and/or move it (`position`)",
    tag: TAG,
    body: { schema: ruleBody, invalid: 'API_RULESET_INVALID' },
    result: rulesetResult,
    handler(ctx) {
      const { rule, position } = splitRuleBody(ctx.body, false);
      const id = ctx.params.rule_id ?? '';
      const now = ctx.deps.clock.now();
      return writeRuleset(
        ctx,
        (current) =>
          planRuleEdit(current, id, rule, position, now) ??
          (() => {
            throw ruleNotFound(id);
          })(),
      );
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: `${RULESET}/rules/:rule_id`,
    operationId: 'rulesets-rules-delete',
    summary: 'Delete a rule: the ruleset at its new version',
    tag: TAG,
    result: rulesetResult,
    handler(ctx) {
      const id = ctx.params.rule_id ?? '';
      const now = ctx.deps.clock.now();
      return writeRuleset(
        ctx,
        (current) =>
          planRuleDelete(current, id, now) ??
          (() => {
            throw ruleNotFound(id);
          })(),
      );
    },
  }),
  ...versionRoutes(RULESET, false),
  defineRoute({
    method: 'DELETE',
    path: `${RULESET}/versions/:version`,
    operationId: 'rulesets-versions-delete',
    summary: 'Forget an earlier version of the ruleset (204, no body)',
    tag: TAG,
    noContent: true,
    async handler(ctx) {
      const number = versionNumber(ctx);
      await writeRuleset(ctx, (current) => {
        const planned = planVersionDelete(current, number);
        if (planned === 'latest')
          throw new ApiError('API_RULESET_INVALID', {
            message: `'${number}' is not a valid value for version because it is the ruleset's current version: only earlier versions can be deleted`,
          });
        if (planned === null) throw versionNotFound(number);
        return planned;
      });
      return noContentResponse();
    },
  }),
  ...versionRoutes(ENTRYPOINT, true),
];
