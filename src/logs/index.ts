/**
 * Logs: the `http_requests` dataset and log job filters. The log pipeline (records, custom fields,
 * sampling, formats, spool, delivery) lands here too; other services import only this file.
 */
export {
  HTTP_REQUESTS_FIELDS,
  HTTP_REQUESTS_DEFAULT_FIELDS,
  CUSTOM_FIELD_CARRIERS,
  isHttpRequestsField,
  type HttpRequestsField,
  type HttpRequestsFieldName,
  type HttpRequestsFieldType,
} from './http-requests-fields.ts';
export { isFilledField, type HttpRequestRecord, type RecordFieldName } from './http-request-record.ts';
export {
  parseFilter,
  FILTER_OPERATORS,
  FILTER_LIMITS,
  type FilterOperator,
  type FilterScalar,
  type FilterCriterion,
  type FilterGroup,
  type FilterExpression,
  type ParsedFilter,
  type FilterProblem,
  type FilterParseResult,
} from './filter/parse-filter.ts';
export {
  parseDestination,
  needsOwnershipChallenge,
  challengeLocation,
  coveringLocations,
  fixedPath,
  MAX_DESTINATION_CONF_LENGTH,
  type Destination,
  type DestinationResult,
} from './destinations/destination-conf.ts';
export { FileRoots, isWithin, type FileCheck, type FileRootsOptions } from './destinations/file-roots.ts';
export { guardedPoster, postFailure, type GuardedPoster } from './destinations/guarded-post.ts';
export { s3Destination } from './destinations/s3-destination.ts';
export { registerLogMetrics } from './log-metrics.ts';
