/**
 * What each service needs to tell a client that it came to the wrong port: whether a body is a
 * JSON-RPC request (a wallet or library talking to a node, meant for the gateway), and the
 * address of the right listener as this client can use it. Every service listens on a port of its
 * own, so a request sent to another one is a common slip: its answer names the port that serves it.
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { MAX_JSON_DEPTH, scanJsonShape } from '../json-shape.ts';

/**
 * Only bodies this small are looked at (a JSON-RPC call is a few hundred bytes; a batch of a few
 * hundred calls fits); a larger one, or one of unknown length, is never read for this.
 */
export const SNIFF_MAX_BYTES = 64 * 1024;

/** Whether a request could carry a JSON-RPC body worth reading: a POST of JSON, of a declared small length. */
export function mayBeJsonRpc(method: string | undefined, headers: IncomingHttpHeaders | Headers): boolean {
  const get = (name: string): string | undefined => (headers instanceof Headers ? (headers.get(name) ?? undefined) : (headers[name] as string | undefined));
  if (method !== 'POST' || !/^application\/json\b/i.test(get('content-type') ?? '')) return false;
  const length = Number(get('content-length'));
  return Number.isInteger(length) && length > 0 && length <= SNIFF_MAX_BYTES;
}

/** A JSON-RPC 2.0 request or a batch of them (`{"jsonrpc": "2.0", "method": ...}`, or an array that starts with one). */
export function isJsonRpcText(text: string): boolean {
  if (scanJsonShape(text, { maxDepth: MAX_JSON_DEPTH }).kind !== 'json') return false;
  const parsed = JSON.parse(text) as unknown;
  const first = Array.isArray(parsed) ? parsed[0] : parsed;
  return (
    typeof first === 'object' &&
    first !== null &&
    (first as { jsonrpc?: unknown }).jsonrpc === '2.0' &&
    typeof (first as { method?: unknown }).method === 'string'
  );
}

/**
 * Reads a body `mayBeJsonRpc` allowed (its declared length, at most SNIFF_MAX_BYTES) and says
 * whether it is JSON-RPC. The body is consumed: the caller answers the request itself. A body cut
 * short (the client went away mid-body) is no JSON-RPC: false, never a failure of the request.
 */
export async function readJsonRpcBody(req: IncomingMessage): Promise<boolean> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > SNIFF_MAX_BYTES) return false;
      chunks.push(chunk);
    }
  } catch {
    return false;
  }
  return isJsonRpcText(Buffer.concat(chunks).toString('utf8'));
}

/**
 * The origin (`http://host:port`) of another of edgeport's listeners as the client can reach it:
 * the listener's own address, or, when it listens on every address (0.0.0.0, ::), the host name
 * the client used for this request with the listener's port.
 */
export function listenerOrigin(listenerUrl: string, requestHost: string | undefined): string {
  const parsed = new URL(listenerUrl);
  if ((parsed.hostname === '0.0.0.0' || parsed.hostname === '[::]') && requestHost !== undefined) {
    try {
      parsed.hostname = new URL(`http://${requestHost}`).hostname;
    } catch {
      /* a Host that is no host name: the listener's own address stays */
    }
  }
  return parsed.origin;
}
