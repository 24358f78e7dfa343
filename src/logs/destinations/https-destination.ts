/**
 * `https://host/path?header_<Name>=<value>&...` (and `http://` for local receivers): each batch is
 * POSTed gzipped; every `header_*` parameter becomes a request header and is removed from the URL.
 * Any answer other than 2xx is a failure (retried by the shipper). A job of an account other than
 * the operator's connects only where its guard allows (guarded-post.ts).
 */
import type { OutboundGuard } from '../../core/net/outbound-guard.ts';
import { DestinationError, type DeliveredBatch, type LogDestination } from './destination.ts';
import { guardedPoster, postFailure } from './guarded-post.ts';

export const LOG_SHIPPER_USER_AGENT = 'edgeport-logshipping/1.0';
const TIMEOUT_MS = 30_000;

/** `target` is the URL without its header_* parameters, which `headers` holds. */
export function httpsDestination(target: string, headers: Readonly<Record<string, string>>, guard: OutboundGuard | null = null): LogDestination {
  const url = new URL(target);
  const poster = guardedPoster(url, guard);
  return {
    async write(batch: DeliveredBatch): Promise<void> {
      let response;
      try {
        response = await poster.post({
          headers: { ...headers, 'content-type': batch.contentType, 'content-encoding': 'gzip', 'user-agent': LOG_SHIPPER_USER_AGENT },
          body: batch.gzipped,
          timeoutMs: TIMEOUT_MS,
        });
      } catch (error) {
        throw new DestinationError(`POST ${url.origin}${url.pathname} failed: ${postFailure(error)}`);
      }
      await response.arrayBuffer().catch(() => undefined);
      if (!response.ok) throw new DestinationError(`POST ${url.origin}${url.pathname} answered HTTP ${response.status}`);
    },
    close: () => poster.close(),
  };
}
