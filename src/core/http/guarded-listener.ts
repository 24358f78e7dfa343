/**
 * A service's request handler made safe to hand to node:http. node:http ignores what a listener
 * returns, so a handler's rejected promise (a bug its own error handling missed) would become an
 * unhandled rejection. Here a handler that throws or rejects is logged and answered: a 500 in the
 * service's own error shape when nothing was sent yet and the service has one, else its connection
 * is closed (a service whose framework answers its own errors fails only while answering).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../log.ts';
import type { RequestListener } from '../service.ts';

/** The service's 500, in its error shape (S3 XML, API envelope, JSON-RPC error, plain text). */
export interface InternalErrorAnswer {
  contentType: string;
  body(req: IncomingMessage): string;
}

export function guardedListener(
  handler: (req: IncomingMessage, res: ServerResponse) => unknown,
  service: string,
  logger: Logger,
  answer?: InternalErrorAnswer,
): RequestListener {
  const fail = (req: IncomingMessage, res: ServerResponse, error: unknown): void => {
    try {
      logger.error(
        { err: error, service, method: req.method, url: req.url },
        'Request handler failed unexpectedly; the request was answered 500 or its connection closed.',
      );
      if (answer === undefined || res.headersSent || res.destroyed) {
        res.destroy();
        return;
      }
      const body = req.method === 'HEAD' ? '' : answer.body(req);
      res.writeHead(500, { 'content-type': answer.contentType, 'content-length': Buffer.byteLength(body), connection: 'close' });
      res.end(body);
    } catch {
      // Answering failed too (the socket went away mid-write): nothing is left to tell the client.
      res.destroy();
    }
  };
  return function guardedRequest(req, res) {
    try {
      const result = handler(req, res);
      if (result instanceof Promise) result.catch((error: unknown) => fail(req, res, error));
    } catch (error) {
      fail(req, res, error);
    }
  };
}
