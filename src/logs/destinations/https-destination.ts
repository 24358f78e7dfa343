/**
 * `https://host/path?header_<Name>=<value>&...` (and `http://` for local receivers): each batch is
 * POSTed gzipped; every `header_*` parameter becomes a request header and is removed from the URL.
 * Any answer other than 2xx is a failure (retried by the shipper).
 */
import { DestinationError, type DeliveredBatch, type LogDestination } from './destination.ts';

export const LOG_SHIPPER_USER_AGENT = 'edgeport-logshipping/1.0';
const TIMEOUT_MS = 30_000;

/** `target` is the URL without its header_* parameters, which `headers` holds. */
export function httpsDestination(target: string, headers: Readonly<Record<string, string>>): LogDestination {
  const url = new URL(target);
  return {
    async write(batch: DeliveredBatch): Promise<void> {
      let response: Response;
      try {
        response = await fetch(url, {
          method: 'POST',
          headers: { ...headers, 'content-type': batch.contentType, 'content-encoding': 'gzip', 'user-agent': LOG_SHIPPER_USER_AGENT },
          body: batch.gzipped as Uint8Array<ArrayBuffer>,
          signal: AbortSignal.timeout(TIMEOUT_MS),
        });
      } catch (error) {
        const cause = (error as { cause?: { message?: string } }).cause?.message;
        throw new DestinationError(`POST ${url.origin}${url.pathname} failed: ${cause ?? (error as Error).message}`);
      }
      await response.arrayBuffer().catch(() => undefined);
      if (!response.ok) throw new DestinationError(`POST ${url.origin}${url.pathname} answered HTTP ${response.status}`);
    },
  };
}
