/**
 * Raw TCP clients for listener tests: connections that send part of a request head (or nothing)
 * and hold on, from a chosen local address (Linux routes all of 127.0.0.0/8 to loopback, so
 * 127.0.0.2 is "another client" to a server that sees 127.0.0.1 flooding), with what the server
 * answered and when it closed them.
 */
import { connect, type Socket } from 'node:net';

export interface RawConnection {
  readonly socket: Socket;
  /** Everything the server sent so far (latin1). */
  received(): string;
  /** Resolves when the connection closes, with ms since connect and what the server sent. */
  readonly closed: Promise<{ afterMs: number; text: string }>;
  /** performance.now() at connect. */
  readonly connectedAt: number;
}

/** Connects to 127.0.0.1:`port` from `localAddress`, writes `send` (if any), and resolves once connected. */
export function openRaw(port: number, options: { localAddress?: string; send?: string | Buffer } = {}): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', ...(options.localAddress ? { localAddress: options.localAddress } : {}) });
    const chunks: Buffer[] = [];
    let connectedAt = 0;
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    const closed = new Promise<{ afterMs: number; text: string }>((done) => {
      socket.once('close', () => done({ afterMs: performance.now() - connectedAt, text: Buffer.concat(chunks).toString('latin1') }));
    });
    socket.on('error', () => {
      /* a reset is a close; 'close' follows */
    });
    socket.once('connect', () => {
      connectedAt = performance.now();
      if (options.send !== undefined) socket.write(options.send);
      resolve({ socket, received: () => Buffer.concat(chunks).toString('latin1'), closed, connectedAt });
    });
    socket.once('close', () => {
      if (connectedAt === 0) reject(new Error(`connection to port ${port} failed`));
    });
  });
}

/** Opens `count` connections in batches of `batch` (so the listen backlog never overflows). */
export async function openMany(count: number, port: number, options: { localAddress?: string; send?: string; batch?: number } = {}): Promise<RawConnection[]> {
  const all: RawConnection[] = [];
  const batch = options.batch ?? 200;
  for (let i = 0; i < count; i += batch) {
    all.push(...(await Promise.all(Array.from({ length: Math.min(batch, count - i) }, () => openRaw(port, options)))));
  }
  return all;
}

/** The status line's code of a raw HTTP answer, or 0 when nothing was answered. */
export function statusOf(text: string): number {
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
}

/** The body of a raw HTTP answer (after the blank line). */
export function bodyOf(text: string): string {
  const at = text.indexOf('\r\n\r\n');
  return at < 0 ? '' : text.slice(at + 4);
}

/** A header of a raw HTTP answer, by lower-case name. */
export function headerOf(text: string, name: string): string | undefined {
  const head = text.slice(0, Math.max(0, text.indexOf('\r\n\r\n')));
  for (const line of head.split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    if (line.slice(0, colon).toLowerCase() === name) return line.slice(colon + 1).trim();
  }
  return undefined;
}
