/**
 * The one mapper from thrown errors to envelope answers: ApiError carries its status and entries;
 * a StoreError (the bucket and object routes call the store engine) is mapped through
 * STORE_TO_API; a QuotaRefusal of the script registry is API_WORKER_QUOTA; anything else is an
 * internal error, logged with its cause, answered 500 / 10001.
 */
import { backendFaultOf, type BackendFault } from '../core/errors/backend-fault.ts';
import { noteFault } from '../core/errors/fault-log.ts';
import { QuotaRefusal } from '../db/account-usage.ts';
import type { Logger } from '../core/log.ts';
import { StoreError, type StoreErrorCode } from '../store/engine/errors.ts';
import { quotaError } from '../store/engine/quota.ts';
import { failureResponse } from './envelope.ts';
import { API_ERRORS, ApiError, type ApiErrorCode } from './errors.ts';

/**
 * Each store error as the API reports it. Statuses follow the API's rule (no 409 for user errors:
 * the official SDK retries those); codes are the store's v4 codes where the API has an entry.
 */
const STORE_TO_API: Record<StoreErrorCode, ApiErrorCode> = {
  STORE_INTERNAL: 'API_INTERNAL',
  STORE_UNAVAILABLE: 'API_SERVICE_UNAVAILABLE',
  STORE_STORAGE_FULL: 'API_STORAGE_FULL',
  STORE_NO_SUCH_KEY: 'API_STORE_KEY_NOT_FOUND',
  STORE_NO_SUCH_BUCKET: 'API_BUCKET_NOT_FOUND',
  STORE_BUCKET_ALREADY_EXISTS: 'API_BUCKET_EXISTS',
  STORE_BUCKET_NOT_EMPTY: 'API_BUCKET_NOT_EMPTY',
  STORE_INVALID_BUCKET_NAME: 'API_STORE_INVALID',
  STORE_ENTITY_TOO_SMALL: 'API_STORE_INVALID',
  STORE_ENTITY_TOO_LARGE: 'API_STORE_INVALID',
  STORE_METADATA_TOO_LARGE: 'API_STORE_INVALID',
  STORE_INVALID_OBJECT_NAME: 'API_STORE_INVALID',
  STORE_INVALID_MAX_KEYS: 'API_STORE_INVALID',
  STORE_INVALID_CURSOR: 'API_STORE_INVALID',
  STORE_NO_SUCH_UPLOAD: 'API_UPLOAD_NOT_FOUND',
  STORE_INVALID_PART: 'API_STORE_INVALID',
  STORE_INVALID_PART_ORDER: 'API_STORE_INVALID',
  STORE_TOO_MANY_KEYS: 'API_STORE_INVALID',
  STORE_PRECONDITION_FAILED: 'API_STORE_INVALID',
  STORE_BAD_DIGEST: 'API_STORE_INVALID',
  STORE_INVALID_RANGE: 'API_STORE_INVALID',
  STORE_INVALID_PART_NUMBER: 'API_STORE_INVALID',
  STORE_BAD_UPLOAD: 'API_STORE_INVALID',
  STORE_INVALID_STORAGE_CLASS: 'API_STORE_INVALID',
  STORE_INCOMPLETE_BODY: 'API_STORE_INVALID',
  STORE_INVALID_CORS: 'API_STORE_INVALID',
  STORE_INVALID_LIFECYCLE: 'API_STORE_INVALID',
  STORE_QUOTA_EXCEEDED: 'API_STORE_QUOTA_EXCEEDED',
  // The management API's object routes take no SSE-C key: an encrypted object cannot be read there.
  STORE_SSEC_KEY_REQUIRED: 'API_STORE_INVALID',
  STORE_SSEC_KEY_MISMATCH: 'API_STORE_INVALID',
  STORE_SSEC_NOT_ENCRYPTED: 'API_STORE_INVALID',
};

export function toErrorResponse(error: unknown, logger: Logger): Response {
  const fault = error instanceof ApiError ? undefined : backendFaultOf(error);
  const mapped = fault
    ? fromFault(fault)
    : error instanceof StoreError
      ? fromStoreError(error)
      : error instanceof QuotaRefusal
        ? fromQuotaRefusal(error)
        : error;
  if (mapped instanceof ApiError) {
    if (fault) noteFault(logger, 'api', fault);
    else if (mapped.kind === 'system') logger.error({ err: mapped, code: mapped.code }, 'Management API request failed.');
    else logger.debug({ code: mapped.code, message: mapped.message }, 'Management API request refused.');
    const response = failureResponse(mapped.status, mapped.items);
    for (const [name, value] of Object.entries(mapped.headers)) response.headers.set(name, value);
    return response;
  }
  logger.error({ err: error }, 'Management API request failed with an unexpected error.');
  const entry = API_ERRORS.API_INTERNAL;
  return failureResponse(entry.status, [{ code: entry.code, message: entry.message }]);
}

/** Script bytes past the account's quota (the registry's refusal); object quotas reach here as StoreErrors, but are mapped alike if not. */
export function fromQuotaRefusal(refusal: QuotaRefusal): ApiError {
  if (refusal.quota !== 'maxScriptBytes') return fromStoreError(quotaError(refusal) as StoreError);
  const { limit, used, adding } = refusal;
  return new ApiError('API_WORKER_QUOTA', {
    cause: refusal,
    message:
      `Your account's scripts exceeded their storage quota: they keep ${used} bytes of modules of the ${limit} allowed, and this upload adds ${adding}; ` +
      'delete a script, or ask the operator to raise the quota ([quotas] max_script_bytes_per_account, or edgeport accounts quota).',
  });
}

/** A backend that is down, slow or full: 503 or 507 with Retry-After, naming the backend (never a host or a path). */
export function fromFault(fault: BackendFault): ApiError {
  const retry = `retry after ${fault.retryAfterS} s`;
  const headers = { 'retry-after': String(fault.retryAfterS) };
  const what = fault.message.charAt(0).toLowerCase() + fault.message.slice(1);
  return fault.code === 'BACKEND_FULL'
    ? new ApiError('API_STORAGE_FULL', {
        message: `Insufficient storage: ${what}; writes are refused until space is freed (deletes still work); ${retry}`,
        headers,
        cause: fault,
      })
    : new ApiError('API_SERVICE_UNAVAILABLE', { message: `Service temporarily unavailable: ${what}; ${retry}`, headers, cause: fault });
}

function fromStoreError(error: StoreError): ApiError {
  const code = STORE_TO_API[error.code];
  if (code === 'API_INTERNAL') return new ApiError(code, { cause: error });
  if (code === 'API_SERVICE_UNAVAILABLE' || code === 'API_STORAGE_FULL') {
    const seconds = String(error.details?.retryAfterS ?? 1);
    return new ApiError(code, { message: error.message, headers: { 'retry-after': seconds }, cause: error });
  }
  // Invalid input and quota refusals keep the store's own words, which name the problem (bucket name rules, part sizes, the quota).
  return new ApiError(code, code === 'API_STORE_INVALID' || code === 'API_STORE_QUOTA_EXCEEDED' ? { message: error.message } : undefined);
}
