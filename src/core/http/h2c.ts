/**
 * HTTP/2 over cleartext asked for by upgrade: `curl --http2 http://...` sends `Upgrade: h2c`,
 * `Connection: Upgrade, HTTP2-Settings` and `HTTP2-Settings` with its first request. edgeport
 * speaks no h2c, and a server that does not ignores that upgrade and answers over HTTP/1.1 (RFC
 * 7540 §3.2; RFC 9110 §7.8 lets any server ignore an Upgrade; RFC 9113 deprecates it), so every
 * listener serves such a request as any other.
 */
import { ServerResponse, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { RequestListener } from '../service.ts';
import { refuseUpgrade } from './websocket.ts';

/** How long a served upgrade's connection may take to read the answer before it is cut. */
const CLOSE_LINGER_MS = 1_000;

/** The request asks to upgrade to h2c and to nothing else (a WebSocket handshake naming h2c too is still one). */
export function asksOnlyForH2c(headers: IncomingHttpHeaders): boolean {
  const upgrade = headers.upgrade;
  if (upgrade === undefined) return false;
  const protocols = upgrade
    .split(',')
    .map((protocol) => protocol.trim().toLowerCase())
    .filter((protocol) => protocol !== '');
  return protocols.length > 0 && protocols.every((protocol) => protocol === 'h2c');
}

/**
 * An h2c upgrade that reached a server's 'upgrade' event (Node before 22.21 and 24.9, which take no
 * shouldUpgradeCallback to keep it a request, hand every upgrade to the event when it has a
 * listener): answered over HTTP/1.1 on its socket by `handler`, and the connection closed after the
 * answer (the parser that would read a next request is gone). Its body is never parsed there, so a
 * request with one is refused with 400 instead.
 */
export function serveUpgradeAsHttp1(req: IncomingMessage, socket: Duplex, handler: RequestListener): void {
  // Node's own error listener left with its parser: a reset must not be an unhandled 'error'.
  socket.on('error', () => socket.destroy());
  if (req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0') {
    refuseUpgrade(socket, '400 Bad Request', 'This server cannot read the body of an Upgrade: h2c request: send it without Upgrade (curl: --http1.1).');
    return;
  }
  const res = new ServerResponse(req);
  res.shouldKeepAlive = false;
  res.assignSocket(socket as Socket);
  res.once('finish', () => {
    res.detachSocket(socket as Socket);
    socket.end();
    setTimeout(() => socket.destroy(), CLOSE_LINGER_MS).unref();
  });
  handler(req, res);
}
