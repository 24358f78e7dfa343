/**
 * A fault injector in front of an S3 endpoint: a real 127.0.0.1 listener that passes requests to
 * `target` until a test sets a fault, then, for the requests the fault matches, holds them
 * unanswered (a store that accepts and never answers: its disk is full, its cluster blocked),
 * answers with a status and an S3 error code (503 SlowDown, 507 XMinioStorageFull, 501
 * NotImplemented), or resets the connection. It counts what it held, answered and passed.
 */
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { TestContext } from 'node:test';

export type S3Fault =
  | { kind: 'pass' }
  /** Reads the request (body too, or not: `readBody`) and never answers. */
  | { kind: 'hang'; readBody?: boolean }
  | { kind: 'answer'; status: number; code: string; message?: string }
  | { kind: 'reset' };

export interface FaultyS3 {
  /** `http://127.0.0.1:<port>`: use it as the store's endpoint. */
  endpoint: string;
  /** Applies `fault` to the requests `matches` selects (default: every request); the others pass. */
  set(fault: S3Fault, matches?: (method: string, url: string) => boolean): void;
  /** Requests held, answered with a fault, reset, and passed through. */
  readonly counts: { held: number; answered: number; reset: number; passed: number };
  /** `<METHOD> <url>` of every request. */
  readonly requests: string[];
}

export async function startFaultyS3(t: TestContext, target: string): Promise<FaultyS3> {
  let fault: S3Fault = { kind: 'pass' };
  let matches: (method: string, url: string) => boolean = () => true;
  const counts = { held: 0, answered: 0, reset: 0, passed: 0 };
  const requests: string[] = [];
  const sockets = new Set<Socket>();
  const upstream = new URL(target);

  function pass(req: IncomingMessage, res: ServerResponse): void {
    counts.passed += 1;
    const out = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (answer) => {
        answer.on('error', () => res.destroy());
        res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
        answer.pipe(res);
      },
    );
    out.on('error', () => res.destroy());
    // Connections cut at the end of a test are no failure of the test's.
    req.on('error', () => out.destroy());
    res.on('error', () => out.destroy());
    req.pipe(out);
  }

  const server = createServer((req, res) => {
    req.on('error', () => undefined);
    const method = req.method ?? '';
    const url = req.url ?? '';
    requests.push(`${method} ${url}`);
    const applied = matches(method, url) ? fault : { kind: 'pass' as const };
    switch (applied.kind) {
      case 'pass':
        return pass(req, res);
      case 'hang':
        counts.held += 1;
        if (applied.readBody !== false) req.resume();
        return;
      case 'reset':
        counts.reset += 1;
        req.socket.destroy();
        return;
      case 'answer': {
        counts.answered += 1;
        const body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${applied.code}</Code><Message>${applied.message ?? applied.code}</Message></Error>`;
        req.resume();
        res.writeHead(applied.status, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(body), connection: 'close' });
        res.end(method === 'HEAD' ? undefined : body);
      }
    }
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    set(next, filter) {
      fault = next;
      matches = filter ?? (() => true);
    },
    counts,
    requests,
  };
}
