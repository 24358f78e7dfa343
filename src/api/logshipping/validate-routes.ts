/**
 * The log job validation routes of a zone (`POST .../logshipping/validate/...`, and under
 * `/logpush/`): whether a destination would be accepted (everything a job's creation checks but
 * the ownership challenge: the form, the file roots, where the account may connect, the test
 * upload), whether a job of the zone already writes there, and whether `logpull_options` are valid.
 * A destination or options that would be refused answer 200 with `valid: false` and the reason.
 */
import { z } from 'zod';
import { successResponse } from '../envelope.ts';
import { ApiError } from '../errors.ts';
import { defineRoute, type ApiRoute } from '../route.ts';
import { requireZone } from '../zones/zone-lookup.ts';
import { LOG_DATASET, logpullOptionsProblem } from './job-schema.ts';
import { checkDestination } from './job-service.ts';

const TAG = 'Log jobs';
const BASE = '/zones/:zone_id/logshipping/validate';

const destinationBody = z.strictObject({ destination_conf: z.string().min(1).max(4096) });
const originBody = z.strictObject({ logpull_options: z.string().max(4096).nullable(), dataset: z.string().max(256).optional() });
const validResult = z.object({ valid: z.boolean(), message: z.string() });

export const VALIDATE_ROUTES: ApiRoute[] = [
  defineRoute<z.infer<typeof destinationBody>>({
    method: 'POST',
    path: `${BASE}/destination`,
    operationId: 'logshipping-validate-destination',
    summary: "Whether a job could write to the destination (all a job's checks but the ownership challenge)",
    tag: TAG,
    body: { schema: destinationBody, invalid: 'API_JOB_INVALID' },
    result: validResult,
    async handler(ctx) {
      const zone = await requireZone(ctx);
      try {
        await checkDestination(ctx.deps, zone, ctx.body.destination_conf, undefined, { ownership: false });
      } catch (error) {
        if (error instanceof ApiError) return successResponse({ valid: false, message: error.message });
        throw error;
      }
      return successResponse({ valid: true, message: '' });
    },
  }),
  defineRoute<z.infer<typeof destinationBody>>({
    method: 'POST',
    path: `${BASE}/destination/exists`,
    operationId: 'logshipping-validate-destination-exists',
    summary: 'Whether a log job of the zone already writes to the destination',
    tag: TAG,
    body: { schema: destinationBody, invalid: 'API_JOB_INVALID' },
    result: z.object({ exists: z.boolean() }),
    async handler(ctx) {
      const zone = await requireZone(ctx);
      const jobs = await ctx.deps.control.listJobs(zone.id);
      return successResponse({ exists: jobs.some((job) => job.destinationConf === ctx.body.destination_conf) });
    },
  }),
  defineRoute<z.infer<typeof originBody>>({
    method: 'POST',
    path: `${BASE}/origin`,
    operationId: 'logshipping-validate-origin',
    summary: 'Whether `logpull_options` are valid for the dataset',
    tag: TAG,
    body: { schema: originBody, invalid: 'API_JOB_INVALID' },
    result: validResult,
    async handler(ctx) {
      await requireZone(ctx);
      if (ctx.body.dataset !== undefined && ctx.body.dataset !== LOG_DATASET)
        return successResponse({ valid: false, message: `the dataset ${ctx.body.dataset} is not served: only ${LOG_DATASET} is` });
      const problem = ctx.body.logpull_options === null ? null : logpullOptionsProblem(ctx.body.logpull_options);
      return successResponse(problem === null ? { valid: true, message: '' } : { valid: false, message: problem });
    },
  }),
];
