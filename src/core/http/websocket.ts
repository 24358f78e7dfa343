/**
 * A minimal RFC 6455 server side, for the few sockets edgeport serves (tail sessions): the
 * handshake, text frames out, and reading the client's frames in (masked or not: wrangler sends its
 * first frame unmasked), answering ping and close. A frame over `maxFrameBytes`, or a fragmented
 * one, closes the socket with 1009 / 1003; nothing a client sends is buffered beyond one frame.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

export interface ServerWebSocket {
  sendText(text: string): void;
  close(code?: number): void;
  readonly closed: boolean;
  onClose(listener: () => void): void;
}

/** Completes the handshake (with `protocol` when the client offered it) and serves the socket; null (400 answered) when the request is no WebSocket upgrade. */
export function acceptWebSocket(req: IncomingMessage, socket: Duplex, protocol: string, maxFrameBytes: number): ServerWebSocket | null {
  const key = req.headers['sec-websocket-key'];
  if (typeof key !== 'string' || req.headers.upgrade?.toLowerCase() !== 'websocket') {
    socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Type: text/plain\r\n\r\nA WebSocket upgrade was expected.\n');
    return null;
  }
  const offered = String(req.headers['sec-websocket-protocol'] ?? '').split(',').map((item) => item.trim());
  const accept = createHash('sha1').update(key + GUID).digest('base64');
  socket.write(['HTTP/1.1 101 Switching Protocols', 'Upgrade: websocket', 'Connection: Upgrade', `Sec-WebSocket-Accept: ${accept}`,
    ...(offered.includes(protocol) ? [`Sec-WebSocket-Protocol: ${protocol}`] : []), '', ''].join('\r\n'));
  let closed = false;
  const closeListeners: Array<() => void> = [];
  const finish = () => {
    if (closed) return;
    closed = true;
    for (const listener of closeListeners) listener();
  };
  socket.on('close', finish);
  socket.on('error', () => socket.destroy());
  const close = (code = 1000) => {
    if (closed) return;
    const payload = Buffer.alloc(2);
    payload.writeUInt16BE(code);
    socket.end(frame(0x8, payload));
    finish();
    setTimeout(() => socket.destroy(), 1_000).unref();
  };
  let pending: Buffer = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    for (;;) {
      const parsed = parseFrame(pending, maxFrameBytes);
      if (parsed === 'incomplete') return;
      if (parsed === 'too-large') return close(1009);
      pending = pending.subarray(parsed.length);
      if (!parsed.fin) return close(1003);
      if (parsed.opcode === 0x8) return close(1000);
      if (parsed.opcode === 0x9) socket.write(frame(0xa, parsed.payload));
      // Text, binary and pongs are read and ignored: a tail's client sends only its settings.
    }
  });
  return {
    sendText(text) {
      if (!closed) socket.write(frame(0x1, Buffer.from(text, 'utf8')));
    },
    close,
    get closed() {
      return closed;
    },
    onClose(listener) {
      closeListeners.push(listener);
    },
  };
}

/** One unmasked server frame. */
export function frame(opcode: number, payload: Buffer): Buffer {
  const length = payload.length;
  const head = length < 126 ? Buffer.from([0x80 | opcode, length])
    : length < 65_536 ? Buffer.from([0x80 | opcode, 126, length >> 8, length & 0xff])
      : Buffer.concat([Buffer.from([0x80 | opcode, 127]), bigLength(length)]);
  return Buffer.concat([head, payload]);
}

function bigLength(length: number): Buffer {
  const out = Buffer.alloc(8);
  out.writeBigUInt64BE(BigInt(length));
  return out;
}

export interface ParsedFrame {
  fin: boolean;
  opcode: number;
  payload: Buffer;
  /** Bytes the frame took. */
  length: number;
}

/** The first frame of `data` (unmasked when masked), or whether more bytes are needed or the frame is over `max`. */
export function parseFrame(data: Buffer, max: number): ParsedFrame | 'incomplete' | 'too-large' {
  if (data.length < 2) return 'incomplete';
  const fin = (data[0]! & 0x80) !== 0;
  const opcode = data[0]! & 0x0f;
  const masked = (data[1]! & 0x80) !== 0;
  let length = data[1]! & 0x7f;
  let offset = 2;
  if (length === 126) {
    if (data.length < 4) return 'incomplete';
    length = data.readUInt16BE(2);
    offset = 4;
  } else if (length === 127) {
    if (data.length < 10) return 'incomplete';
    const big = data.readBigUInt64BE(2);
    if (big > BigInt(max)) return 'too-large';
    length = Number(big);
    offset = 10;
  }
  if (length > max) return 'too-large';
  const maskOffset = offset;
  if (masked) offset += 4;
  if (data.length < offset + length) return 'incomplete';
  const payload = Buffer.from(data.subarray(offset, offset + length));
  if (masked) for (let i = 0; i < payload.length; i++) payload[i]! ^= data[maskOffset + (i % 4)]!;
  return { fin, opcode, payload, length: offset + length };
}
