/**
 * What `edgeport start` needs from each service: a Node request listener to put behind its port,
 * and a close that releases whatever the service holds (timers, upstream pools, spools). The
 * listener itself is created, bound and closed by src/cli/start.ts.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

export type RequestListener = (request: IncomingMessage, response: ServerResponse) => void;

export interface ServiceHandle {
  readonly handler: RequestListener;
  close(): Promise<void>;
}
