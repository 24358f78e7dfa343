/**
 * The store service's HTTP/1.1 server: a strict, minimal one on `net`, since only workerd's bucket
 * bindings ever connect (on a private Unix socket) and node:http's general machinery (request and
 * response objects, header maps, its parser's callbacks) cost more than the call itself. It reads
 * one request at a time per connection (kept alive, pipelined requests wait their turn): the head
 * (bounded), then a Content-Length or chunked body handed to the handler chunk by chunk with the
 * socket's back-pressure; the handler answers through a StoreResponse, whose head goes out in one
 * write with the first bytes of its body. A request answered before its body ended keeps its
 * connection: the rest of the body is read and dropped (within the lingering bounds, else the
 * connection is closed lingering). Malformed input is answered 400 (431 for a head over the
 * limit) and the connection closed; a connection that ends inside a body fails that body.
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { BodySink } from '../../core/http/drained.ts';
import { closeLingering, LINGER_BYTES, LINGER_MS } from '../../core/http/lingering-close.ts';
import { CALL_HEADER, NATIVE_CALL_HEADER_LIMIT } from './store-wire.ts';
import { HTTP_TOKEN } from '../../core/http/token.ts';

export interface StoreRequest {
  /** The request target (its path), as sent. */
  readonly target: string;
  /** The call header's value, when the request has one. */
  readonly call: string | undefined;
  /** The body's length as its Content-Length says (0 without a body); undefined for a chunked body. */
  readonly length: number | undefined;
  /** The body's chunks; done at once for a request without one. Rejects if the connection ends before the body does. */
  readonly body: AsyncIterator<Buffer>;
  /** True once the connection went away before the body ended. */
  readonly aborted: boolean;
}

export type StoreHandler = (request: StoreRequest, response: StoreResponse) => Promise<void>;

/** The largest request head accepted: a call that cannot go in front of its body travels in the head (store-wire.ts). */
export const MAX_HEAD_BYTES = NATIVE_CALL_HEADER_LIMIT + 64 * 1024;
/** The longest chunk-size line accepted. */
const MAX_CHUNK_LINE = 4096;
/** A kept-alive connection with no request this long is closed. */
const IDLE_MS = 60_000;

const REQUEST_LINE = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+ [^\s]+ HTTP\/1\.([01])$/;
// eslint-disable-next-line no-control-regex
const BAD_VALUE = /[\u0000-\u0008\u000a-\u001f\u007f]/;
const OWS = /^[ \t]+|[ \t]+$/g;
const HEX = /^[0-9A-Fa-f]{1,12}$/;
const BLANK_LINE = Buffer.from('\r\n\r\n');

class BadRequest extends Error {
  constructor(
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

/** Starts a server that answers each request with `handler`; `onFailure` hears of a handler that threw (its connection is closed). */
export function createStoreHttpServer(handler: StoreHandler, onFailure: (error: unknown) => void): Server {
  return createServer((socket) => new StoreConnection(socket, handler, onFailure));
}

/** Where a request's body stands: the bytes still to come of a Content-Length body, or a chunked body's state. */
type Framing =
  | { kind: 'none' }
  | { kind: 'length'; remaining: number }
  | { kind: 'chunked'; state: 'size' | 'data' | 'data-cr' | 'data-lf' | 'trailers'; remaining: number; line: Buffer | undefined };

class StoreConnection {
  readonly #socket: Socket;
  readonly #handler: StoreHandler;
  readonly #onFailure: (error: unknown) => void;
  /** Bytes read and not yet used: a head being gathered, or the next request's bytes while one is answered. */
  #pending: Buffer | undefined;
  #body: BodyReader | undefined;
  #framing: Framing = { kind: 'none' };
  /** A request is being answered: further bytes wait. */
  #busy = false;
  #keepAlive = true;
  /** The connection is closing after its answer: what still comes (an unread body) is dropped. */
  #closing = false;
  /** The request was answered before its body ended: the socket's bytesRead then, and the deadline for the rest. */
  #draining: { readBefore: number; deadline: NodeJS.Timeout } | undefined;

  constructor(socket: Socket, handler: StoreHandler, onFailure: (error: unknown) => void) {
    this.#socket = socket;
    this.#handler = handler;
    this.#onFailure = onFailure;
    socket.setTimeout(IDLE_MS);
    socket.on('timeout', () => socket.destroy());
    socket.on('error', () => socket.destroy());
    socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    socket.on('close', () => {
      clearTimeout(this.#draining?.deadline);
      this.#body?.fail(new Error('The store connection closed before the request body ended.'));
    });
  }

  #onData(chunk: Buffer): void {
    if (this.#closing) return;
    try {
      if (this.#body !== undefined && !this.#body.ended) {
        const draining = this.#draining;
        if (draining !== undefined && this.#socket.bytesRead - draining.readBefore > LINGER_BYTES) {
          this.#close();
          return;
        }
        const rest = this.#feedBody(chunk);
        if (rest !== undefined) this.#keep(rest);
        if (draining !== undefined && this.#body.ended) {
          clearTimeout(draining.deadline);
          this.#draining = undefined;
          this.#answered();
        }
        return;
      }
      this.#keep(chunk);
      if (!this.#busy) this.#nextRequest();
    } catch (error) {
      this.#reject(error);
    }
  }

  /** Holds bytes for later: a head's start, or a pipelined request (reading stops while too many wait). */
  #keep(bytes: Buffer): void {
    if (bytes.byteLength === 0) return;
    this.#pending = this.#pending === undefined ? bytes : Buffer.concat([this.#pending, bytes]);
    if (this.#busy && this.#pending.byteLength > MAX_HEAD_BYTES) this.#socket.pause();
  }

  /** Starts the request whose head is in the pending bytes, if all of it has come. */
  #nextRequest(): void {
    const pending = this.#pending;
    if (pending === undefined) return;
    const end = pending.indexOf(BLANK_LINE);
    if (end < 0) {
      if (pending.byteLength > MAX_HEAD_BYTES) throw new BadRequest('The request head is too large.', 431);
      return;
    }
    if (end + 4 > MAX_HEAD_BYTES) throw new BadRequest('The request head is too large.', 431);
    const head = pending.toString('latin1', 0, end);
    const rest = pending.subarray(end + 4);
    this.#pending = undefined;
    const { target, call, framing, keepAlive, expectsContinue } = parseHead(head);
    const length = framing.kind === 'chunked' ? undefined : framing.kind === 'length' ? framing.remaining : 0;
    this.#busy = true;
    this.#keepAlive = keepAlive;
    this.#framing = framing;
    this.#socket.setTimeout(0);
    const body = new BodyReader(this.#socket, framing.kind === 'none');
    this.#body = body;
    const response = new StoreResponse(this.#socket, keepAlive, () => this.#answered());
    if (expectsContinue && framing.kind !== 'none') this.#socket.write('HTTP/1.1 100 Continue\r\n\r\n', 'latin1');
    const leftover = framing.kind === 'none' ? rest : this.#feedBody(rest);
    if (leftover !== undefined && leftover.byteLength > 0) this.#keep(leftover);
    this.#handler(
      {
        target,
        call,
        length,
        body,
        get aborted() {
          return body.aborted;
        },
      },
      response,
    ).catch((error: unknown) => {
      this.#onFailure(error);
      this.#socket.destroy();
    });
  }

  /** Feeds bytes to the body being read; answers what follows its end, or undefined while it goes on. */
  #feedBody(chunk: Buffer): Buffer | undefined {
    const body = this.#body!;
    const framing = this.#framing;
    if (framing.kind === 'length') {
      const take = Math.min(framing.remaining, chunk.byteLength);
      framing.remaining -= take;
      if (take > 0) body.push(chunk.subarray(0, take));
      if (framing.remaining > 0) return undefined;
      body.end();
      return chunk.subarray(take);
    }
    if (framing.kind !== 'chunked') return chunk;
    let at = 0;
    while (at < chunk.byteLength) {
      if (framing.state === 'data') {
        const take = Math.min(framing.remaining, chunk.byteLength - at);
        body.push(chunk.subarray(at, at + take));
        at += take;
        framing.remaining -= take;
        if (framing.remaining === 0) framing.state = 'data-cr';
      } else if (framing.state === 'data-cr' || framing.state === 'data-lf') {
        if (chunk[at] !== (framing.state === 'data-cr' ? 13 : 10)) throw new BadRequest('A chunk of the body is not followed by CRLF.');
        at++;
        framing.state = framing.state === 'data-cr' ? 'data-lf' : 'size';
      } else {
        // A chunk-size line, or a trailer line (the empty one ends the body): gathered up to its LF.
        const lf = chunk.indexOf(10, at);
        const part = chunk.subarray(at, lf < 0 ? chunk.byteLength : lf + 1);
        const line = framing.line === undefined ? part : Buffer.concat([framing.line, part]);
        if (line.byteLength > (framing.state === 'size' ? MAX_CHUNK_LINE : MAX_HEAD_BYTES)) throw new BadRequest('A line of the chunked body is too long.');
        at += part.byteLength;
        if (lf < 0) {
          framing.line = Buffer.from(line);
          continue;
        }
        framing.line = undefined;
        if (line.byteLength < 2 || line[line.byteLength - 2] !== 13) throw new BadRequest('A line of the chunked body does not end in CRLF.');
        const text = line.toString('latin1', 0, line.byteLength - 2);
        if (framing.state === 'trailers') {
          if (text === '') {
            body.end();
            return chunk.subarray(at);
          }
          continue;
        }
        const semicolon = text.indexOf(';');
        const size = (semicolon < 0 ? text : text.slice(0, semicolon)).replace(OWS, '');
        if (!HEX.test(size)) throw new BadRequest('A chunk size of the body is malformed.');
        framing.remaining = parseInt(size, 16);
        framing.state = framing.remaining === 0 ? 'trailers' : 'data';
      }
    }
    return undefined;
  }

  /** The response has ended: the next request is read (once the body is), or the connection closed. */
  #answered(): void {
    const body = this.#body;
    if (!this.#keepAlive || body?.aborted === true) {
      this.#close();
      return;
    }
    if (body !== undefined && !body.ended) {
      // The next request starts where this body ends: the rest is read and dropped, within bounds.
      body.discard();
      this.#draining = { readBefore: this.#socket.bytesRead, deadline: setTimeout(() => this.#close(), LINGER_MS) };
      this.#draining.deadline.unref();
      this.#socket.resume();
      return;
    }
    this.#busy = false;
    this.#body = undefined;
    this.#socket.setTimeout(IDLE_MS);
    if (this.#socket.isPaused()) this.#socket.resume();
    try {
      this.#nextRequest();
    } catch (error) {
      this.#reject(error);
    }
  }

  /**
   * Closes the connection after its answer, lingering: closed with a body's bytes unread, it would
   * be reset, and workerd could lose the answer before reading it (the script then saw an internal
   * error, not the answer).
   */
  #close(): void {
    if (this.#closing) return;
    this.#closing = true;
    clearTimeout(this.#draining?.deadline);
    this.#draining = undefined;
    this.#pending = undefined;
    closeLingering(this.#socket);
  }

  #reject(error: unknown): void {
    if (!(error instanceof BadRequest)) {
      this.#onFailure(error);
      this.#socket.destroy();
      return;
    }
    this.#body?.fail(error);
    this.#pending = undefined;
    if (this.#draining !== undefined) {
      // The answer is out: closed lingering, the connection still delivers it.
      this.#close();
      return;
    }
    if (this.#busy) {
      // An answer has started or may start: only closing the connection is left.
      this.#socket.destroy();
      return;
    }
    const reason = error.status === 431 ? 'Request Header Fields Too Large' : 'Bad Request';
    this.#socket.end(`HTTP/1.1 ${error.status} ${reason}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`, 'latin1');
    this.#socket.removeAllListeners('data');
  }
}

function parseHead(head: string): { target: string; call: string | undefined; framing: Framing; keepAlive: boolean; expectsContinue: boolean } {
  const lines = head.split('\r\n');
  const requestLine = REQUEST_LINE.exec(lines[0]!);
  if (!requestLine) throw new BadRequest('The request line is malformed.');
  let keepAlive = requestLine[1] === '1';
  let call: string | undefined;
  let length: number | undefined;
  let encoding: string | undefined;
  let expectsContinue = false;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const colon = line.indexOf(':');
    if (colon <= 0) throw new BadRequest('A header line is malformed.');
    const name = line.slice(0, colon).toLowerCase();
    if (!HTTP_TOKEN.test(name)) throw new BadRequest('A header name is malformed.');
    const value = line.slice(colon + 1).replace(OWS, '');
    if (BAD_VALUE.test(value)) throw new BadRequest('A header value has a control character.');
    if (name === CALL_HEADER) {
      if (call !== undefined) throw new BadRequest('The call header is repeated.');
      call = value;
      continue;
    }
    switch (name) {
      case 'content-length':
        if (!/^\d{1,15}$/.test(value) || (length !== undefined && length !== Number(value))) throw new BadRequest('Content-Length is invalid.');
        length = Number(value);
        break;
      case 'transfer-encoding':
        if (encoding !== undefined || value.toLowerCase() !== 'chunked') throw new BadRequest('Only a chunked Transfer-Encoding is accepted.');
        encoding = 'chunked';
        break;
      case 'connection':
        if (/(?:^|,)\s*close\s*(?:,|$)/i.test(value)) keepAlive = false;
        break;
      case 'expect':
        expectsContinue = value.toLowerCase() === '100-continue';
        break;
    }
  }
  if (encoding !== undefined && length !== undefined) throw new BadRequest('A request cannot have both Content-Length and Transfer-Encoding.');
  const framing: Framing =
    encoding !== undefined
      ? { kind: 'chunked', state: 'size', remaining: 0, line: undefined }
      : length
        ? { kind: 'length', remaining: length }
        : { kind: 'none' };
  return { target: lines[0]!.split(' ')[1]!, call, framing, keepAlive, expectsContinue };
}

/** A request's body as an async iterator, reading the socket only while the handler wants more. */
class BodyReader implements AsyncIterator<Buffer> {
  readonly #socket: Socket;
  readonly #queue: Buffer[] = [];
  #waiting: { resolve: (result: IteratorResult<Buffer>) => void; reject: (error: Error) => void } | undefined;
  #ended: boolean;
  #error: Error | undefined;
  /** The handler is done with the body: what still comes is dropped, not queued. */
  #discarding = false;
  aborted = false;

  constructor(socket: Socket, empty: boolean) {
    this.#socket = socket;
    this.#ended = empty;
  }

  get ended(): boolean {
    return this.#ended && this.#error === undefined;
  }

  push(chunk: Buffer): void {
    if (this.#discarding) return;
    if (this.#waiting) {
      const waiting = this.#waiting;
      this.#waiting = undefined;
      waiting.resolve({ done: false, value: chunk });
      return;
    }
    this.#queue.push(chunk);
    // Back-pressure: nothing more is read until the handler has taken what came.
    this.#socket.pause();
  }

  /** Drops what was queued and what still comes; a read still waiting ends. */
  discard(): void {
    this.#discarding = true;
    this.#queue.length = 0;
    const waiting = this.#waiting;
    this.#waiting = undefined;
    waiting?.resolve({ done: true, value: undefined });
  }

  end(): void {
    this.#ended = true;
    if (this.#waiting && this.#queue.length === 0) {
      const waiting = this.#waiting;
      this.#waiting = undefined;
      waiting.resolve({ done: true, value: undefined });
    }
  }

  fail(error: Error): void {
    if (this.#ended) return;
    this.#error = error;
    this.aborted = true;
    this.#ended = true;
    const waiting = this.#waiting;
    this.#waiting = undefined;
    waiting?.reject(error);
  }

  next(): Promise<IteratorResult<Buffer>> {
    const chunk = this.#queue.shift();
    if (chunk !== undefined) return Promise.resolve({ done: false, value: chunk });
    if (this.#error) return Promise.reject(this.#error);
    if (this.#ended) return Promise.resolve({ done: true, value: undefined });
    this.#socket.resume();
    return new Promise((resolve, reject) => {
      this.#waiting = { resolve, reject };
    });
  }
}

/** The answer to one request: its head goes out with the first of its body (or with its end). */
export class StoreResponse implements BodySink {
  readonly #socket: Socket;
  readonly #keepAlive: boolean;
  readonly #onEnd: () => void;
  #head: string | undefined;
  #ended = false;

  constructor(socket: Socket, keepAlive: boolean, onEnd: () => void) {
    this.#socket = socket;
    this.#keepAlive = keepAlive;
    this.#onEnd = onEnd;
  }

  get destroyed(): boolean {
    return this.#socket.destroyed;
  }

  /** `headers`: name, value, name, value... (values the caller made header-safe). */
  writeHead(status: number, headers: readonly string[]): void {
    let head = `HTTP/1.1 ${status} ${status === 200 ? 'OK' : 'Error'}\r\n`;
    for (let i = 0; i < headers.length; i += 2) head += `${headers[i]!}: ${headers[i + 1]!}\r\n`;
    this.#head = `${head}${this.#keepAlive ? '' : 'connection: close\r\n'}\r\n`;
  }

  write(chunk: Uint8Array, callback?: (error?: Error | null) => void): boolean {
    const head = this.#head;
    if (head === undefined) return this.#socket.write(chunk, callback);
    this.#head = undefined;
    this.#socket.cork();
    this.#socket.write(head, 'latin1');
    const more = this.#socket.write(chunk, callback);
    this.#socket.uncork();
    return more;
  }

  /** Ends the answer, with `chunk` as its last bytes: a small one goes out in the same write as the head. */
  end(chunk?: Uint8Array): void {
    if (this.#ended) return;
    this.#ended = true;
    const head = this.#head;
    this.#head = undefined;
    if (head !== undefined && (chunk === undefined || chunk.byteLength <= 16 * 1024)) {
      const headBytes = Buffer.byteLength(head, 'latin1');
      const out = Buffer.allocUnsafe(headBytes + (chunk?.byteLength ?? 0));
      out.write(head, 0, 'latin1');
      if (chunk) out.set(chunk, headBytes);
      this.#socket.write(out);
    } else {
      this.#socket.cork();
      if (head !== undefined) this.#socket.write(head, 'latin1');
      if (chunk) this.#socket.write(chunk);
      this.#socket.uncork();
    }
    this.#onEnd();
  }

  destroy(): void {
    this.#socket.destroy();
  }

  once(event: 'drain' | 'close', listener: () => void): this {
    this.#socket.once(event, listener);
    return this;
  }

  off(event: 'drain' | 'close', listener: () => void): this {
    this.#socket.off(event, listener);
    return this;
  }
}
