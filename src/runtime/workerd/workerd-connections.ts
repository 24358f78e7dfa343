/**
 * Kept-alive HTTP/1.1 connections from the edge to one workerd process, over its Unix socket: one
 * request at a time per connection, as many connections as requests in flight, no timeouts of
 * their own but an idle one (a script may take as long as its limits allow). Replaces undici's
 * pool for this one hop because of where answers are read into: every read goes into a buffer
 * taken from a pool shared by all connections and comes back to it once the client's socket has
 * written the bytes (the handler's release), where undici reads into fresh memory each time. At
 * 1 MiB answers those fresh buffers drove V8 into a full garbage collection every few hundred
 * milliseconds, each marking the whole server's heap.
 *
 * workerd closes a connection idle for 15 s (its HTTP server's header timeout), without a word: a
 * request written onto a connection at that moment is lost. So a kept-alive connection is closed
 * here first, after IDLE_MS (well below workerd's), and a request that fails on a reused
 * connection before any byte of its answer came is sent once more on a fresh one, when that is
 * safe: its process still runs (one that died may have run it), and it has no body or what was read
 * of its body is still held (up to 64 KiB; it is sent again from its start).
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
/** How long workerd keeps an idle connection open (measured with the pinned workerd: 15 s). */
export const WORKERD_IDLE_CLOSE_MS = 15_000;
/** A kept-alive connection unused this long is closed: well before workerd would close it. */
export const IDLE_MS = 10_000;

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

export interface ConnectionsOptions {
  /** A kept-alive connection unused this long is closed (default IDLE_MS; tests race it against a server's). */
  idleMs?: number;
  /**
   * Whether the process is still running: a request whose connection failed is sent again only
   * then (a process that died may have run it). Asked RESEND_AFTER_MS after the failure, by when
   * a process's death is known.
   */
  alive?: () => boolean;
}

/** How long a request whose reused connection failed waits before it is sent again (or fails, its process gone). */
const RESEND_AFTER_MS = 100;

export class WorkerdConnections {
  readonly #socketPath: string;
  readonly #idleMs: number;
  readonly #alive: () => boolean;
  readonly #idle: Connection[] = [];
  readonly #all = new Set<Connection>();
  #destroyed = false;
  /** Requests sent again on a fresh connection after their reused one failed before answering. */
  retried = 0;

  constructor(socketPath: string, options: ConnectionsOptions = {}) {
    this.#socketPath = socketPath;
    this.#idleMs = options.idleMs ?? IDLE_MS;
    this.#alive = options.alive ?? (() => true);
  }

  get destroyed(): boolean {
    return this.#destroyed;
  }

  dispatch(options: DispatchOptions, handler: ResponseHandler): void {
    if (this.#destroyed) {
      handler.onError(Object.assign(new Error('The connections to workerd are closed.'), { code: 'ECONNREFUSED' }));
      return;
    }
    this.#send(this.#idle.pop(), options, handler);
  }

  /** Sends on `connection` (a kept one), or on a new one when undefined. */
  #send(kept: Connection | undefined, options: DispatchOptions, handler: ResponseHandler, sent?: SentBody): void {
    let connection = kept;
    if (connection === undefined) {
      connection = new Connection(
        this.#socketPath,
        this.#idleMs,
        (done) => this.#released(done),
        (retry) => {
          if (this.#destroyed) return false;
          setTimeout(() => {
            if (this.#destroyed || !this.#alive()) {
              // What the client still sends is read and dropped.
              retry.options.body?.resume();
              retry.handler.onError(retry.error);
              return;
            }
            this.retried++;
            this.#send(undefined, retry.options, retry.handler, retry.sent);
          }, RESEND_AFTER_MS);
          return true;
        },
      );
      this.#all.add(connection);
    }
    connection.send(options, handler, sent);
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

/** A request to send again, on a fresh connection; false when it cannot be (the connections are closed). */
type Resend = (request: { options: DispatchOptions; handler: ResponseHandler; sent: SentBody; error: Error }) => boolean;

/** What was read of a request's body while it was sent: kept (up to REPLAY_BYTES) to send it again. */
interface SentBody {
  chunks: Buffer[];
  bytes: number;
  /** The body ended: nothing more is to be read from it. */
  ended: boolean;
}

/** A body read past this much cannot be sent again (its start is no longer held). */
const REPLAY_BYTES = 64 * 1024;

class Connection {
  readonly #socket: Socket;
  readonly #parser: ResponseParser;
  readonly #idleMs: number;
  readonly #onIdle: (connection: Connection) => void;
  readonly #resend: Resend;
  #handler: ResponseHandler | undefined;
  /** The request being sent, while it could still be sent again elsewhere. */
  #options: DispatchOptions | undefined;
  /** Requests this connection carried before the current one. */
  #carried = 0;
  /** Bytes of the current request's answer have arrived (it can no longer be sent again). */
  #answering = false;
  /** What was read of the current request's body, while all of it is held; undefined past REPLAY_BYTES. */
  #sent: SentBody | undefined;
  /** The buffer the socket reads into next (the one its read callback is handed). */
  #reading: ReadBuffer | undefined;
  /** The request's body is still being sent (the connection cannot be reused before it is). */
  #sending = false;
  #answered = false;
  #reusable = false;
  /** Stops sending the request's body (its listeners off), while it is being sent. */
  #stopSending: (() => void) | undefined;
  /** Takes this connection's listeners off the request's body, leaving the body as it is. */
  #detachBody: (() => void) | undefined;
  closed = false;

  constructor(socketPath: string, idleMs: number, onIdle: (connection: Connection) => void, resend: Resend) {
    this.#idleMs = idleMs;
    this.#onIdle = onIdle;
    this.#resend = resend;
    this.#parser = new ResponseParser({
      head: (status, statusText, headers) => {
        const handler = this.#handler;
        // Resuming is for this request only: the connection may be carrying another by the time it is called.
        handler?.onHeaders(
          status,
          headers,
          () => {
            if (this.#handler === handler) this.#socket.resume();
          },
          statusText,
        );
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

  /** Sends a request; `resumed`: what was read of its body on a connection that failed under it, sent first. */
  send(options: DispatchOptions, handler: ResponseHandler, resumed?: SentBody): void {
    this.#handler = handler;
    this.#options = options;
    this.#answering = false;
    this.#sent = { chunks: [], bytes: 0, ended: false };
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
    const socket = this.#socket;
    // The head waits for the body's first bytes, to go out with them in one write: node:http has
    // the body of a small request already (it came in the same read as its head) and hands it over
    // on the next tick, which the 'data' listener below schedules before the uncork. Sent apart, the
    // head cost a write here, and workerd a wake-up and a read of its own.
    socket.cork();
    socket.write(`${head}${chunked ? 'transfer-encoding: chunked\r\n' : ''}\r\n`, 'latin1');
    this.#sending = true;
    const write = (chunk: Buffer): boolean => {
      const sent = this.#sent;
      if (sent !== undefined) {
        sent.chunks.push(chunk);
        sent.bytes += chunk.byteLength;
        if (sent.bytes > REPLAY_BYTES) this.#sent = undefined;
      }
      if (chunked) socket.write(`${chunk.byteLength.toString(16)}\r\n`, 'latin1');
      const more = socket.write(chunk);
      if (chunked) socket.write('\r\n', 'latin1');
      return more;
    };
    const finish = () => {
      if (this.#sent !== undefined) this.#sent.ended = true;
      if (chunked) socket.write('0\r\n\r\n', 'latin1');
      this.#sending = false;
      this.#afterRead();
    };
    if (resumed !== undefined) {
      for (const chunk of resumed.chunks) write(chunk);
      if (resumed.ended) {
        finish();
        socket.uncork();
        return;
      }
    }
    const onData = (chunk: Buffer) => {
      if (chunk.byteLength === 0) return;
      if (!write(chunk)) {
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
      this.#detachBody = undefined;
    };
    const onEnd = () => {
      cleanup();
      finish();
    };
    const onFailed = () => {
      cleanup();
      this.#abort(new Error('The client went away while sending its request body.'));
    };
    const onClose = () => {
      if (!body.readableEnded) onFailed();
    };
    body.on('data', onData);
    // Paused by a connection that failed under it (then sent again here).
    if (resumed !== undefined) body.resume();
    process.nextTick(() => socket.uncork());
    body.once('end', onEnd);
    body.once('error', onFailed);
    body.once('aborted', onFailed);
    body.once('close', onClose);
    this.#detachBody = cleanup;
    this.#stopSending = () => {
      cleanup();
      // What the client still sends is read and dropped, as node:http does once the response is done.
      body.resume();
    };
  }

  #onRead(length: number): boolean {
    const buffer = this.#reading!;
    if (length > 0 && !this.#answering) {
      this.#answering = true;
      this.#sent = undefined;
    }
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
    this.#options = undefined;
    this.#sent = undefined;
    this.#carried++;
    handler.onComplete();
    if (this.#reusable && !this.closed) {
      if (this.#socket.isPaused()) this.#socket.resume();
      this.#socket.setTimeout(this.#idleMs);
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
    this.#options = undefined;
    this.#fail(reason);
    this.#socket.destroy();
  }

  /**
   * The request failed with the connection: sent again on a fresh connection when this one had
   * carried a request before (workerd may have closed it as idle just as the request went out),
   * nothing of the answer came, and nothing of its body was read; else the handler hears of it.
   */
  #fail(error: Error): void {
    const handler = this.#handler;
    const options = this.#options;
    this.#handler = undefined;
    this.#options = undefined;
    const sent = this.#sent;
    this.#sent = undefined;
    if (handler !== undefined && options !== undefined && this.#carried > 0 && !this.#answering && sent !== undefined) {
      // The rest of the body is left paused for the next connection to read.
      options.body?.pause();
      this.#detachBody?.();
      this.#sending = false;
      if (this.#resend({ options, handler, sent, error })) return;
    }
    this.#stopBody();
    handler?.onError(error);
  }

  destroy(error: Error): void {
    if (this.#handler) this.#fail(error);
    this.#socket.destroy();
  }
}
