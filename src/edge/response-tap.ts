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
    get bodyBytes() { return bodyBytes; },
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
  const write = res.write;
  res.write = function tappedWrite(this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
    bodyBytes += byteLength(chunk, rest[0]);
    return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
  } as ServerResponse['write'];
  const end = res.end;
  let ended = false;
  res.end = function tappedEnd(this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
    if (ended) return (end as (...args: unknown[]) => ServerResponse).call(this, chunk, ...rest);
    ended = true;
    if (typeof chunk !== 'function') bodyBytes += byteLength(chunk, rest[0]);
    beforeEnd(tap, () => (end as (...args: unknown[]) => ServerResponse).call(this, chunk, ...rest));
    return this;
  } as ServerResponse['end'];
  return tap;
}

function byteLength(chunk: unknown, encoding: unknown): number {
  if (chunk === undefined || chunk === null || typeof chunk === 'function') return 0;
  if (typeof chunk === 'string') return Buffer.byteLength(chunk, typeof encoding === 'string' ? encoding as BufferEncoding : 'utf8');
  return (chunk as Uint8Array).byteLength ?? 0;
}
