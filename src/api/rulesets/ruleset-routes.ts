/**
 * Rulesets at zone level (docs/management-api.md, "Routes"): list, create, get, update, delete,
 * and the phase entry point. Only the `http_log_custom_fields` phase is served; one zone ruleset
 * per phase. Each write is one transaction and is seen by the edge's next request.
 * Single rules and versions: ruleset-rule-routes.ts.
 *
 * `dry_run=true` makes every check of a write and writes nothing (dry-run.ts).
 */
import { z } from 'zod';
import { randomHexId } from '../../core/ids.ts';
import type { RulesetRecord } from '../../db/control-store.ts';
import { noContentResponse, successResponse } from '../envelope.ts';
import { ApiError } from '../errors.ts';
import { defineRoute, type ApiRoute, type RouteContext } from '../route.ts';
import { validateQuery } from '../validation.ts';
import { requireZone } from '../zones/zone-lookup.ts';
import {
  createRulesetBody,
  listRulesetsQuery,
  phaseProblem,
  rulesetResult,
  rulesetSummaryResult,
  toRulesetJson,
  toRulesetSummaryJson,
  updateEntrypointBody,
  updateRulesetBody,
  type CreateRulesetBody,
  type UpdateEntrypointBody,
  type UpdateRulesetBody,
} from './ruleset-schema.ts';
import { isDryRun } from './dry-run.ts';
import { planEntrypoint, planRules, planRulesetUpdate } from './ruleset-service.ts';

const TAG = 'Rulesets';

export const RULESET_ROUTES: ApiRoute[] = [
  defineRoute({
    method: 'GET',
    path: '/zones/:zone_id/rulesets',
    operationId: 'rulesets-list',
    summary: "List the zone's rulesets (without rules)",
    tag: TAG,
    query: listRulesetsQuery,
    result: z.array(rulesetSummaryResult),
    resultInfo: 'cursor',
    async handler(ctx) {
      const zone = await requireZone(ctx);
      const q = validateQuery(listRulesetsQuery, ctx.query);
      const all = await ctx.deps.control.listRulesets(zone.id);
      const after = q.cursor === undefined ? null : decodeCursor(q.cursor);
      const rest = after === null ? all : all.filter((ruleset) => ruleset.id > after);
      const page = rest.slice(0, q.per_page);
      const more = rest.length > page.length;
      return successResponse(page.map(toRulesetSummaryJson), {
        resultInfo: { count: page.length, per_page: q.per_page, ...(more ? { cursor: Buffer.from(page[page.length - 1]!.id).toString('base64url') } : {}) },
      });
    },
  }),
  defineRoute<CreateRulesetBody>({
    method: 'POST',
    path: '/zones/:zone_id/rulesets',
    operationId: 'rulesets-create',
    summary: "Create the zone's entry point ruleset of a phase",
    tag: TAG,
    body: { schema: createRulesetBody, invalid: 'API_RULESET_INVALID' },
    result: rulesetResult,
    async handler(ctx) {
      const zone = await requireZone(ctx);
      const now = ctx.deps.clock.now();
      const { body } = ctx;
      const ruleset: RulesetRecord = {
        id: randomHexId(),
        zoneId: zone.id,
        name: body.name,
        description: body.description ?? '',
        kind: body.kind,
        phase: body.phase,
        version: 1,
        lastUpdated: now,
        rules: planRules([], body.rules ?? [], now),
      };
      const taken = isDryRun(ctx)
        ? (await ctx.deps.control.getEntrypoint(zone.id, body.phase))
          ? 'phase-taken'
          : 'dry'
        : await ctx.deps.control.createRuleset(ruleset);
      if (taken === 'phase-taken') {
        throw new ApiError('API_ZONE_RULESET_EXISTS', {
          message: `'zone' is not a valid value for kind because exceeded maximum number of zone rulesets for phase ${body.phase}`,
          pointer: '/kind',
        });
      }
      return successResponse(taken === 'dry' ? null : toRulesetJson(ruleset));
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/zones/:zone_id/rulesets/:ruleset_id',
    operationId: 'rulesets-get',
    summary: 'Get a ruleset with its rules',
    tag: TAG,
    result: rulesetResult,
    async handler(ctx) {
      const zone = await requireZone(ctx);
      const ruleset = await ctx.deps.control.getRuleset(zone.id, ctx.params.ruleset_id!);
      if (!ruleset) throw rulesetNotFound(ctx);
      return successResponse(toRulesetJson(ruleset));
    },
  }),
  defineRoute<UpdateRulesetBody>({
    method: 'PUT',
    path: '/zones/:zone_id/rulesets/:ruleset_id',
    operationId: 'rulesets-update',
    summary: "Replace a ruleset's rules and description",
    tag: TAG,
    body: { schema: updateRulesetBody, invalid: 'API_RULESET_INVALID' },
    result: rulesetResult,
    async handler(ctx) {
      const zone = await requireZone(ctx);
      const now = ctx.deps.clock.now();
      if (isDryRun(ctx)) {
        const current = await ctx.deps.control.getRuleset(zone.id, ctx.params.ruleset_id!);
        if (!current) throw rulesetNotFound(ctx);
        planRulesetUpdate(current, ctx.body, now);
        return successResponse(null);
      }
      const updated = await ctx.deps.control.updateRuleset(zone.id, ctx.params.ruleset_id!, (current) => planRulesetUpdate(current, ctx.body, now));
      if (!updated) throw rulesetNotFound(ctx);
      return successResponse(toRulesetJson(updated));
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/zones/:zone_id/rulesets/:ruleset_id',
    operationId: 'rulesets-delete',
    summary: 'Delete a ruleset (204, no body)',
    tag: TAG,
    noContent: true,
    async handler(ctx) {
      const zone = await requireZone(ctx);
      const found = isDryRun(ctx)
        ? (await ctx.deps.control.getRuleset(zone.id, ctx.params.ruleset_id!)) !== null
        : await ctx.deps.control.deleteRuleset(zone.id, ctx.params.ruleset_id!);
      if (!found) throw rulesetNotFound(ctx);
      return noContentResponse();
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/zones/:zone_id/rulesets/phases/:phase/entrypoint',
    operationId: 'rulesets-entrypoint-get',
    summary: "Get the zone's entry point ruleset of a phase",
    tag: TAG,
    result: rulesetResult,
    async handler(ctx) {
      const zone = await requireZone(ctx);
      const phase = ctx.params.phase!;
      const problem = phaseProblem(phase);
      if (problem && problem.apiCode === undefined) throw new ApiError('API_RULESET_INVALID', { message: problem.message });
      const ruleset = await ctx.deps.control.getEntrypoint(zone.id, phase);
      if (!ruleset) throw new ApiError('API_ENTRYPOINT_NOT_FOUND', { message: `could not find entrypoint ruleset in the ${phase} phase` });
      return successResponse(toRulesetJson(ruleset));
    },
  }),
  defineRoute<UpdateEntrypointBody>({
    method: 'PUT',
    path: '/zones/:zone_id/rulesets/phases/:phase/entrypoint',
    operationId: 'rulesets-entrypoint-update',
    summary: "Create or update the zone's entry point ruleset of a phase",
    tag: TAG,
    body: { schema: updateEntrypointBody, invalid: 'API_RULESET_INVALID' },
    result: rulesetResult,
    async handler(ctx) {
      const zone = await requireZone(ctx);
      const phase = ctx.params.phase!;
      const problem = phaseProblem(phase);
      if (problem) throw new ApiError(problem.apiCode ?? 'API_RULESET_INVALID', { message: problem.message });
      const now = ctx.deps.clock.now();
      if (isDryRun(ctx)) {
        planEntrypoint(await ctx.deps.control.getEntrypoint(zone.id, phase), zone.id, ctx.body, now);
        return successResponse(null);
      }
      const ruleset = await ctx.deps.control.putEntrypoint(zone.id, phase, (current) => planEntrypoint(current, zone.id, ctx.body, now));
      return successResponse(toRulesetJson(ruleset));
    },
  }),
];

function rulesetNotFound(ctx: RouteContext<unknown>): ApiError {
  return new ApiError('API_RULESET_NOT_FOUND', { message: `could not find ruleset ${ctx.params.ruleset_id}` });
}

function decodeCursor(cursor: string): string {
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/^[0-9a-f]{32}$/.test(id))
    throw new ApiError('API_INVALID_QUERY', { message: `'${cursor}' is not a valid value for cursor because it is not a cursor of a previous list call` });
  return id;
}
