/**
 * lingerOnClose on a real node:http server that refuses uploads with `connection: close`: the
 * client, still sending, reads the whole answer, and a client that never stops sending is cut off
 * within the bounds (LINGER_MS, LINGER_BYTES), not read for as long as it sends. (That the answer
 * would otherwise be lost to a reset shows through the S3 listener: test/e2e/s3-hostile-bodies.test.ts
 * gets empty answers to its oversized requests without the linger.)
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { test } from 'node:test';
import { LINGER_BYTES, LINGER_MS, lingerOnClose } from '../../src/core/http/lingering-close.ts';
import { listen } from '../helpers/listen.ts';

/** Refuses every request, once some of its body waits unread in the socket's buffers (as when checks take a while). */
function refuse(req: IncomingMessage, res: ServerResponse): void {
  setTimeout(() => {
    lingerOnClose(req.socket);
    const body = 'too large';
    res.writeHead(413, { 'content-length': body.length, connection: 'close' });
    res.end(body);
    req.resume();
  }, 50);
}

test('a refused upload still arriving gets its answer, and the connection closes within the linger bounds', { timeout: 30_000 }, async (t) => {
  const server = createServer(refuse);
  const port = await listen(server, t);

  // Writes chunks as fast as the socket takes them until it closes; resolves with what came back.
  const flood = (declared: number) =>
    new Promise<{ text: string; sent: number; ms: number }>((resolve) => {
      const socket = connect({ port, host: '127.0.0.1' });
      const started = performance.now();
      const chunks: Buffer[] = [];
      let sent = 0;
      let open = true;
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      socket.on('error', () => {
        /* the reset at the end; 'close' follows */
      });
      socket.once('close', () => {
        open = false;
        resolve({ text: Buffer.concat(chunks).toString('latin1'), sent, ms: performance.now() - started });
      });
      // Up to 3 MiB in one write, as a client with the whole body in hand sends it; then 64 KiB at a time.
      const chunk = Buffer.alloc(Math.min(declared, 3 * 1024 * 1024), 0x61);
      const pump = (): void => {
        while (open && sent < declared) {
          sent += chunk.length;
          if (!socket.write(chunk)) return void socket.once('drain', pump);
        }
      };
      socket.once('connect', () => {
        socket.write(`PUT /upload HTTP/1.1\r\nhost: x\r\ncontent-length: ${declared}\r\n\r\n`);
        pump();
      });
    });

  for (let round = 0; round < 5; round++) {
    const small = await flood(3 * 1024 * 1024);
    assert.match(small.text, /^HTTP\/1\.1 413 /, `round ${round}: ${small.text.slice(0, 80)}`);
    assert.ok(small.text.endsWith('too large'), `round ${round}`);
  }
  // A client that would send 10 GiB: answered, and cut off after at most LINGER_BYTES more (and a
  // few socket buffers), within LINGER_MS and a generous margin for a busy machine.
  const endless = await flood(10 * 1024 * 1024 * 1024);
  assert.match(endless.text, /^HTTP\/1\.1 413 /);
  assert.ok(endless.ms < LINGER_MS + 5_000, `closed after ${Math.round(endless.ms)} ms`);
  assert.ok(endless.sent < LINGER_BYTES + 64 * 1024 * 1024, `the client got to send ${endless.sent} bytes`);
});
