/**
 * Listening on a Unix socket for one of a script's private services (store binding, tail sink),
 * and closing it at once, cutting any connection still open.
 */
import type { Server } from 'node:http';

export interface SocketServer {
  close(): Promise<void>;
}

export async function listenOnSocket(server: Server, socketPath: string): Promise<SocketServer> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
