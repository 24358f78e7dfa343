/**
 * Watches a response as the edge's handlers write it: counts body bytes, keeps the headers given to
 * writeHead (in raw [name, value, ...] form), and calls `beforeEnd` when the handler ends the
 * response; the final write happens only when `beforeEnd` calls `proceed`, so the log record is in
 * the spool before the client has the whole response.
 */
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';

export interface ResponseTap {
  readonly bodyBytes: number;
  /** The response headers as sent, raw form. */
  rawHeaders(): string[];
}

export function tapResponse(res: ServerResponse, beforeEnd: (tap: ResponseTap, proceed: () => void) => void): ResponseTap {
  let bodyBytes = 0;
  let headerArgument: OutgoingHttpHeaders | readonly string[] | undefined;
  const tap: ResponseTap = {
    get bodyBytes() {
      return bodyBytes;
    },
    rawHeaders() {
      const out: string[] = [];
      const add = (name: string, value: unknown): void => {
        if (Array.isArray(value)) for (const item of value) out.push(name, String(item));
        else if (value !== undefined) out.push(name, String(value));
      };
      for (const [name, value] of Object.entries(res.getHeaders())) add(name, value);
      if (Array.isArray(headerArgument)) {
        for (let i = 0; i + 1 < headerArgument.length; i += 2) out.push(String(headerArgument[i]), String(headerArgument[i + 1]));
      } else if (headerArgument) {
        for (const [name, value] of Object.entries(headerArgument)) add(name, value);
      }
      return out;
    },
  };
  const writeHead = res.writeHead;
  res.writeHead = function tappedWriteHead(this: ServerResponse, status: number, ...rest: unknown[]) {
    const headers = rest.find((arg) => typeof arg === 'object' && arg !== null);
    if (headers) headerArgument = headers as OutgoingHttpHeaders | string[];
    return (writeHead as (...args: unknown[]) => ServerResponse).call(this, status, ...rest);
  } as ServerResponse['writeHead'];
  const write = res.write as (...args: unknown[]) => boolean;
  // With a Content-Length, the client has the whole response once the last body byte is written,
  // before end(): that write is held back until the record is in the spool.
  let held: unknown[] | null = null;
  res.write = function tappedWrite(this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
    bodyBytes += byteLength(chunk, rest[0]);
    if (!ended && held === null && bodyBytes > 0 && bodyBytes >= declaredLength(res, headerArgument)) {
      held = [chunk, ...rest];
      return true;
    }
    return write.call(this, chunk, ...rest);
  } as ServerResponse['write'];
  const end = res.end as (...args: unknown[]) => ServerResponse;
  let ended = false;
  res.end = function tappedEnd(this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
    if (ended) return end.call(this, chunk, ...rest);
    ended = true;
    if (typeof chunk !== 'function') bodyBytes += byteLength(chunk, rest[0]);
    beforeEnd(tap, () => {
      if (held !== null) write.call(this, ...held);
      end.call(this, chunk, ...rest);
    });
    return this;
  } as ServerResponse['end'];
  return tap;
}

/** The response's declared Content-Length, or Infinity when it has none (chunked). */
function declaredLength(res: ServerResponse, headerArgument: OutgoingHttpHeaders | readonly string[] | undefined): number {
  let value: unknown = res.getHeader('content-length');
  if (value === undefined && Array.isArray(headerArgument)) {
    for (let i = 0; i + 1 < headerArgument.length; i += 2) {
      if (String(headerArgument[i]).toLowerCase() === 'content-length') value = headerArgument[i + 1];
    }
  } else if (value === undefined && headerArgument) {
    for (const [name, v] of Object.entries(headerArgument)) if (name.toLowerCase() === 'content-length') value = v;
  }
  const length = Number(value);
  return value === undefined || !Number.isFinite(length) ? Infinity : length;
}

function byteLength(chunk: unknown, encoding: unknown): number {
  if (chunk === undefined || chunk === null || typeof chunk === 'function') return 0;
  if (typeof chunk === 'string') return Buffer.byteLength(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
  return (chunk as Uint8Array).byteLength ?? 0;
}
