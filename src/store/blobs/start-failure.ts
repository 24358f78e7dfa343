/**
 * What an operator reads when a remote blob store fails while edgeport starts (opening it, the
 * start-up sweep): which store, which call, the HTTP status (or that no answer came), and what to
 * check. Built from the `details` the S3 blob store keeps on each failure.
 */
import { StoreError } from '../engine/errors.ts';

/**
 * A blob-store failure while edgeport starts, for the operator: which store, which call, the HTTP
 * status (or that none came), and what to check.
 */
export function startFailure(where: string, error: unknown, doing: string): StoreError {
  const details = (error as { details?: Record<string, unknown> }).details ?? {};
  const operation = typeof details.operation === 'string' ? details.operation : 'a call';
  const status = typeof details.status === 'number' ? details.status : undefined;
  const what = typeof details.error === 'string' ? details.error : (error as Error).message;
  const answer = status === undefined ? `got no HTTP answer (${what})` : `was answered HTTP ${status} (${what})`;
  return new StoreError('STORE_INTERNAL', {
    cause: error,
    details,
    message: `The blob store ${where} could not be ${doing}: ${operation} ${answer}. ${startHint(status, error)}`,
  });
}

function startHint(status: number | undefined, error: unknown): string {
  if (status === undefined) return 'Check the endpoint (scheme, host and port) and that the store is running and reachable from here.';
  if (status === 401 || status === 403)
    return 'Check access-key-id and secret-access-key (or AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY), and that the key may use the bucket.';
  if (status === 404) return 'Check that the bucket exists (edgeport does not create it) and the region.';
  if (status === 301 || status === 400) return 'Check the region and force-path-style (path-style requests are the default with an endpoint).';
  if (status === 501 || (error as { cause?: { name?: unknown } }).cause?.name === 'NotImplemented')
    return 'The store lacks this call, which edgeport needs: use another S3-compatible store.';
  if (status === 507) return 'The store is full: free space on it.';
  return "Check the store's own health and logs.";
}
