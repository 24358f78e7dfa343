/**
 * The server's end of an uploaded script's tail worker (tail-module.ts): an HTTP server on a Unix
 * socket that only workerd's tail worker is given, taking each batch of trace events (JSON, at most
 * MAX_BATCH_BYTES) and handing every event to `publish`.
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

export async function startTailSink(socketPath: string, publish: (event: unknown) => void, logger: Logger, scriptName: string): Promise<TailSink> {
  const server: Server = createServer(guardedListener((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BATCH_BYTES) chunks.push(chunk);
    });
    req.on('end', () => {
      res.writeHead(204).end();
      if (size > MAX_BATCH_BYTES) {
        logger.warn({ script: scriptName, bytes: size }, `A tail batch over ${MAX_BATCH_BYTES} bytes was dropped.`);
        return;
      }
      let events: unknown;
      try {
        events = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return;
      }
      if (Array.isArray(events)) for (const event of events) publish(event);
    });
  }, `tail sink of ${scriptName}`, logger));
  return listenOnSocket(server, socketPath);
}
