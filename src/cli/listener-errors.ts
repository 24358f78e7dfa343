/**
 * What a listener answers, before its service sees anything, when it refuses a connection (too
 * many from one client, or in all) or sheds a request (the server is overloaded): a 503 with
 * `Retry-After`, in the error shape of the surface behind the listener, built once per listener
 * so a refusal costs one write. docs/errors.md lists these codes.
 */
import type { ErrorCatalog } from '../core/errors/edgeport-error.ts';

export type ListenerErrorCode = 'LISTENER_OVERLOADED' | 'LISTENER_CLIENT_CONNECTION_LIMIT' | 'LISTENER_CONNECTION_LIMIT';

/** Whose error shape a listener answers in. */
export type Surface = 'edge' | 'api' | 'gateway' | 's3';

/** Every listener refusal; `<n>` in a message is the configured limit. All are 503 with `Retry-After: 1`. */
export const LISTENER_ERRORS: ErrorCatalog<ListenerErrorCode> = {
  LISTENER_OVERLOADED: {
    kind: 'system',
    message: 'edgeport is overloaded: new requests would wait more than <n> ms, so this one was not started. Retry after the Retry-After delay.',
  },
  LISTENER_CLIENT_CONNECTION_LIMIT: {
    kind: 'user',
    message:
      'Too many open connections from your address: at most <n> are allowed, and fewer while edgeport is busy. Close or reuse idle connections, then retry.',
  },
  LISTENER_CONNECTION_LIMIT: { kind: 'system', message: 'edgeport has too many open connections: at most <n> are allowed. Retry after the Retry-After delay.' },
};

export const REFUSAL_STATUS = 503;
/** Seconds; overload and connection floods pass, or the client backs off further on its own. */
export const RETRY_AFTER_S = 1;

/** A prepared answer: a status line's headers and body, reused for every refusal of its kind. */
export interface Refusal {
  readonly code: ListenerErrorCode;
  readonly contentType: string;
  readonly body: Buffer;
  /** The whole HTTP/1.1 response with `Connection: close`, for refusing a connection before any request is read. */
  readonly raw: Buffer;
}

/** The message of `code` with its limit filled in. */
export function listenerMessage(code: ListenerErrorCode, limit: number): string {
  return LISTENER_ERRORS[code].message.replace('<n>', String(limit));
}

/**
 * Each surface's own error shape: plain text at the edge (and `edgeport dev`), the management
 * API's envelope (10100, the real API's "please wait" code), a JSON-RPC error object (-32005
 * limit exceeded, which viem retries) and S3's `SlowDown` (which AWS SDKs back off and retry).
 */
const SHAPES: Record<Surface, (message: string) => { contentType: string; body: string }> = {
  edge: (message) => ({ contentType: 'text/plain; charset=utf-8', body: `error 503: ${message}\n` }),
  api: (message) => ({
    contentType: 'application/json',
    body: JSON.stringify({ result: null, success: false, errors: [{ code: 10100, message }], messages: [] }),
  }),
  gateway: (message) => ({ contentType: 'application/json', body: JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32005, message } }) }),
  s3: (message) => ({
    contentType: 'application/xml',
    body: `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code><Message>${message.replace(/[&<>]/g, (c) => `&#${c.charCodeAt(0)};`)}</Message></Error>`,
  }),
};

/** Builds the answer for `code` on a `surface` listener whose limit is `limit`. */
export function prepareRefusal(surface: Surface, code: ListenerErrorCode, limit: number): Refusal {
  const { contentType, body } = SHAPES[surface](listenerMessage(code, limit));
  const bytes = Buffer.from(body);
  const head =
    `HTTP/1.1 ${REFUSAL_STATUS} Service Unavailable\r\ncontent-type: ${contentType}\r\ncontent-length: ${bytes.length}\r\n` +
    `retry-after: ${RETRY_AFTER_S}\r\nconnection: close\r\n\r\n`;
  return { code, contentType, body: bytes, raw: Buffer.concat([Buffer.from(head, 'latin1'), bytes]) };
}
