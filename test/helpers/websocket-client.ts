/**
 * A WebSocket client by hand, for tests that must misbehave as no real client would: the opening
 * handshake on a raw socket, client frames built with any FIN, RSV, opcode and mask, and the
 * server's frames read back from what it sent.
 */
import { connect, type Socket } from 'node:net';
import { frame } from '../../src/core/http/websocket.ts';

export interface ClientFrame {
  fin?: boolean;
  rsv?: number;
  opcode: number;
  payload: Buffer;
  /** The mask key; unmasked when null. */
  mask?: Buffer | null;
}

/** A client's frame: the server's framing with FIN, RSV and the mask bit and key as given. */
export function clientFrame({ fin = true, rsv = 0, opcode, payload, mask = Buffer.from([0x37, 0xfa, 0x21, 0x3d]) }: ClientFrame): Buffer {
  const plain = frame(opcode, payload);
  const headLength = plain.length - payload.length;
  const head = Buffer.from(plain.subarray(0, headLength));
  head[0] = (fin ? 0x80 : 0) | (rsv << 4) | opcode;
  if (!mask) return Buffer.concat([head, payload]);
  head[1] = head[1]! | 0x80;
  return Buffer.concat([head, mask, Buffer.from(payload.map((byte, i) => byte ^ mask[i % 4]!))]);
}

/** A close frame's payload: the code and the reason. */
export function closePayload(code: number, reason: Buffer | string = ''): Buffer {
  const payload = Buffer.alloc(2);
  payload.writeUInt16BE(code);
  return Buffer.concat([payload, Buffer.from(reason)]);
}

export interface ServerFrame {
  opcode: number;
  payload: Buffer;
}

/** The whole server frames at the front of `data` (unmasked, as a server sends them), and the bytes after them. */
export function serverFrames(data: Buffer): { frames: ServerFrame[]; rest: Buffer } {
  const frames: ServerFrame[] = [];
  let at = 0;
  for (;;) {
    if (data.length - at < 2) break;
    const short = data[at + 1]! & 0x7f;
    const lengthBytes = short === 126 ? 2 : short === 127 ? 8 : 0;
    if (data.length - at < 2 + lengthBytes) break;
    const length = short === 126 ? data.readUInt16BE(at + 2) : short === 127 ? Number(data.readBigUInt64BE(at + 2)) : short;
    const start = at + 2 + lengthBytes;
    if (data.length < start + length) break;
    frames.push({ opcode: data[at]! & 0x0f, payload: data.subarray(start, start + length) });
    at = start + length;
  }
  return { frames, rest: data.subarray(at) };
}

/** The close code of a close frame among `frames`, or undefined. */
export function closeCodeOf(frames: ServerFrame[]): number | undefined {
  const close = frames.find((each) => each.opcode === 0x8);
  return close === undefined ? undefined : close.payload.length >= 2 ? close.payload.readUInt16BE(0) : 1005;
}

/**
 * Opens a raw socket to `url` (ws://host:port/path) and completes the handshake; resolves with the
 * socket, paused (nothing more is read until the caller resumes it), and the bytes after the 101's head.
 */
export function openWebSocket(url: string, protocol = 'trace-v1'): Promise<{ socket: Socket; head: Buffer }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(target.port), target.hostname, () => {
      socket.write(
        `GET ${target.pathname} HTTP/1.1\r\nHost: ${target.host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
          `Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: ${protocol}\r\n\r\n`,
      );
    });
    let received = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.off('data', onData);
      socket.pause();
      const status = received.subarray(0, received.indexOf('\r\n')).toString('latin1');
      if (!status.startsWith('HTTP/1.1 101')) {
        socket.destroy();
        reject(new Error(`no upgrade: ${received.toString('latin1')}`));
        return;
      }
      resolve({ socket, head: received.subarray(end + 4) });
    };
    socket.on('data', onData);
    socket.on('error', reject);
  });
}

/** Reads `socket` (resumed) until it ends or closes; resolves with everything it received after `head`. */
export function readToEnd(socket: Socket, head: Buffer = Buffer.alloc(0), withinMs = 20_000): Promise<{ data: Buffer; ended: 'end' | 'reset' | 'timeout' }> {
  return new Promise((resolve) => {
    const chunks = [head];
    let ended: 'end' | 'reset' | 'timeout' = 'end';
    const timer = setTimeout(() => {
      ended = 'timeout';
      socket.destroy();
    }, withinMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => {
      ended = 'reset';
    });
    socket.once('close', () => {
      clearTimeout(timer);
      resolve({ data: Buffer.concat(chunks), ended });
    });
    socket.on('end', () => socket.end());
    socket.resume();
  });
}
