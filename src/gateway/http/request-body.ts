/**
 * Reads a request body as UTF-8 text, up to a byte limit. A declared Content-Length over the limit
 * is refused before reading (by the caller, tooLargeDeclared); a body that grows past it (chunked)
 * is cut off as soon as it does. A client that goes away mid-body rejects with ClientGone: nobody
 * is left to answer.
 */
import type { IncomingMessage } from 'node:http';
import { gatewayError, type JsonRpcError } from '../errors.ts';

export class ClientGone extends Error {}

/**
 * The whole body, when the request has already arrived in full (a small request comes in one
 * packet with its head, and node:http has parsed all of it once the read that brought it is
 * handled, by the next setImmediate after the 'request' event): undefined when it has not, and
 * readBody must wait for it.
 */
export function receivedBody(req: IncomingMessage, maxBytes: number): string | JsonRpcError | undefined {
  if (!req.complete) return undefined;
  const chunk = req.read() as Buffer | null;
  if (chunk === null) return '';
  return chunk.length > maxBytes ? tooLarge(maxBytes) : chunk.toString('utf8');
}

export function readBody(req: IncomingMessage, maxBytes: number): Promise<string> {
  // Inline callbacks only: this runs per request, and named closures cost more to create.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      if (size > maxBytes) return;
      size += chunk.length;
      if (size > maxBytes) {
        req.removeAllListeners('end');
        reject(tooLarge(maxBytes));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks, size).toString('utf8')));
    req.on('error', (error) => reject(new ClientGone('The client closed the request before sending all of it.', { cause: error })));
    req.on('close', () => {
      if (!req.complete) reject(new ClientGone('The client closed the request before sending all of it.'));
    });
  });
}

/** The error for a declared Content-Length over the limit, before anything is read. */
export function tooLargeDeclared(req: IncomingMessage, maxBytes: number): JsonRpcError | undefined {
  const declared = req.headers['content-length'];
  return declared !== undefined && Number(declared) > maxBytes ? tooLarge(maxBytes) : undefined;
}

function tooLarge(maxBytes: number): JsonRpcError {
  return gatewayError('GATEWAY_BODY_TOO_LARGE', `The request body is larger than ${maxBytes} bytes, the most this gateway accepts. Send smaller batches.`);
}
