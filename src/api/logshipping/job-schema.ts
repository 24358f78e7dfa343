/**
 * Log jobs (docs/management-api.md, "Routes"): request schemas with every check that
 * needs no stored state (fields, filter, destination, options), the response shape, and the
 * conversions between REST snake_case and LogJobRecord.
 */
import { z } from 'zod';
import type { LogJobRecord, LogOutputOptions, TimestampFormat } from '../../db/control-store.ts';
import { HTTP_REQUESTS_DEFAULT_FIELDS, isHttpRequestsField, parseFilter } from '../../logs/index.ts';
import { refuse, refuseValue } from '../refinements.ts';
import { MAX_DESTINATION_CONF_LENGTH, parseDestination } from '../../logs/index.ts';

export const LOG_DATASET = 'http_requests';
/** The real service's limit: 403 / 1004 beyond it. */
export const MAX_JOBS_PER_ZONE = 4;

const TIMESTAMP_FORMATS = ['unixnano', 'unix', 'rfc3339', 'rfc3339ms', 'rfc3339ns'] as const satisfies readonly TimestampFormat[];
const NAME = /^[a-zA-Z0-9\-.]*$/;
const CHALLENGE_TOKEN = /^[a-zA-Z0-9/+.\-_]*$/;

/** 0 turns a batch limit off; other values must lie in the real service's range. */
const UPLOAD_LIMITS = {
  max_upload_bytes: [5_000_000, 1_000_000_000],
  max_upload_records: [1_000, 1_000_000],
  max_upload_interval_seconds: [30, 300],
} as const;

const text = () => z.string().max(4096).nullable().optional();

const outputOptionsInput = z
  .strictObject({
    field_names: z
      .array(z.string())
      .optional()
      .describe(`Fields of the ${LOG_DATASET} dataset, in order; default ${HTTP_REQUESTS_DEFAULT_FIELDS.join(',')}`),
    output_type: z.enum(['ndjson', 'csv']).nullable().optional(),
    batch_prefix: text(),
    batch_suffix: text(),
    record_prefix: text(),
    record_suffix: text(),
    record_delimiter: text(),
    field_delimiter: text(),
    record_template: text().describe('Go text/template subset: {{ .Field }}, {{ "literal" }}, {{/* comment */}} and plain text'),
    timestamp_format: z.enum(TIMESTAMP_FORMATS).nullable().optional(),
    sample_rate: z.number().nullable().optional().describe('In (0, 1]; applied after the filter'),
    'CVE-2021-44228': z
      .union([z.boolean(), z.enum(['true', 'false'])])
      .nullable()
      .optional(),
    merge_subrequests: z.boolean().nullable().optional().describe('Only false: edgeport records no script subrequests'),
  })
  .superRefine((options, ctx) => {
    const names = options.field_names;
    if (names !== undefined) {
      if (names.length === 0) refuseValue(ctx, ['field_names'], names, 'it must list at least one field');
      const seen = new Set<string>();
      names.forEach((name, i) => {
        if (!isHttpRequestsField(name)) refuseValue(ctx, ['field_names', i], name, `it is not a field of the ${LOG_DATASET} dataset`);
        else if (seen.has(name)) refuseValue(ctx, ['field_names', i], name, 'it is listed twice');
        seen.add(name);
      });
    }
    const rate = options.sample_rate;
    if (rate !== undefined && rate !== null && !(rate > 0 && rate <= 1)) refuseValue(ctx, ['sample_rate'], rate, 'it must be greater than 0 and at most 1');
    if (options.merge_subrequests === true) refuse(ctx, ['merge_subrequests'], 'merge_subrequests is not supported: edgeport records no script subrequests');
    const template = options.record_template;
    if (template) {
      const problem = recordTemplateProblem(template);
      if (problem) refuseValue(ctx, ['record_template'], template, problem);
    }
  });
export type OutputOptionsInput = z.infer<typeof outputOptionsInput>;

/** Checks the template subset the real service documents; actions name dataset fields. */
export function recordTemplateProblem(template: string): string | null {
  let rest = template;
  for (;;) {
    const open = rest.indexOf('{{');
    if (open < 0) return rest.includes('}}') ? 'it has "}}" without "{{"' : null;
    const close = rest.indexOf('}}', open + 2);
    if (close < 0) return 'it has "{{" without "}}"';
    const action = rest.slice(open + 2, close).trim();
    const field = /^\.([A-Za-z][A-Za-z0-9]*)$/.exec(action);
    const literal = /^"(?:[^"\\]|\\.)*"$|^`[^`]*`$/.test(action);
    const comment = /^\/\*[\s\S]*\*\/$/.test(action);
    if (field) {
      if (!isHttpRequestsField(field[1]!)) return `{{ ${action} }} is not a field of the ${LOG_DATASET} dataset`;
    } else if (!literal && !comment) {
      return `{{ ${action} }} is not allowed: use {{ .Field }}, {{ "literal" }} or {{/* comment */}}`;
    }
    rest = rest.slice(close + 2);
  }
}

const jobFields = {
  name: z.string().max(512).nullable().optional(),
  destination_conf: z
    .string()
    .max(MAX_DESTINATION_CONF_LENGTH)
    .describe(
      'file:///dir, store://bucket/path, s3://bucket/path?region=..&access-key-id=..&secret-access-key=..[&endpoint=..], https://host/path[?header_Name=value]',
    ),
  dataset: z.string().nullable().optional().describe(`Only ${LOG_DATASET}`),
  enabled: z.boolean().optional().describe('Default false'),
  filter: z
    .string()
    .nullable()
    .optional()
    .describe('JSON text: {"where": <criterion | {and:[..]} | {or:[..]}>}; at most 30 operators, 1000 bytes and 64 levels of nesting'),
  kind: z.string().nullable().optional().describe('Only "" (edge jobs are not offered)'),
  frequency: z.enum(['high', 'low']).nullable().optional().describe('Deprecated; default high'),
  output_options: outputOptionsInput.nullable().optional(),
  logpull_options: z
    .string()
    .max(4096)
    .nullable()
    .optional()
    .describe('Deprecated: fields=..&timestamps=..&sample=..&CVE-2021-44228=true; used when output_options is absent'),
  ownership_challenge: z.string().max(4096).optional().describe('Token from POST .../logshipping/ownership; required for file:// and store:// destinations'),
  max_upload_bytes: z.number().int().nullable().optional(),
  max_upload_records: z.number().int().nullable().optional(),
  max_upload_interval_seconds: z.number().int().nullable().optional(),
};

type JobFields = { [K in keyof typeof jobFields]?: z.infer<(typeof jobFields)[K]> };

function checkJob(job: JobFields, ctx: z.RefinementCtx): void {
  if (job.name && !NAME.test(job.name)) refuseValue(ctx, ['name'], job.name, 'a job name may contain only letters, digits, hyphens and dots');
  if (job.dataset !== undefined && job.dataset !== null && job.dataset !== LOG_DATASET) {
    refuseValue(ctx, ['dataset'], job.dataset, `edgeport serves the ${LOG_DATASET} dataset only`);
  }
  if (job.kind !== undefined && job.kind !== null && job.kind !== '') refuseValue(ctx, ['kind'], job.kind, 'only "" is offered (no edge jobs)');
  if (job.destination_conf !== undefined) {
    const parsed = parseDestination(job.destination_conf);
    if (!parsed.ok) refuseValue(ctx, ['destination_conf'], job.destination_conf, parsed.reason);
  }
  if (job.filter) {
    const parsed = parseFilter(job.filter);
    if (!parsed.ok) {
      for (const problem of parsed.problems) {
        const where = problem.pointer ? ` (at ${problem.pointer})` : '';
        refuse(ctx, ['filter'], `invalid filter: ${problem.message}${where}`, problem.limit ? 'API_FILTER_LIMIT' : 'API_FILTER_INVALID');
      }
    }
  }
  if (job.logpull_options) {
    const problem = logpullOptionsProblem(job.logpull_options);
    if (problem) refuseValue(ctx, ['logpull_options'], job.logpull_options, problem);
  }
  if (job.ownership_challenge !== undefined && !CHALLENGE_TOKEN.test(job.ownership_challenge)) {
    refuse(ctx, ['ownership_challenge'], 'incorrect ownership challenge', 'API_OWNERSHIP_CHALLENGE_INVALID');
  }
  for (const [key, [min, max]] of Object.entries(UPLOAD_LIMITS)) {
    const value = job[key as keyof typeof UPLOAD_LIMITS];
    if (value !== undefined && value !== null && value !== 0 && (value < min || value > max)) {
      refuseValue(ctx, [key], value, `it must be 0 (no limit) or from ${min} to ${max}`);
    }
  }
}

export const createJobBody = z.strictObject(jobFields).superRefine(checkJob);
export type CreateJobBody = z.infer<typeof createJobBody>;

/** PUT: every field optional; the read-only fields of a job read back are accepted and ignored. */
export const updateJobBody = z
  .strictObject({
    ...jobFields,
    destination_conf: jobFields.destination_conf.optional(),
    id: z.number().optional(),
    last_complete: z.string().nullable().optional(),
    last_error: z.string().nullable().optional(),
    error_message: z.string().nullable().optional(),
  })
  .superRefine(checkJob);
export type UpdateJobBody = z.infer<typeof updateJobBody>;

export const ownershipBody = z
  .strictObject({
    destination_conf: jobFields.destination_conf,
  })
  .superRefine((body, ctx) => checkJob(body, ctx));

export const validateOwnershipBody = z
  .strictObject({
    destination_conf: jobFields.destination_conf,
    ownership_challenge: z.string().max(4096),
  })
  .superRefine((body, ctx) => checkJob({ destination_conf: body.destination_conf }, ctx));

// ---- output options: defaults, the deprecated logpull_options form, and the response shape ----

const LOGPULL_KEYS = new Set(['fields', 'timestamps', 'sample', 'CVE-2021-44228']);

export function logpullOptionsProblem(options: string): string | null {
  const query = new URLSearchParams(options);
  for (const key of query.keys()) if (!LOGPULL_KEYS.has(key)) return `${key} is not a logpull option: use fields, timestamps, sample, CVE-2021-44228`;
  const fields = query.get('fields');
  const bad = fields?.split(',').find((field) => !isHttpRequestsField(field));
  if (bad !== undefined) return `${bad} is not a field of the ${LOG_DATASET} dataset`;
  const timestamps = query.get('timestamps');
  if (timestamps !== null && !(TIMESTAMP_FORMATS as readonly string[]).includes(timestamps)) return `timestamps must be one of ${TIMESTAMP_FORMATS.join(', ')}`;
  const sample = query.get('sample');
  if (sample !== null && !(Number(sample) > 0 && Number(sample) <= 1)) return 'sample must be greater than 0 and at most 1';
  const cve = query.get('CVE-2021-44228');
  if (cve !== null && cve !== 'true' && cve !== 'false') return 'CVE-2021-44228 must be true or false';
  return null;
}

/** Output options with every default filled in (ndjson and csv defaults differ, as on the real service). */
export function toOutputOptions(input: OutputOptionsInput | null | undefined, logpullOptions: string | null): LogOutputOptions {
  const given: OutputOptionsInput = input ?? (logpullOptions ? fromLogpull(logpullOptions) : {});
  const outputType = given.output_type ?? 'ndjson';
  const ndjson = outputType === 'ndjson';
  const cve = given['CVE-2021-44228'];
  return {
    fieldNames: given.field_names ?? [...HTTP_REQUESTS_DEFAULT_FIELDS],
    outputType,
    batchPrefix: given.batch_prefix ?? '',
    batchSuffix: given.batch_suffix ?? '',
    recordPrefix: given.record_prefix ?? (ndjson ? '{' : ''),
    recordSuffix: given.record_suffix ?? (ndjson ? '}\n' : '\n'),
    recordDelimiter: given.record_delimiter ?? '',
    fieldDelimiter: given.field_delimiter ?? ',',
    recordTemplate: given.record_template ?? null,
    timestampFormat: given.timestamp_format ?? 'unixnano',
    sampleRate: given.sample_rate ?? 1,
    cve202144228: cve === true || cve === 'true',
  };
}

function fromLogpull(options: string): OutputOptionsInput {
  const query = new URLSearchParams(options);
  const fields = query.get('fields');
  const sample = query.get('sample');
  return {
    ...(fields ? { field_names: fields.split(',') } : {}),
    ...(query.has('timestamps') ? { timestamp_format: query.get('timestamps') as TimestampFormat } : {}),
    ...(sample ? { sample_rate: Number(sample) } : {}),
    ...(query.has('CVE-2021-44228') ? { 'CVE-2021-44228': query.get('CVE-2021-44228') === 'true' } : {}),
  };
}

const outputOptionsResult = z.object({
  field_names: z.array(z.string()),
  output_type: z.enum(['ndjson', 'csv']),
  batch_prefix: z.string(),
  batch_suffix: z.string(),
  record_prefix: z.string(),
  record_suffix: z.string(),
  record_delimiter: z.string(),
  field_delimiter: z.string(),
  record_template: z.string().nullable(),
  timestamp_format: z.enum(TIMESTAMP_FORMATS),
  sample_rate: z.number(),
  'CVE-2021-44228': z.boolean(),
});

export const jobResult = z.object({
  id: z.number().int(),
  dataset: z.string(),
  destination_conf: z.string(),
  enabled: z.boolean(),
  error_message: z.string().nullable(),
  frequency: z.enum(['high', 'low']),
  kind: z.string(),
  last_complete: z.string().nullable(),
  last_error: z.string().nullable(),
  logpull_options: z.string().nullable(),
  max_upload_bytes: z.number().nullable(),
  max_upload_interval_seconds: z.number().nullable(),
  max_upload_records: z.number().nullable(),
  name: z.string().nullable(),
  output_options: outputOptionsResult,
  filter: z.string().nullable().describe('The filter text as sent'),
});

export function toJobJson(job: LogJobRecord): z.infer<typeof jobResult> {
  const o = job.outputOptions;
  return {
    id: job.id,
    dataset: job.dataset,
    destination_conf: job.destinationConf,
    enabled: job.enabled,
    error_message: job.errorMessage,
    frequency: job.frequency,
    kind: job.kind,
    last_complete: isoOrNull(job.lastComplete),
    last_error: isoOrNull(job.lastError),
    logpull_options: job.logpullOptions,
    max_upload_bytes: job.maxUploadBytes,
    max_upload_interval_seconds: job.maxUploadIntervalSeconds,
    max_upload_records: job.maxUploadRecords,
    name: job.name,
    output_options: {
      field_names: o.fieldNames,
      output_type: o.outputType,
      batch_prefix: o.batchPrefix,
      batch_suffix: o.batchSuffix,
      record_prefix: o.recordPrefix,
      record_suffix: o.recordSuffix,
      record_delimiter: o.recordDelimiter,
      field_delimiter: o.fieldDelimiter,
      record_template: o.recordTemplate,
      timestamp_format: o.timestampFormat,
      sample_rate: o.sampleRate,
      'CVE-2021-44228': o.cve202144228,
    },
    filter: job.filter,
  };
}

function isoOrNull(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
