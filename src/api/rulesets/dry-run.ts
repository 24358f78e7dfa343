/**
 * `dry_run` on the rulesets routes that write: only `true` and `false` are
 * accepted; a dry run makes every check of the real write and writes nothing, answering what it
 * would have (`result: null` for a 200, an empty 204 for a delete) or the same error.
 */
import { ApiError } from '../errors.ts';
import type { RouteContext } from '../route.ts';

/** Whether the request is a dry run; 400 for any value but true and false. */
export function isDryRun(ctx: RouteContext<unknown>): boolean {
  const value = ctx.query.get('dry_run');
  if (value === null || value === 'false') return false;
  if (value === 'true') return true;
  throw new ApiError('API_INVALID_QUERY', { message: `'${value.slice(0, 64)}' is not a valid value for dry_run because it must be true or false` });
}
