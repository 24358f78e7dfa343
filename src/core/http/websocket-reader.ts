/**
 * The server's reading side of an RFC 6455 connection: the client's frames parsed from its bytes as
 * they come (any split), unmasked, fragments joined into messages, and every rule a server must
 * enforce checked, so the caller sees only well-formed input, or why the connection must fail
 * (RFC 6455 §7.1.7) with the close code §7.4.1 gives that case:
 * - 1002 (protocol error): RSV bits without a negotiated extension (§5.2; edgeport negotiates none),
 *   a reserved opcode (3-7, 0xB-0xF), a control frame that is fragmented or carries more than 125
 *   bytes (§5.5), a continuation with no message open or a new data frame while one is (§5.4), an
 *   unmasked frame (§5.1), a 64-bit length with its top bit set (§5.2), a close frame of 1 byte or
 *   with a code no endpoint may send (§7.4: 1004-1006, 1015, below 1000, 1016-2999, 5000 and up);
 * - 1007 (invalid payload data): a text message, or a close reason, that is not UTF-8 (§8.1);
 *   checked on the whole message, so a character split across fragments is fine;
 * - 1009 (message too big): a message whose fragments together pass `maxMessageBytes`, refused
 *   from the frame header, before its payload is read.
 * Nothing is buffered beyond the frame being read and the fragments of one message, both bounded by
 * `maxMessageBytes`. After a failure or a close, the reader ignores whatever else comes.
 *
 * Client quirk: `wrangler tail` sends its one message (its settings, a text frame) unmasked; with
 * `unmaskedFirstText`, the first frame may be unmasked when it is a whole text message. Every other
 * unmasked frame is a protocol error.
 */
import { isUtf8 } from 'node:buffer';

/** Close codes the reader fails a connection with. */
export type FailCode = 1002 | 1007 | 1009;

export type WebSocketInput =
  | { kind: 'text' | 'binary' | 'ping' | 'pong'; data: Buffer }
  /** The peer's close frame; `code` null when it carried none. */
  | { kind: 'close'; code: number | null; reason: string }
  | { kind: 'fail'; code: FailCode; reason: string };

export interface ReaderOptions {
  /** The largest message (its fragments together) a client may send. */
  maxMessageBytes: number;
  /** Accept the first frame unmasked when it is a whole text message (wrangler's quirk). */
  unmaskedFirstText?: boolean;
}

const OP_CONTINUATION = 0x0;
const OP_TEXT = 0x1;
const OP_BINARY = 0x2;
const OP_CLOSE = 0x8;
const OP_PING = 0x9;
const OP_PONG = 0xa;
const MAX_CONTROL_PAYLOAD = 125;

/** Whether a client may send `code` in a close frame (RFC 6455 §7.4; 1012-1014 as IANA registered them since). */
export function isSendableCloseCode(code: number): boolean {
  return (code >= 1000 && code <= 1014 && code !== 1004 && code !== 1005 && code !== 1006) || (code >= 3000 && code <= 4999);
}

interface FrameHead {
  fin: boolean;
  opcode: number;
  masked: boolean;
  /** Bytes before the payload (header, extended length, mask key). */
  headBytes: number;
  payloadBytes: number;
}

export class WebSocketReader {
  readonly #options: ReaderOptions;
  readonly #chunks: Buffer[] = [];
  #bytes = 0;
  /** The header of the frame being read, once all of it arrived. */
  #head: FrameHead | undefined;
  #frames = 0;
  /** The open fragmented message: its opcode and the fragments so far. */
  #messageOpcode = 0;
  #fragments: Buffer[] = [];
  #fragmentBytes = 0;
  #done = false;

  constructor(options: ReaderOptions) {
    this.#options = options;
  }

  /** Bytes held: the unread input and the open message's fragments. */
  get bufferedBytes(): number {
    return this.#bytes + this.#fragmentBytes;
  }

  push(chunk: Buffer): void {
    if (this.#done || chunk.length === 0) return;
    this.#chunks.push(chunk);
    this.#bytes += chunk.length;
  }

  /** The next input, or undefined while more bytes are needed (and for ever after a close or a failure). */
  next(): WebSocketInput | undefined {
    while (!this.#done) {
      if (this.#head === undefined) {
        const head = this.#readHead();
        if (head === undefined) return undefined;
        if ('kind' in head) return this.#finish(head);
        this.#head = head;
      }
      const head = this.#head;
      if (this.#bytes < head.headBytes + head.payloadBytes) return undefined;
      this.#head = undefined;
      this.#frames += 1;
      const frame = this.#take(head.headBytes + head.payloadBytes);
      const payload = Buffer.from(frame.subarray(head.headBytes));
      if (head.masked) {
        const mask = frame.subarray(head.headBytes - 4, head.headBytes);
        for (let i = 0; i < payload.length; i++) payload[i]! ^= mask[i & 3]!;
      }
      const input = this.#input(head, payload);
      if (input !== undefined) return input.kind === 'close' || input.kind === 'fail' ? this.#finish(input) : input;
    }
    return undefined;
  }

  /** The frame header at the front of the input, a failure it already shows, or undefined while incomplete. */
  #readHead(): FrameHead | Extract<WebSocketInput, { kind: 'fail' }> | undefined {
    const start = this.#peek(2);
    if (start === undefined) return undefined;
    const fin = (start[0]! & 0x80) !== 0;
    const opcode = start[0]! & 0x0f;
    const masked = (start[1]! & 0x80) !== 0;
    const short = start[1]! & 0x7f;
    const control = opcode >= 0x8;
    if ((start[0]! & 0x70) !== 0) return fail(1002, 'RSV bits set, but no extension was negotiated');
    if (![OP_CONTINUATION, OP_TEXT, OP_BINARY, OP_CLOSE, OP_PING, OP_PONG].includes(opcode)) return fail(1002, `reserved opcode ${opcode}`);
    if (control && !fin) return fail(1002, 'fragmented control frame');
    if (control && short > MAX_CONTROL_PAYLOAD) return fail(1002, 'control frame payload over 125 bytes');
    if (!masked && !(this.#options.unmaskedFirstText === true && this.#frames === 0 && opcode === OP_TEXT && fin))
      return fail(1002, 'client frames must be masked');
    if (opcode === OP_CONTINUATION && this.#fragments.length === 0) return fail(1002, 'continuation frame with no message to continue');
    if ((opcode === OP_TEXT || opcode === OP_BINARY) && this.#fragments.length > 0) return fail(1002, 'new message before the fragmented one ended');
    let lengthBytes = 0;
    if (short === 126) lengthBytes = 2;
    else if (short === 127) lengthBytes = 8;
    const head = this.#peek(2 + lengthBytes);
    if (head === undefined) return undefined;
    let length = short;
    if (lengthBytes === 2) length = head.readUInt16BE(2);
    else if (lengthBytes === 8) {
      const big = head.readBigUInt64BE(2);
      if (big >> 63n !== 0n) return fail(1002, 'payload length with its most significant bit set');
      length = big > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(big);
    }
    if (!control && this.#fragmentBytes + length > this.#options.maxMessageBytes) return fail(1009, `message over ${this.#options.maxMessageBytes} bytes`);
    return { fin, opcode, masked, headBytes: 2 + lengthBytes + (masked ? 4 : 0), payloadBytes: length };
  }

  /** What a whole frame means: an input, or undefined for a fragment of a message still open. */
  #input(head: FrameHead, payload: Buffer): WebSocketInput | undefined {
    switch (head.opcode) {
      case OP_PING:
        return { kind: 'ping', data: payload };
      case OP_PONG:
        return { kind: 'pong', data: payload };
      case OP_CLOSE:
        return closeInput(payload);
      default:
        break;
    }
    if (!head.fin) {
      if (head.opcode !== OP_CONTINUATION) this.#messageOpcode = head.opcode;
      this.#fragments.push(payload);
      this.#fragmentBytes += payload.length;
      return undefined;
    }
    let data = payload;
    let opcode = head.opcode;
    if (opcode === OP_CONTINUATION) {
      data = Buffer.concat([...this.#fragments, payload]);
      opcode = this.#messageOpcode;
      this.#fragments = [];
      this.#fragmentBytes = 0;
    }
    if (opcode === OP_BINARY) return { kind: 'binary', data };
    return isUtf8(data) ? { kind: 'text', data } : fail(1007, 'text message is not valid UTF-8');
  }

  /** Drops what is held; nothing is read any more (the connection is closing). */
  discard(): void {
    this.#done = true;
    this.#chunks.length = 0;
    this.#bytes = 0;
    this.#head = undefined;
    this.#fragments = [];
    this.#fragmentBytes = 0;
  }

  #finish(input: WebSocketInput): WebSocketInput {
    this.discard();
    return input;
  }

  /** The first `n` input bytes in one buffer (the first chunks joined if need be), or undefined when fewer arrived. */
  #peek(n: number): Buffer | undefined {
    if (this.#bytes < n) return undefined;
    let count = 1;
    for (let length = this.#chunks[0]!.length; length < n; count++) length += this.#chunks[count]!.length;
    if (count > 1) this.#chunks.splice(0, count, Buffer.concat(this.#chunks.slice(0, count)));
    return this.#chunks[0];
  }

  /** Removes and returns the first `n` input bytes (at most `n` are there). */
  #take(n: number): Buffer {
    this.#bytes -= n;
    const first = this.#chunks[0]!;
    if (first.length >= n) {
      if (first.length === n) this.#chunks.shift();
      else this.#chunks[0] = first.subarray(n);
      return first.subarray(0, n);
    }
    const parts: Buffer[] = [];
    let left = n;
    while (left > 0) {
      const chunk = this.#chunks[0]!;
      if (chunk.length <= left) {
        parts.push(chunk);
        this.#chunks.shift();
        left -= chunk.length;
      } else {
        parts.push(chunk.subarray(0, left));
        this.#chunks[0] = chunk.subarray(left);
        left = 0;
      }
    }
    return Buffer.concat(parts, n);
  }
}

function fail(code: FailCode, reason: string): Extract<WebSocketInput, { kind: 'fail' }> {
  return { kind: 'fail', code, reason };
}

/** A close frame's payload read (RFC 6455 §5.5.1): nothing, or a code of 2 bytes and a UTF-8 reason. */
function closeInput(payload: Buffer): WebSocketInput {
  if (payload.length === 0) return { kind: 'close', code: null, reason: '' };
  if (payload.length === 1) return fail(1002, 'close frame of 1 byte');
  const code = payload.readUInt16BE(0);
  if (!isSendableCloseCode(code)) return fail(1002, `close code ${code} may not be sent`);
  const reason = payload.subarray(2);
  if (!isUtf8(reason)) return fail(1007, 'close reason is not valid UTF-8');
  return { kind: 'close', code, reason: reason.toString('utf8') };
}
