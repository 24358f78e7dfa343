/**
 * Request framing the edge refuses before anything reaches an origin. Node parses a request's body
 * as it streams, so a body it cannot parse is found only after the request was forwarded, and the
 * origin waits for the rest until it gives up (a 502 many seconds later). Framing that cannot be
 * forwarded faithfully is refused at once instead, with 400:
 * - a transfer coding other than `chunked` alone: the edge forwards bodies re-chunked and never
 *   decodes `gzip, chunked`, so the origin would get gzip bytes it was never told about (RFC 9112
 *   §6.1 lets a server refuse codings it does not understand);
 * - an Upgrade request with a body: the edge does not switch protocols (Upgrade is hop-by-hop and
 *   dropped), and a handshake has no body, so a body there is a smuggling attempt or a broken client.
 *   Except an upgrade to h2c with a Content-Length body (curl --http2 offers it with a POST's body
 *   too): that request is an ordinary one, served over HTTP/1.1 with the offer ignored
 *   (core/http/h2c.ts). A chunked one is still refused: the listener could not see a bad chunk.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { asksOnlyForH2c } from '../core/http/h2c.ts';

/** What is wrong with a request's framing, said for its client, or null. */
export function requestFramingProblem(headers: IncomingHttpHeaders): string | null {
  const codings = headers['transfer-encoding'];
  if (codings !== undefined && codings.trim().toLowerCase() !== 'chunked') {
    return `the request's Transfer-Encoding "${codings.slice(0, 64)}" is not supported: send the body with Content-Length or Transfer-Encoding: chunked alone.`;
  }
  const hasBody = codings !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0');
  if (headers.upgrade !== undefined && hasBody && !(asksOnlyForH2c(headers) && codings === undefined)) {
    return 'an Upgrade request may not carry a body, and the edge does not switch protocols: send the request without Upgrade, or without a body.';
  }
  return null;
}
