/**
 * Kept-alive HTTP/1.1 connections from the edge to one workerd process, over its Unix socket: one
 * request at a time per connection, as many connections as requests in flight, no timeouts of
 * their own but an idle one (a script may take as long as its limits allow). Replaces undici's
 * pool for this one hop because of where answers are read into: every read goes into a buffer
 * taken from a pool shared by all connections and comes back to it once the client's socket has
 * written the bytes (the handler's release), where undici reads into fresh memory each time. At
 * 1 MiB answers those fresh buffers drove V8 into a full garbage collection every few hundred
 * milliseconds, each marking the whole server's heap.
 */
import { connect, type Socket } from 'node:net';
import type { Readable } from 'node:stream';
import { ResponseParser } from './http1-response-parser.ts';

export interface DispatchOptions {
  method: string;
  /** The request target as the client sent it (validated by node:http). */
  path: string;
  /** Name, value, name, value...: hop-by-hop headers already left out. */
  headers: readonly string[];
  /** The request body (sent as it comes; chunked unless `headers` has Content-Length), or null. */
  body: Readable | null;
}

export interface ResponseHandler {
  /** Called at once with a function that aborts the request (then onError gets `reason`). */
  onConnect(abort: (reason?: Error) => void): void;
  /** The answer's head; headers as latin1 strings. `resume` restarts reading after onData answered false. */
  onHeaders(status: number, headers: string[], resume: () => void, statusText: string): void;
  /** A part of the body, valid until `release` is called (once, when its bytes are no longer needed). False pauses reading. */
  onData(chunk: Uint8Array, release: () => void): boolean;
  onComplete(): void;
  /** The request failed (never after onComplete). `code` is the socket's error code when it has one (ECONNREFUSED...). */
  onError(error: NodeJS.ErrnoException): void;
}

/** Each read's size, and how many free read buffers are kept (4 MiB). */
const READ_BYTES = 64 * 1024;
const POOL_LIMIT = 64;
/** A kept-alive connection unused this long is closed. */
const IDLE_MS = 60_000;

interface ReadBuffer {
  bytes: Buffer;
  /** Holders: the read being parsed, and each body view not yet released. */
  refs: number;
}

const free: ReadBuffer[] = [];

function takeBuffer(): ReadBuffer {
  const buffer = free.pop() ?? { bytes: Buffer.allocUnsafeSlow(READ_BYTES), refs: 0 };
  buffer.refs = 1;
  return buffer;
}

function unref(buffer: ReadBuffer): void {
  if (--buffer.refs === 0 && free.length < POOL_LIMIT) free.push(buffer);
}

export class WorkerdConnections {
  readonly #socketPath: string;
  readonly #idle: Connection[] = [];
  readonly #all = new Set<Connection>();
  #destroyed = false;

  constructor(socketPath: string) {
    this.#socketPath = socketPath;
  }

  get destroyed(): boolean {
    return this.#destroyed;
  }

  dispatch(options: DispatchOptions, handler: ResponseHandler): void {
    if (this.#destroyed) {
      handler.onError(Object.assign(new Error('The connections to workerd are closed.'), { code: 'ECONNREFUSED' }));
      return;
    }
    let connection = this.#idle.pop();
    if (connection === undefined) {
      connection = new Connection(this.#socketPath, (done) => this.#released(done));
      this.#all.add(connection);
    }
    connection.send(options, handler);
  }

  /** Closes every connection; requests still on them fail (onError). */
  async destroy(): Promise<void> {
    this.#destroyed = true;
    this.#idle.length = 0;
    for (const connection of this.#all) connection.destroy(new Error('The connections to workerd were closed.'));
    this.#all.clear();
  }

  /** A connection finished its request: kept for the next one, or forgotten when it closed. */
  #released(connection: Connection): void {
    if (connection.closed || this.#destroyed) {
      this.#all.delete(connection);
      const at = this.#idle.indexOf(connection);
      if (at >= 0) this.#idle.splice(at, 1);
      return;
    }
    this.#idle.push(connection);
  }
}

class Connection {
  readonly #socket: Socket;
  readonly #parser: ResponseParser;
  readonly #onIdle: (connection: Connection) => void;
  #handler: ResponseHandler | undefined;
  /** The buffer the socket reads into next (the one its read callback is handed). */
  #reading: ReadBuffer | undefined;
  /** The request's body is still being sent (the connection cannot be reused before it is). */
  #sending = false;
  #answered = false;
  #reusable = false;
  /** Stops sending the request's body (its listeners off), while it is being sent. */
  #stopSending: (() => void) | undefined;
  closed = false;

  constructor(socketPath: string, onIdle: (connection: Connection) => void) {
    this.#onIdle = onIdle;
    this.#parser = new ResponseParser({
      head: (status, statusText, headers) => {
        const handler = this.#handler;
        // Resuming is for this request only: the connection may be carrying another by the time it is called.
        handler?.onHeaders(status, headers, () => {
          if (this.#handler === handler) this.#socket.resume();
        }, statusText);
      },
      body: (chunk) => {
        const buffer = this.#reading!;
        buffer.refs++;
        let released = false;
        const release = () => {
          if (released) return;
          released = true;
          unref(buffer);
        };
        if (this.#handler === undefined) release();
        else if (!this.#handler.onData(chunk, release)) this.#socket.pause();
      },
      end: (reusable) => {
        this.#answered = true;
        this.#reusable = reusable;
      },
    });
    this.#socket = connect({
      path: socketPath,
      onread: {
        buffer: () => {
          this.#reading = takeBuffer();
          return this.#reading.bytes;
        },
        callback: (length: number) => this.#onRead(length),
      },
    });
    this.#socket.on('error', (error) => this.destroy(error));
    this.#socket.on('timeout', () => this.destroy(new Error('The connection to workerd was idle too long.')));
    this.#socket.on('close', () => {
      this.closed = true;
      // The buffer handed to the socket for a read that never came.
      if (this.#reading) unref(this.#reading);
      this.#reading = undefined;
      if (this.#handler) this.#fail(Object.assign(new Error('workerd closed the connection before answering.'), { code: 'UND_ERR_SOCKET' }));
      this.#onIdle(this);
    });
    this.#socket.on('end', () => {
      try {
        this.#parser.finish();
        this.#afterRead();
      } catch (error) {
        this.destroy(error as Error);
      }
    });
  }

  send(options: DispatchOptions, handler: ResponseHandler): void {
    this.#handler = handler;
    this.#answered = false;
    this.#reusable = false;
    this.#socket.setTimeout(0);
    handler.onConnect((reason) => this.#abort(reason ?? new Error('The request was aborted.')));
    if (this.#handler !== handler) return;
    this.#parser.expect(options.method);
    let head = `${options.method} ${options.path} HTTP/1.1\r\n`;
    let hasHost = false;
    let hasLength = false;
    const headers = options.headers;
    for (let i = 0; i < headers.length; i += 2) {
      const name = headers[i]!;
      if (name.length === 4 && name.toLowerCase() === 'host') hasHost = true;
      else if (name.length === 14 && name.toLowerCase() === 'content-length') hasLength = true;
      head += `${name}: ${headers[i + 1]!}\r\n`;
    }
    if (!hasHost) head += 'host: workerd.internal\r\n';
    const body = options.body;
    if (body === null) {
      this.#socket.write(`${head}\r\n`, 'latin1');
      return;
    }
    const chunked = !hasLength;
    this.#socket.write(`${head}${chunked ? 'transfer-encoding: chunked\r\n' : ''}\r\n`, 'latin1');
    this.#sending = true;
    const socket = this.#socket;
    const onData = (chunk: Buffer) => {
      if (chunk.byteLength === 0) return;
      if (chunked) socket.write(`${chunk.byteLength.toString(16)}\r\n`, 'latin1');
      const more = socket.write(chunk);
      if (chunked) socket.write('\r\n', 'latin1');
      if (!more) {
        body.pause();
        socket.once('drain', () => body.resume());
      }
    };
    const cleanup = () => {
      body.off('data', onData);
      body.off('end', onEnd);
      body.off('error', onFailed);
      body.off('aborted', onFailed);
      body.off('close', onClose);
      this.#stopSending = undefined;
    };
    const onEnd = () => {
      cleanup();
      if (chunked) socket.write('0\r\n\r\n', 'latin1');
      this.#sending = false;
      this.#afterRead();
    };
    const onFailed = () => {
      cleanup();
      this.#abort(new Error('The client went away while sending its request body.'));
    };
    const onClose = () => {
      if (!body.readableEnded) onFailed();
    };
    body.on('data', onData);
    body.once('end', onEnd);
    body.once('error', onFailed);
    body.once('aborted', onFailed);
    body.once('close', onClose);
    this.#stopSending = () => {
      cleanup();
      // What the client still sends is read and dropped, as node:http does once the response is done.
      body.resume();
    };
  }

  #onRead(length: number): boolean {
    const buffer = this.#reading!;
    try {
      this.#parser.feed(buffer.bytes.subarray(0, length));
    } catch (error) {
      unref(buffer);
      this.destroy(error as Error);
      return false;
    }
    unref(buffer);
    this.#afterRead();
    return !this.#socket.isPaused();
  }

  /** Once the answer is complete: the handler is told, and the connection kept or closed. */
  #afterRead(): void {
    if (!this.#answered || this.#handler === undefined) return;
    const handler = this.#handler;
    if (this.#sending) {
      // The answer came before the request's body was all sent: the connection cannot carry another request.
      this.#stopBody();
      this.#reusable = false;
    }
    this.#handler = undefined;
    handler.onComplete();
    if (this.#reusable && !this.closed) {
      if (this.#socket.isPaused()) this.#socket.resume();
      this.#socket.setTimeout(IDLE_MS);
      this.#onIdle(this);
    } else {
      this.#socket.destroy();
    }
  }

  #stopBody(): void {
    this.#sending = false;
    this.#stopSending?.();
  }

  #abort(reason: Error): void {
    if (this.#handler === undefined) return;
    this.#fail(reason);
    this.#socket.destroy();
  }

  #fail(error: Error): void {
    const handler = this.#handler;
    this.#handler = undefined;
    this.#stopBody();
    handler?.onError(error);
  }

  destroy(error: Error): void {
    if (this.#handler) this.#fail(error);
    this.#socket.destroy();
  }
}
