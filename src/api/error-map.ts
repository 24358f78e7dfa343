/**
 * The one mapper from thrown errors to envelope answers: ApiError carries its status and entries;
 * anything else is an internal error, logged with its cause, answered 500 / 10001.
 */
import type { Logger } from '../core/log.ts';
import { failureResponse } from './envelope.ts';
import { API_ERRORS, ApiError } from './errors.ts';

export function toErrorResponse(error: unknown, logger: Logger): Response {
  if (error instanceof ApiError) {
    if (error.kind === 'system') logger.error({ err: error, code: error.code }, 'Management API request failed.');
    else logger.debug({ code: error.code, message: error.message }, 'Management API request refused.');
    return failureResponse(error.status, error.items);
  }
  logger.error({ err: error }, 'Management API request failed with an unexpected error.');
  const entry = API_ERRORS.API_INTERNAL;
  return failureResponse(entry.status, [{ code: entry.code, message: entry.message }]);
}
