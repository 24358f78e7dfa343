/**
 * A minimal RFC 6455 server side, for the few sockets edgeport serves (tail sessions): the
 * handshake, text frames out, and the client's frames in (websocket-reader.ts checks them), answering
 * ping and close. A client that breaks the protocol is closed with the code the RFC gives (1002,
 * 1007, 1009: see websocket-reader.ts).
 *
 * What one connection may hold is bounded, whatever its client does (`WEBSOCKET_LIMITS`):
 * - our output it leaves unread (Node's write buffer, beyond what the kernel's socket buffers took):
 *   above `pauseBufferedBytes` we stop reading it, so its pings go unanswered until it reads
 *   (a client that pings and never reads fills its own socket, not our memory); a message that
 *   would take the buffer past `maxBufferedBytes`, or a buffer that does not drain within
 *   `stalledMs`, closes it with 1008 (policy violation: RFC 6455 §7.4.1 has no code for a reader too
 *   slow, and 1009 says the *received* message was too big);
 * - its input: the frame being read and one message's fragments, at most `maxMessageBytes` (1009).
 * A connection we close gets our close frame and `closeGraceMs` to read what was queued before it
 * is cut; whatever it sends meanwhile is read and dropped (unread input would reset the connection
 * and lose the close frame).
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketReader, type FailCode } from './websocket-reader.ts';

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

export interface WebSocketLimits {
  /** The largest message (fragments together) a client may send: 1009 beyond. */
  maxMessageBytes: number;
  /** Unread output above which a new message closes the connection with 1008. */
  maxBufferedBytes: number;
  /** Unread output above which the client's input is no longer read (nor its pings answered). */
  pauseBufferedBytes: number;
  /** How long output may stay above `pauseBufferedBytes` without draining before the connection is closed with 1008. */
  stalledMs: number;
  /** How long a closed connection may take to read what was queued for it (and its close frame) before it is cut. */
  closeGraceMs: number;
}

export const WEBSOCKET_LIMITS: WebSocketLimits = {
  maxMessageBytes: 1024 * 1024,
  maxBufferedBytes: 1024 * 1024,
  pauseBufferedBytes: 64 * 1024,
  stalledMs: 10_000,
  closeGraceMs: 5_000,
};

/**
 * Why a connection ended: `server` (our close), `peer` (its close frame), `slow_reader` (1008: it
 * left too much unread), `protocol_error` (1002 or 1007), `message_too_big` (1009), `lost` (the
 * connection ended without a close frame).
 */
export type CloseCause = 'server' | 'peer' | 'slow_reader' | 'protocol_error' | 'message_too_big' | 'lost';

export const CLOSE_CAUSES: readonly CloseCause[] = ['server', 'peer', 'slow_reader', 'protocol_error', 'message_too_big', 'lost'];

const FAIL_CAUSES: Record<FailCode, CloseCause> = { 1002: 'protocol_error', 1007: 'protocol_error', 1009: 'message_too_big' };

export interface ServerWebSocket {
  /** Queues a text message; false when the connection is closed, or closes now because its client left too much unread. */
  sendText(text: string): boolean;
  close(code?: number, reason?: string): void;
  readonly closed: boolean;
  /** Bytes held for this connection: unread output and the input being read. */
  readonly bufferedBytes: number;
  onClose(listener: (cause: CloseCause) => void): void;
}

/**
 * Completes the handshake (with `protocol` when the client offered it) and serves the socket; null
 * (400 or 426 answered) when the request is no WebSocket upgrade. `held`, when given, holds the
 * socket until its connection is gone (a closed one reading its close frame included), so what
 * they hold can be summed.
 */
export function acceptWebSocket(
  req: IncomingMessage,
  socket: Duplex,
  protocol: string,
  limits: Partial<WebSocketLimits> = {},
  held?: Set<ServerWebSocket>,
): ServerWebSocket | null {
  const refusal = handshakeProblem(req);
  if (refusal !== null) {
    refuseUpgrade(socket, ...refusal);
    return null;
  }
  const offered = String(req.headers['sec-websocket-protocol'] ?? '')
    .split(',')
    .map((item) => item.trim());
  const accept = createHash('sha1')
    .update(String(req.headers['sec-websocket-key']) + GUID)
    .digest('base64');
  socket.write(
    [
      'HTTP/1.1 101 Switching Protocols',
      'Upgrade: websocket',
      'Connection: Upgrade',
      `Sec-WebSocket-Accept: ${accept}`,
      ...(offered.includes(protocol) ? [`Sec-WebSocket-Protocol: ${protocol}`] : []),
      '',
      '',
    ].join('\r\n'),
  );
  const connection = new Connection(socket, { ...WEBSOCKET_LIMITS, ...limits });
  if (held) {
    held.add(connection);
    socket.once('close', () => held.delete(connection));
  }
  return connection;
}

/** How long a refused upgrade's connection may take to read the answer before it is cut. */
const REFUSAL_LINGER_MS = 1_000;

/**
 * Answers an upgrade request that is refused and ends its connection. What the client sent after
 * its head is read and dropped (unread, it would keep the connection from seeing the client's FIN,
 * and an upgraded socket has no idle timeout left), and the connection is cut after REFUSAL_LINGER_MS.
 */
export function refuseUpgrade(socket: Duplex, status: string, message: string, headers: string[] = []): void {
  socket.on('error', () => socket.destroy());
  socket.resume();
  socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\n${headers.map((line) => `${line}\r\n`).join('')}Content-Type: text/plain\r\n\r\n${message}\n`);
  setTimeout(() => socket.destroy(), REFUSAL_LINGER_MS).unref();
}

/** What makes `req` no valid opening handshake (RFC 6455 §4.2.1): refuseUpgrade's status, message and headers, or null. */
export function handshakeProblem(req: IncomingMessage): [status: string, message: string, headers?: string[]] | null {
  const { headers } = req;
  if (headers['transfer-encoding'] !== undefined || (headers['content-length'] ?? '0') !== '0')
    return ['400 Bad Request', 'An Upgrade request may not carry a body (a WebSocket handshake has none).'];
  if (req.method !== 'GET' || headers.upgrade?.toLowerCase() !== 'websocket')
    return ['400 Bad Request', 'A WebSocket upgrade (GET with Upgrade: websocket) was expected; no other protocol is switched to.'];
  if (!/^[A-Za-z0-9+/]{22}==$/.test(headers['sec-websocket-key'] ?? '')) return ['400 Bad Request', 'Sec-WebSocket-Key must be 16 bytes in base64.'];
  if (headers['sec-websocket-version'] !== '13') return ['426 Upgrade Required', 'Only WebSocket version 13 is spoken here.', ['Sec-WebSocket-Version: 13']];
  return null;
}

class Connection implements ServerWebSocket {
  readonly #socket: Duplex;
  readonly #limits: WebSocketLimits;
  readonly #reader: WebSocketReader;
  readonly #listeners: Array<(cause: CloseCause) => void> = [];
  #closed = false;
  #paused = false;
  #stallTimer: NodeJS.Timeout | undefined;
  #graceTimer: NodeJS.Timeout | undefined;

  constructor(socket: Duplex, limits: WebSocketLimits) {
    this.#socket = socket;
    this.#limits = limits;
    this.#reader = new WebSocketReader({ maxMessageBytes: limits.maxMessageBytes, unmaskedFirstText: true });
    socket.on('data', this.#onData);
    socket.on('drain', this.#onDrain);
    socket.on('error', () => socket.destroy());
    // An upgraded socket is half-open capable: the client's FIN is answered with ours.
    socket.on('end', () => {
      if (this.#closed) return;
      this.#finish('lost');
      socket.end();
      this.#cutAfterGrace();
    });
    socket.on('close', () => {
      clearTimeout(this.#graceTimer);
      clearTimeout(this.#stallTimer);
      this.#finish('lost');
    });
  }

  get closed(): boolean {
    return this.#closed;
  }

  get bufferedBytes(): number {
    return this.#socket.writableLength + this.#reader.bufferedBytes;
  }

  onClose(listener: (cause: CloseCause) => void): void {
    this.#listeners.push(listener);
  }

  sendText(text: string): boolean {
    return this.#send(frame(0x1, Buffer.from(text, 'utf8')));
  }

  close(code = 1000, reason = ''): void {
    this.#closeWith(closePayload(code, reason), 'server');
  }

  /** Writes `bytes`, unless they would take the unread output past the bound: then the connection is closed. */
  #send(bytes: Buffer): boolean {
    if (this.#closed) return false;
    if (this.#socket.writableLength + bytes.length > this.#limits.maxBufferedBytes) {
      this.#closeWith(closePayload(1008, 'too much unread: read faster'), 'slow_reader');
      return false;
    }
    this.#socket.write(bytes);
    return true;
  }

  readonly #onData = (chunk: Buffer): void => {
    this.#reader.push(chunk);
    this.#pump();
  };

  /** Acts on the input read so far, while the client reads our output. */
  #pump(): void {
    while (!this.#closed) {
      if (this.#socket.writableLength > this.#limits.pauseBufferedBytes) {
        this.#pause();
        return;
      }
      const input = this.#reader.next();
      if (input === undefined) return;
      switch (input.kind) {
        case 'ping':
          this.#send(frame(0xa, input.data));
          break;
        case 'close':
          // Echo the client's code (RFC 6455 §5.5.1); none when it sent none.
          this.#closeWith(input.code === null ? Buffer.alloc(0) : closePayload(input.code, ''), 'peer');
          return;
        case 'fail':
          this.#closeWith(closePayload(input.code, input.reason), FAIL_CAUSES[input.code]);
          return;
        default:
          // Text, binary and pongs are read and dropped: a tail's client sends only its settings.
          break;
      }
    }
  }

  #pause(): void {
    if (this.#paused) return;
    this.#paused = true;
    this.#socket.pause();
    this.#stallTimer = setTimeout(() => this.#closeWith(closePayload(1008, 'output left unread: read faster'), 'slow_reader'), this.#limits.stalledMs);
    this.#stallTimer.unref();
  }

  readonly #onDrain = (): void => {
    if (!this.#paused || this.#closed) return;
    this.#paused = false;
    clearTimeout(this.#stallTimer);
    this.#socket.resume();
    this.#pump();
  };

  /** Sends the close frame `payload` and ends the connection; the client has closeGraceMs to read what was queued. */
  #closeWith(payload: Buffer, cause: CloseCause): void {
    if (this.#closed) return;
    clearTimeout(this.#stallTimer);
    this.#socket.off('data', this.#onData);
    this.#reader.discard();
    // From now on its input is read and dropped (no 'data' listener), so unread input cannot reset the connection.
    this.#socket.resume();
    this.#socket.end(frame(0x8, payload));
    this.#cutAfterGrace();
    this.#finish(cause);
  }

  #cutAfterGrace(): void {
    this.#graceTimer = setTimeout(() => this.#socket.destroy(), this.#limits.closeGraceMs);
    this.#graceTimer.unref();
  }

  #finish(cause: CloseCause): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const listener of this.#listeners) listener(cause);
  }
}

/** A close frame's payload: the code, then the reason (ours are short ASCII: cut to the 123 bytes a control frame leaves). */
function closePayload(code: number, reason: string): Buffer {
  const payload = Buffer.alloc(2);
  payload.writeUInt16BE(code);
  return Buffer.concat([payload, Buffer.from(reason, 'latin1').subarray(0, 123)]);
}

/** One unmasked server frame. */
export function frame(opcode: number, payload: Buffer): Buffer {
  const length = payload.length;
  const head =
    length < 126
      ? Buffer.from([0x80 | opcode, length])
      : length < 65_536
        ? Buffer.from([0x80 | opcode, 126, length >> 8, length & 0xff])
        : Buffer.concat([Buffer.from([0x80 | opcode, 127]), bigLength(length)]);
  return Buffer.concat([head, payload]);
}

function bigLength(length: number): Buffer {
  const out = Buffer.alloc(8);
  out.writeBigUInt64BE(BigInt(length));
  return out;
}
