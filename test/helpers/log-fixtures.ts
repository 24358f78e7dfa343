/**
 * What the edge and log pipeline tests build their jobs from: NDJSON output options with the
 * fields a test asks for, and a job record's fields.
 */
import type { LogOutputOptions, NewLogJob } from '../../src/db/control-store.ts';

/** NDJSON lines of `fieldNames`, RFC 3339 timestamps, every record kept. */
export function ndjsonOutput(fieldNames: string[]): LogOutputOptions {
  return {
    fieldNames,
    outputType: 'ndjson',
    batchPrefix: '',
    batchSuffix: '',
    recordPrefix: '{',
    recordSuffix: '}\n',
    recordDelimiter: '',
    fieldDelimiter: ',',
    recordTemplate: null,
    timestampFormat: 'rfc3339',
    sampleRate: 1,
    cve202144228: false,
  };
}

/** An enabled http_requests job of `zoneId` to `destinationConf`, with no filter or limits of its own, made at `now`. */
export function jobFields(zoneId: string, destinationConf: string, outputOptions: LogOutputOptions, now: number): NewLogJob {
  return {
    zoneId,
    name: 'job',
    enabled: true,
    dataset: 'http_requests',
    kind: '',
    frequency: 'high',
    destinationConf,
    filter: null,
    outputOptions,
    logpullOptions: null,
    maxUploadBytes: null,
    maxUploadRecords: null,
    maxUploadIntervalSeconds: null,
    lastComplete: null,
    lastError: null,
    errorMessage: null,
    created: now,
    modified: now,
  };
}
