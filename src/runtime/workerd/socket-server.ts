/**
 * Listening on a Unix socket for one of a script's private services (store binding, tail sink),
 * and closing it at once, cutting any connection still open.
 */
import type { Server, Socket } from 'node:net';

export interface SocketServer {
  close(): Promise<void>;
}

export async function listenOnSocket(server: Server, socketPath: string): Promise<SocketServer> {
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
