/**
 * One HTTP request handed to a script worker, on the server thread: sends the request and streams
 * its body (paused while the script falls behind), then writes whatever form the response comes
 * in (whole, streamed, or as store segments) with as little copying as node:http allows.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../core/log.ts';
import { answerScriptFailure, SCRIPT_FAILURES, type ScriptFailure } from './errors.ts';
import { copyToBuffer, FLOW, FromWorker, ToWorker } from './protocol.ts';
import { writeSegments, type BlobSource } from '../store/segment-writer.ts';
import type { Exchange, ExchangeMessage, WorkerSlot } from './worker-slot.ts';

export interface ExchangeContext {
  logger: Logger;
  scriptName: string;
  /** Where store blobs are read from, for responses that are untouched store bodies. */
  blobs: BlobSource | undefined;
}

// Listeners are shared functions that find their exchange on the emitter: a closure per request
// would cost an allocation (and, under tsx, a defineProperty for its name) on the hot path.
const EXCHANGE = Symbol('exchange');
type Carrier = { [EXCHANGE]?: HttpExchange };

function onRequestData(this: IncomingMessage, chunk: Buffer): void {
  (this as Carrier)[EXCHANGE]?.forwardData(chunk);
}

function onRequestEnd(this: IncomingMessage): void {
  (this as Carrier)[EXCHANGE]?.forwardEnd();
}

function onResponseClose(this: ServerResponse): void {
  (this as Carrier)[EXCHANGE]?.closed();
}

export class HttpExchange implements Exchange {
  dispatchedAt = 0;
  readonly #req: IncomingMessage;
  readonly #res: ServerResponse;
  readonly #context: ExchangeContext;
  #slot: WorkerSlot | undefined;
  #id = 0;
  /** The worker is done with the request (or it was failed). */
  #done = false;
  #forwarding = false;
  #bodySent = 0;
  #bodyAcked = 0;
  #written = 0;
  #writtenAcked = 0;
  #draining = false;

  constructor(req: IncomingMessage, res: ServerResponse, context: ExchangeContext) {
    this.#req = req;
    this.#res = res;
    this.#context = context;
  }

  start(slot: WorkerSlot, id: number): void {
    this.#slot = slot;
    this.#id = id;
    const req = this.#req;
    const method = req.method ?? 'GET';
    const raw = req.rawHeaders;
    let host: string | undefined;
    let hasBody = false;
    for (let i = 0; i < raw.length; i += 2) {
      const name = raw[i]!;
      // Length first: most headers are ruled out without lower-casing.
      if (name.length === 4 && name.toLowerCase() === 'host') host = raw[i + 1];
      else if (name.length === 14 && name.toLowerCase() === 'content-length') hasBody = raw[i + 1] !== '0';
      else if (name.length === 17 && name.toLowerCase() === 'transfer-encoding') hasBody = true;
    }
    if (method === 'GET' || method === 'HEAD') hasBody = false;
    const target = req.url ?? '/';
    const url = target.startsWith('/') ? `http://${host ?? `${req.socket.localAddress}:${req.socket.localPort}`}${target}` : target;
    slot.post({ t: ToWorker.Request, id, method, url, headers: raw, hasBody });
    if (hasBody) {
      this.#forwarding = true;
      (req as Carrier)[EXCHANGE] = this;
      req.on('data', onRequestData);
      req.on('end', onRequestEnd);
    }
    (this.#res as Carrier)[EXCHANGE] = this;
    this.#res.on('close', onResponseClose);
  }

  receive(message: ExchangeMessage): void {
    const res = this.#res;
    switch (message.t) {
      case FromWorker.Response: {
        this.#finish();
        const { body, headers } = message;
        if (body === null) {
          res.writeHead(message.status, headers);
          res.end();
        } else {
          headers.push('content-length', String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength));
          res.writeHead(message.status, headers);
          res.end(typeof body === 'string' ? body : Buffer.from(body));
        }
        return;
      }
      case FromWorker.Head:
        res.writeHead(message.status, message.headers);
        res.flushHeaders();
        return;
      case FromWorker.Chunk:
        this.#writeChunk(message.chunk);
        return;
      case FromWorker.End:
        this.#finish();
        res.end();
        return;
      case FromWorker.Segments:
        this.#finish();
        message.headers.push('content-length', String(message.length));
        res.writeHead(message.status, message.headers);
        void this.#sendSegments(message.segments);
        return;
      case FromWorker.Error:
        // After the head, a failing body can only be cut short: the client sees a truncated response.
        this.#context.logger.error({
          script: this.#context.scriptName, error: message.error.message, stack: message.error.stack,
          answer: res.headersSent ? 'connection closed' : SCRIPT_FAILURES.exception.status, passThrough: message.passThrough || undefined,
        }, 'Script threw an exception.');
        this.fail('exception');
        return;
      case FromWorker.BodyAck:
        this.#bodyAcked = message.bytes;
        if (this.#req.isPaused() && this.#bodySent - this.#bodyAcked < FLOW.windowBytes) this.#req.resume();
        return;
    }
  }

  fail(failure: ScriptFailure): void {
    this.#finish();
    answerScriptFailure(this.#res, failure);
  }

  /** The worker holds nothing more of the request: stop forwarding its body, drop the rest of it. */
  #finish(): void {
    if (this.#done) return;
    this.#done = true;
    if (this.#forwarding) {
      this.#forwarding = false;
      this.#req.off('data', onRequestData);
      this.#req.off('end', onRequestEnd);
      this.#req.resume();
    }
  }

  /** A chunk of the request body: on to the worker, pausing the socket while the script lags. */
  forwardData(chunk: Buffer): void {
    const buffer = copyToBuffer(chunk);
    this.#slot!.post({ t: ToWorker.BodyChunk, id: this.#id, chunk: buffer }, [buffer]);
    this.#bodySent += buffer.byteLength;
    if (this.#bodySent - this.#bodyAcked >= FLOW.windowBytes) this.#req.pause();
  }

  forwardEnd(): void {
    this.#forwarding = false;
    this.#slot!.post({ t: ToWorker.BodyEnd, id: this.#id });
  }

  /** The response finished, or the client went away first: then the script is told. */
  closed(): void {
    if (this.#done) return;
    this.#finish();
    this.#slot!.abort(this.#id);
  }

  #writeChunk(chunk: ArrayBuffer): void {
    const res = this.#res;
    this.#written += chunk.byteLength;
    if (!res.write(Buffer.from(chunk))) {
      if (!this.#draining) {
        this.#draining = true;
        res.once('drain', () => {
          this.#draining = false;
          this.#ackWritten();
        });
      }
    } else if (!this.#draining && this.#written - this.#writtenAcked >= FLOW.ackEveryBytes) {
      this.#ackWritten();
    }
  }

  #ackWritten(): void {
    this.#writtenAcked = this.#written;
    if (this.#slot!.alive) this.#slot!.post({ t: ToWorker.ResponseAck, id: this.#id, bytes: this.#written });
  }

  async #sendSegments(segments: Parameters<typeof writeSegments>[1]): Promise<void> {
    const res = this.#res;
    try {
      if (this.#req.method !== 'HEAD' && segments.length > 0) {
        const blobs = this.#context.blobs;
        if (blobs === undefined) throw new Error('A store body came back, but this host has no store.');
        await writeSegments(res, segments, blobs);
      }
      res.end();
    } catch (error) {
      // A client that hangs up mid-body is routine; a blob that cannot be read is not.
      const level = res.destroyed ? 'debug' : 'error';
      this.#context.logger[level]({ script: this.#context.scriptName, error: (error as Error).message }, 'Sending a store body failed; the connection was closed.');
      res.destroy();
    }
  }
}
