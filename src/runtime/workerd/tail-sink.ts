/**
 * The server's end of the tails of an account's scripts (the host worker's tail gate,
 * inside/isolate-host.ts): an HTTP server on a Unix socket that only the account's workerd process
 * is given, taking each batch of trace events (JSON, at most MAX_BATCH_BYTES) of one isolate (named
 * by the path, which the gate sets) and handing every event to `publish` with the isolate's id.
 */
import { createServer, type Server } from 'node:http';
import type { Logger } from '../../core/log.ts';
import { guardedListener } from '../../core/http/guarded-listener.ts';
import { listenOnSocket } from './socket-server.ts';

/** A batch larger than this (a script logging megabytes in one request) is dropped whole. */
export const MAX_BATCH_BYTES = 1024 * 1024;

export interface TailSink {
  close(): Promise<void>;
}

export async function startTailSink(socketPath: string, publish: (isolate: string, event: unknown) => void, logger: Logger, name: string): Promise<TailSink> {
  const server: Server = createServer(
    guardedListener(
      (req, res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        req.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size <= MAX_BATCH_BYTES) chunks.push(chunk);
        });
        req.on('end', () => {
          res.writeHead(204).end();
          let isolate: string;
          try {
            isolate = decodeURIComponent((req.url ?? '/').slice(1));
          } catch {
            return;
          }
          if (size > MAX_BATCH_BYTES) {
            logger.warn({ isolate, bytes: size }, `A tail batch over ${MAX_BATCH_BYTES} bytes was dropped.`);
            return;
          }
          let events: unknown;
          try {
            events = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          } catch {
            return;
          }
          if (Array.isArray(events)) for (const event of events) publish(isolate, event);
        });
      },
      name,
      logger,
    ),
  );
  return listenOnSocket(server, socketPath);
}
