/**
 * Closing a connection whose request body is still arriving, without losing the answer to it.
 * Node destroys a `connection: close` answer's socket (socket.destroySoon) as soon as the answer
 * is flushed; request bytes still unread or in flight then make the kernel reset the connection,
 * and a client that has not yet read the answer loses it (an oversized S3 request got no 400,
 * only a reset). Lingering instead: the answer is followed by a FIN, what the client still sends
 * is read and dropped for a bounded time and a bounded number of bytes, then the socket is
 * destroyed. The bounds keep a refused client's cost small and fixed (RFC 9112 §9.6 "lingering close").
 */
import type { Socket } from 'node:net';

/** How long a refused request's connection may stay open after its answer, for the client to read it. */
export const LINGER_MS = 1_000;
/** What is read (and dropped) of the refused request's body after its answer, at most. */
export const LINGER_BYTES = 4 * 1024 * 1024;
/** How often the bytes read while lingering are checked. */
const CHECK_MS = 5;

/** Makes the close that follows this socket's `connection: close` answer a lingering one. */
export function lingerOnClose(socket: Socket): void {
  (socket as Socket & { destroySoon(): void }).destroySoon = function lingeringClose(this: Socket): void {
    closeLingering(this);
  };
}

/** Ends `socket` after what was written to it, reading and dropping what still comes, within the bounds. */
export function closeLingering(socket: Socket): void {
  socket.end();
  const readBefore = socket.bytesRead;
  const check = setInterval(() => {
    if (socket.bytesRead - readBefore > LINGER_BYTES) socket.destroy();
  }, CHECK_MS);
  const deadline = setTimeout(() => socket.destroy(), LINGER_MS);
  check.unref();
  deadline.unref();
  // The client closing its side (it read the answer and stopped) ends the wait at once.
  socket.once('end', () => socket.destroy());
  socket.once('close', () => {
    clearInterval(check);
    clearTimeout(deadline);
  });
  // Read on (the caller drops what comes): bytes left unread would make the close a reset.
  socket.resume();
}
