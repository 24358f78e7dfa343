/**
 * Log jobs under `/zones/:zone_id/logshipping/` (and the real API's `/logpush/`, app.ts): jobs CRUD, the
 * dataset's fields and jobs, and ownership challenges. Job ids are integers; jobs are created
 * disabled unless `enabled: true`; at most 4 per zone (403 / 1004, as the real service).
 *
 * Extensions: `GET .../jobs/:job_id/delivered` reads back the newest lines a job delivered (file://
 * and store:// destinations), for the dashboard's live view; `GET .../datasets/:dataset_id/catalog`
 * gives each field's type and whether this server fills it, and the jobs limit, for the job form.
 *
 * By design: file:// destinations must lie below `[logs] file_roots` and outside the data dir
 * (file-destinations.ts), and a directory is one account's at a time (ownership.ts).
 *
 * The validation routes are in validate-routes.ts. Gaps: `fields/default` is not implemented;
 * edge (Instant Logs) jobs are not offered (refused by name: not-provided.ts).
 */
import { z } from 'zod';
import { HTTP_REQUESTS_FIELDS, isFilledField } from '../../logs/index.ts';
import { successResponse } from '../envelope.ts';
import { ApiError, objectNotFound } from '../errors.ts';
import { defineRoute, type ApiRoute, type RouteContext } from '../route.ts';
import { requireZone } from '../zones/zone-lookup.ts';
import { needsOwnershipChallenge, parseDestination } from '../../logs/index.ts';
import {
  createJobBody,
  jobResult,
  LOG_DATASET,
  MAX_JOBS_PER_ZONE,
  ownershipBody,
  toJobJson,
  updateJobBody,
  validateOwnershipBody,
  type CreateJobBody,
  type UpdateJobBody,
} from './job-schema.ts';
import { applyJobUpdate, checkDestination, newJob } from './job-service.ts';
import { challengeTarget } from './file-destinations.ts';
import { challengeMatches, issueChallenge } from './ownership.ts';
import { readDeliveredLines } from './delivered-lines.ts';
import { accountStore } from '../../store/engine/account-store.ts';
import { validateQuery } from '../validation.ts';

const deliveredQuery = z.object({ lines: z.coerce.number().int().min(1).max(1000).default(50).describe('How many of the newest lines (default 50)') });

const catalogResult = z.object({
  fields: z.array(z.object({ name: z.string(), type: z.string(), description: z.string(), deprecated: z.boolean(), filled: z.boolean() })),
  max_jobs_per_zone: z.number().int(),
  file_roots: z.array(z.string()).describe('The directories file:// destinations may point below ([logs] file_roots); empty when file:// is off'),
});

const TAG = 'Log jobs';
const BASE = '/zones/:zone_id/logshipping';

export const JOB_ROUTES: ApiRoute[] = [
  defineRoute({
    method: 'GET',
    path: `${BASE}/jobs`,
    operationId: 'logshipping-jobs-list',
    summary: "List the zone's log jobs",
    tag: TAG,
    result: z.array(jobResult),
    resultInfo: 'page',
    async handler(ctx) {
      const zone = await requireZone(ctx);
      return listResponse(await ctx.deps.control.listJobs(zone.id));
    },
  }),
  defineRoute<CreateJobBody>({
    method: 'POST',
    path: `${BASE}/jobs`,
    operationId: 'logshipping-jobs-create',
    summary: 'Create a log job',
    tag: TAG,
    body: { schema: createJobBody, invalid: 'API_JOB_INVALID' },
    result: jobResult,
    async handler(ctx) {
      const zone = await requireZone(ctx);
      if ((await ctx.deps.control.listJobs(zone.id)).length >= MAX_JOBS_PER_ZONE) throw new ApiError('API_JOB_LIMIT');
      const checked = await checkDestination(ctx.deps, zone, ctx.body.destination_conf, ctx.body.ownership_challenge);
      const job = await ctx.deps.control.createJob(zone.id, (jobsInZone) => {
        if (jobsInZone >= MAX_JOBS_PER_ZONE) throw new ApiError('API_JOB_LIMIT');
        return newJob(ctx.body, zone.id, ctx.deps.clock.now(), checked);
      });
      return successResponse(toJobJson(job));
    },
  }),
  defineRoute({
    method: 'GET',
    path: `${BASE}/jobs/:job_id`,
    operationId: 'logshipping-jobs-get',
    summary: 'Get a log job',
    tag: TAG,
    result: jobResult,
    async handler(ctx) {
      const zone = await requireZone(ctx);
      const job = await ctx.deps.control.getJob(zone.id, jobId(ctx));
      if (!job) throw jobNotFound(ctx);
      return successResponse(toJobJson(job));
    },
  }),
  defineRoute<UpdateJobBody>({
    method: 'PUT',
    path: `${BASE}/jobs/:job_id`,
    operationId: 'logshipping-jobs-update',
    summary: 'Update a log job (fields not sent are kept; a new destination_conf needs its ownership_challenge)',
    tag: TAG,
    body: { schema: updateJobBody, invalid: 'API_JOB_INVALID' },
    result: jobResult,
    async handler(ctx) {
      const zone = await requireZone(ctx);
      const id = jobId(ctx);
      const current = await ctx.deps.control.getJob(zone.id, id);
      if (!current) throw jobNotFound(ctx);
      const { body } = ctx;
      let checked: Parameters<typeof applyJobUpdate>[3] = null;
      if (body.destination_conf !== undefined && body.destination_conf !== current.destinationConf) {
        checked = { ...(await checkDestination(ctx.deps, zone, body.destination_conf, body.ownership_challenge)), conf: body.destination_conf };
      }
      const now = ctx.deps.clock.now();
      const updated = await ctx.deps.control.updateJob(zone.id, id, (job) => applyJobUpdate(job, body, now, checked));
      if (!updated) throw jobNotFound(ctx);
      return successResponse(toJobJson(updated));
    },
  }),
  defineRoute({
    method: 'GET',
    path: `${BASE}/jobs/:job_id/delivered`,
    operationId: 'logshipping-jobs-delivered',
    tag: TAG,
    summary: 'The newest lines the job delivered (edgeport extension): its newest batch read back from a file:// or store:// destination',
    query: deliveredQuery,
    result: z.object({ batch: z.string().nullable(), delivered_on: z.string().nullable(), lines: z.array(z.string()) }),
    async handler(ctx) {
      const zone = await requireZone(ctx);
      const job = await ctx.deps.control.getJob(zone.id, jobId(ctx));
      if (!job) throw jobNotFound(ctx);
      const q = validateQuery(deliveredQuery, ctx.query);
      const read = await readDeliveredLines(
        job.destinationConf,
        ctx.deps.store && accountStore(ctx.deps.store, ctx.account.id),
        ctx.deps.destinations.fileRoots,
        q.lines,
      );
      return successResponse({ batch: read.batch, delivered_on: read.delivered === null ? null : new Date(read.delivered).toISOString(), lines: read.lines });
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: `${BASE}/jobs/:job_id`,
    operationId: 'logshipping-jobs-delete',
    summary: 'Delete a log job',
    tag: TAG,
    result: z.object({ id: z.number().int() }),
    async handler(ctx) {
      const zone = await requireZone(ctx);
      const id = jobId(ctx);
      if (!(await ctx.deps.control.deleteJob(zone.id, id))) throw jobNotFound(ctx);
      return successResponse({ id });
    },
  }),
  defineRoute({
    method: 'GET',
    path: `${BASE}/datasets/:dataset_id/fields`,
    operationId: 'logshipping-dataset-fields',
    summary: "The dataset's fields: name -> description",
    tag: TAG,
    result: z.record(z.string(), z.string()),
    async handler(ctx) {
      await requireZone(ctx);
      requireDataset(ctx);
      return successResponse(
        Object.fromEntries(
          Object.entries(HTTP_REQUESTS_FIELDS).map(([name, field]) => [
            name,
            `${field.description} Type: ${field.type}.${'deprecated' in field ? ' Deprecated.' : ''}${isFilledField(name) ? '' : ' Not filled by edgeport: null in every line.'}`,
          ]),
        ),
      );
    },
  }),
  defineRoute({
    method: 'GET',
    path: `${BASE}/datasets/:dataset_id/catalog`,
    operationId: 'logshipping-dataset-catalog',
    tag: TAG,
    summary:
      "The dataset as this server serves it (edgeport extension): each field's type, description, whether it is deprecated and whether the edge fills it (else null in every line); the jobs a zone may have; where file:// destinations may point",
    result: catalogResult,
    async handler(ctx) {
      await requireZone(ctx);
      requireDataset(ctx);
      const fields = Object.entries(HTTP_REQUESTS_FIELDS).map(([name, field]) => ({
        name,
        type: field.type,
        description: field.description,
        deprecated: 'deprecated' in field,
        filled: isFilledField(name),
      }));
      return successResponse({ fields, max_jobs_per_zone: MAX_JOBS_PER_ZONE, file_roots: [...ctx.deps.destinations.fileRoots.roots] });
    },
  }),
  defineRoute({
    method: 'GET',
    path: `${BASE}/datasets/:dataset_id/jobs`,
    operationId: 'logshipping-dataset-jobs',
    summary: "The zone's jobs of a dataset",
    tag: TAG,
    result: z.array(jobResult),
    resultInfo: 'page',
    async handler(ctx) {
      const zone = await requireZone(ctx);
      requireDataset(ctx);
      return listResponse(await ctx.deps.control.listJobs(zone.id));
    },
  }),
  defineRoute<z.infer<typeof ownershipBody>>({
    method: 'POST',
    path: `${BASE}/ownership`,
    operationId: 'logshipping-ownership-create',
    summary: 'Write an ownership challenge file (ownership-challenge.txt, holding a token valid 7 days) to a file:// or store:// destination',
    tag: TAG,
    body: { schema: ownershipBody, invalid: 'API_JOB_INVALID' },
    result: z.object({ filename: z.string().nullable(), message: z.string(), valid: z.boolean() }),
    async handler(ctx) {
      const zone = await requireZone(ctx);
      const destination = destinationOf(ctx.body.destination_conf);
      if (!needsOwnershipChallenge(destination)) {
        throw new ApiError('API_JOB_INVALID', {
          message: `${destination.scheme}:// destinations need no ownership challenge: create the job without ownership_challenge`,
          pointer: '/destination_conf',
        });
      }
      const target = await challengeTarget(ctx.deps, ctx.body.destination_conf, destination);
      return successResponse(await issueChallenge(ctx.deps, zone, destination, target));
    },
  }),
  defineRoute<z.infer<typeof validateOwnershipBody>>({
    method: 'POST',
    path: `${BASE}/ownership/validate`,
    operationId: 'logshipping-ownership-validate',
    summary: 'Check an ownership challenge token without creating a job',
    tag: TAG,
    body: { schema: validateOwnershipBody, invalid: 'API_JOB_INVALID' },
    result: z.object({ valid: z.boolean() }),
    async handler(ctx) {
      const zone = await requireZone(ctx);
      const destination = destinationOf(ctx.body.destination_conf);
      const valid =
        !needsOwnershipChallenge(destination) ||
        (await challengeMatches(
          ctx.deps,
          zone.id,
          (await challengeTarget(ctx.deps, ctx.body.destination_conf, destination)).covering,
          ctx.body.ownership_challenge,
        ));
      return successResponse({ valid });
    },
  }),
];

function listResponse(jobs: Parameters<typeof toJobJson>[0][]): Response {
  return successResponse(jobs.map(toJobJson), { resultInfo: { page: 1, per_page: jobs.length, count: jobs.length, total_count: jobs.length, total_pages: 1 } });
}

function jobId(ctx: RouteContext<unknown>): number {
  const text = ctx.params.job_id ?? '';
  if (!/^[1-9]\d{0,14}$/.test(text)) throw objectNotFound(ctx.path, 400);
  return Number(text);
}

function jobNotFound(ctx: RouteContext<unknown>): ApiError {
  return new ApiError('API_JOB_NOT_FOUND', { message: `job not found: the zone has no log job ${ctx.params.job_id}` });
}

function requireDataset(ctx: RouteContext<unknown>): void {
  if (ctx.params.dataset_id !== LOG_DATASET) throw objectNotFound(ctx.path);
}

/** A destination the body schema already validated. */
function destinationOf(conf: string) {
  const parsed = parseDestination(conf);
  if (!parsed.ok) throw new Error(`Unvalidated destination_conf: ${parsed.reason}`);
  return parsed.destination;
}
