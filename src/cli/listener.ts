/**
 * One HTTP listener of the CLI: bound to a host and port, and closed with a drain, so requests in
 * flight after SIGTERM get DRAIN_MS to finish before their connections are cut.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RequestListener } from '../core/service.ts';

/** How long requests in flight may take to finish after SIGTERM before connections are cut. */
const DRAIN_MS = 2_000;
/**
 * A connection that moves no bytes either way for this long is closed. It replaces Node's default
 * limit on a whole request (5 minutes), which would cut a 5 GiB S3 upload over any link slower
 * than 17 MiB/s, or a long upload through the edge. Longer than the edge's origin response
 * timeout (100 s), so an origin that is slow to answer still gets its 524.
 */
export const IDLE_TIMEOUT_MS = 120_000;

export interface Listener {
  readonly port: number;
  readonly url: string;
  close(): Promise<void>;
}

/** Listens on host:port (0 picks a free port); rejects, naming the port, when it is taken. */
export async function listen(handler: RequestListener, host: string, port: number, label: string,
  options: { idleTimeoutMs?: number } = {}): Promise<Listener> {
  const server = createServer({ requestTimeout: 0 }, handler);
  // With no 'timeout' listener, Node destroys the idle socket.
  server.setTimeout(options.idleTimeoutMs ?? IDLE_TIMEOUT_MS);
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(error.code === 'EADDRINUSE'
        ? new Error(`Port ${port} on ${host} (${label}) is already in use: stop what holds it or pick another port.`)
        : error);
    });
    server.listen(port, host, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  return { port: bound, url: `http://${host}:${bound}`, close: () => drain(server) };
}

async function drain(server: Server): Promise<void> {
  const closed = new Promise((resolve) => server.close(resolve));
  server.closeIdleConnections();
  const timer = setTimeout(() => server.closeAllConnections(), DRAIN_MS);
  await closed;
  clearTimeout(timer);
}
