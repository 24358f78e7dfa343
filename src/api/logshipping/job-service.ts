/**
 * How log job writes are decided: the job a create stores, how a PUT changes a job (dataset and
 * kind are fixed at creation; a new destination needs its own proof), and the checks of a
 * destination that need I/O (file roots, ownership token, test upload), made before anything is
 * written.
 */
import { literalRefusal } from '../../core/net/outbound-guard.ts';
import type { LogJobRecord, NewLogJob, ZoneRecord } from '../../db/control-store.ts';
import { ApiError } from '../errors.ts';
import type { ApiDeps } from '../route.ts';
import { needsOwnershipChallenge, parseDestination, type Destination } from '../../logs/index.ts';
import { LOG_DATASET, toOutputOptions, type CreateJobBody, type UpdateJobBody } from './job-schema.ts';
import { challengeTarget } from './file-destinations.ts';
import { requireOwnership } from './ownership.ts';

export function newJob(body: CreateJobBody, zoneId: string, now: number, checked: CheckedDestination): NewLogJob {
  const logpullOptions = body.logpull_options ?? null;
  return {
    zoneId,
    name: body.name ?? null,
    enabled: body.enabled ?? false,
    dataset: LOG_DATASET,
    kind: '',
    frequency: body.frequency ?? 'high',
    destinationConf: body.destination_conf,
    filter: body.filter ?? null,
    outputOptions: toOutputOptions(body.output_options, logpullOptions),
    logpullOptions,
    maxUploadBytes: body.max_upload_bytes ?? null,
    maxUploadRecords: body.max_upload_records ?? null,
    maxUploadIntervalSeconds: body.max_upload_interval_seconds ?? null,
    lastComplete: null,
    lastError: null,
    errorMessage: null,
    created: now,
    modified: now,
    heldLocation: checked.heldLocation,
  };
}

/**
 * A PUT applied to the current job. `checkedDestination` is the destination whose ownership or
 * reachability the request proved; a different new destination (a concurrent change) is refused.
 */
export function applyJobUpdate(current: LogJobRecord, body: UpdateJobBody, now: number, checked: (CheckedDestination & { conf: string }) | null): LogJobRecord {
  if (body.dataset !== undefined && body.dataset !== null && body.dataset !== current.dataset) {
    throw new ApiError('API_JOB_INVALID', {
      message: `'${body.dataset}' is not a valid value for dataset because the dataset of a job cannot be changed`,
      pointer: '/dataset',
    });
  }
  if (body.kind !== undefined && body.kind !== null && body.kind !== current.kind) {
    throw new ApiError('API_JOB_INVALID', {
      message: `'${body.kind}' is not a valid value for kind because the kind of a job cannot be changed`,
      pointer: '/kind',
    });
  }
  const destinationConf = body.destination_conf ?? current.destinationConf;
  const moved = destinationConf !== current.destinationConf;
  if (moved && destinationConf !== checked?.conf) {
    throw new ApiError('API_OWNERSHIP_CHALLENGE_INVALID', { pointer: '/ownership_challenge' });
  }
  const logpullOptions = body.logpull_options === undefined ? current.logpullOptions : body.logpull_options;
  const outputOptions =
    body.output_options !== undefined || body.logpull_options !== undefined
      ? toOutputOptions(body.output_options ?? null, logpullOptions)
      : current.outputOptions;
  return {
    ...current,
    name: body.name === undefined ? current.name : body.name,
    enabled: body.enabled ?? current.enabled,
    frequency: body.frequency ?? current.frequency,
    destinationConf,
    filter: body.filter === undefined ? current.filter : body.filter,
    outputOptions,
    logpullOptions,
    maxUploadBytes: body.max_upload_bytes === undefined ? current.maxUploadBytes : body.max_upload_bytes,
    maxUploadRecords: body.max_upload_records === undefined ? current.maxUploadRecords : body.max_upload_records,
    maxUploadIntervalSeconds: body.max_upload_interval_seconds === undefined ? current.maxUploadIntervalSeconds : body.max_upload_interval_seconds,
    modified: now,
    heldLocation: moved ? checked!.heldLocation : (current.heldLocation ?? null),
  };
}

/** A destination the checks let through, and the location a file:// job holds (null for other schemes). */
export interface CheckedDestination {
  destination: Destination;
  heldLocation: string | null;
}

/**
 * File roots and ownership for file://, ownership for store:// (`ownership: false`: the
 * `validate/destination` route, which checks all but the challenge), a test upload for http(s):// and
 * s3:// (as the real service validates a destination before it makes the job: the job is refused,
 * saying what failed, when the upload fails or takes longer than the probe timeout). s3:// and
 * http(s):// destinations of an account other than the operator's
 * must lead where its zones' origins may (the edge's origin policy): an IP literal or `localhost`
 * that leads elsewhere is refused here, names at each connection.
 */
export async function checkDestination(
  deps: ApiDeps,
  zone: Pick<ZoneRecord, 'id' | 'accountId'>,
  conf: string,
  token: string | undefined,
  options: { ownership: boolean } = { ownership: true },
): Promise<CheckedDestination> {
  const parsed = parseDestination(conf);
  const invalid = (reason: string) =>
    new ApiError('API_JOB_INVALID', { message: `'${conf}' is not a valid value for destination_conf because ${reason}`, pointer: '/destination_conf' });
  if (!parsed.ok) throw invalid(parsed.reason);
  const destination = parsed.destination;
  let heldLocation: string | null = null;
  if (needsOwnershipChallenge(destination)) {
    const target = await challengeTarget(deps, conf, destination);
    if (options.ownership) await requireOwnership(deps, zone.id, destination, target, token);
    if (target.realDirectory !== undefined) heldLocation = target.location;
  }
  const guard = await deps.origins.guardFor(zone.accountId);
  const endpoint =
    destination.scheme === 'http' || destination.scheme === 'https'
      ? destination.url
      : destination.scheme === 's3' && destination.endpoint
        ? /^https?:\/\//.test(destination.endpoint)
          ? destination.endpoint
          : `https://${destination.endpoint}`
        : null;
  const refused = guard && endpoint !== null ? literalRefusal(guard, new URL(endpoint)) : null;
  if (refused)
    throw invalid(
      `it leads where this account may not connect: ${refused.replace(/as an origin/, 'as a destination')}; point it at a public address or host name`,
    );
  if (destination.scheme === 'http' || destination.scheme === 'https' || destination.scheme === 's3') {
    try {
      await deps.destinations.probe(destination, guard);
    } catch (error) {
      deps.logger.debug({ err: error }, 'Log destination refused the test upload.');
      throw new ApiError('API_DESTINATION_UNREACHABLE', {
        message: `error validating destination: error writing object: error uploading: ${(error as Error).message}`,
        pointer: '/destination_conf',
      });
    }
  }
  return { destination, heldLocation };
}
