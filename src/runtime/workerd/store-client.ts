/**
 * A BindingEngine whose calls go to the server's store service (store-service.ts) over HTTP: the
 * engine a bucket binding inside workerd uses. Failures come back as the StoreErrors the engine
 * threw, so the binding turns them into exactly the errors a script sees in-process. Bodies stream
 * both ways; a get's object body is the service's response body itself, so that inside workerd it
 * streams natively into the script's response, and a put's stream is the request body itself.
 * Plain Web APIs only, and no ReadableStream constructor (workerd has none before compatibility
 * date 2022-11-30): it runs inside workerd, in the script's isolate.
 */
import type { BindingEngine } from '../../store/binding/binding-engine.ts';
import { ScriptStreamFailure, unknownLengthError } from '../../store/binding/binding-errors.ts';
import { StoreError, type StoreErrorCode } from '../../store/engine/errors.ts';
import type { BodyInput, GetResult, ObjectBody } from '../../store/engine/types.ts';
import {
  ANSWER_HEADER,
  CALL_HEADER,
  concat,
  decodeHeader,
  encodeFrame,
  encodeHeader,
  NATIVE_CALL_HEADER_LIMIT,
  readFrame,
  type WireRequest,
  type WireResponse,
} from './store-wire.ts';

/**
 * Sends one request to the store service (a workerd service binding's fetch, or a fetch bound to
 * its socket). Given the URL and init rather than a Request: inside workerd the binding's fetch
 * makes its request from them once, where a Request built first would be made twice.
 */
export type StoreFetch = (url: string, init: RequestInit) => Promise<Response>;

const SERVICE_URL = 'http://store.internal/';

interface Answer {
  value: unknown;
  /** The rest of the response body: a get's object bytes, or nothing. */
  body: ReadableStream<Uint8Array> | null;
  bodyLength: number | undefined;
}

export function createStoreClient(send: StoreFetch): BindingEngine {
  async function call(op: WireRequest['op'], args: unknown[], body?: BodyInput): Promise<Answer> {
    // JSON would turn a trailing `undefined` (options not given) into null, which is not the same.
    while (args.length > 0 && args[args.length - 1] === undefined) args.pop();
    const request: WireRequest = { op, args };
    if (body instanceof Uint8Array) request.body = { kind: 'bytes', length: body.byteLength };
    else if (body?.native) request.body = { kind: 'native' };
    else if (body !== undefined) request.body = body.length === undefined ? { kind: 'stream' } : { kind: 'stream', length: body.length };
    // The script's own stream is the whole body, sent by the runtime with a Content-Length when
    // it knows the stream's length: its call always goes in the header, however long.
    const native = body instanceof Uint8Array ? undefined : body?.native;
    const header = encodeHeader(request, native ? NATIVE_CALL_HEADER_LIMIT : undefined);
    if (native && header === undefined) throw new Error(`A store call of ${JSON.stringify(request).length} characters is over the limit.`);
    // A call too large for the header goes as a frame in front of the body.
    const frame = header === undefined ? encodeFrame(request) : undefined;
    let failure: { reason: unknown } | undefined;
    let payload: ReadableStream<Uint8Array> | Uint8Array | undefined;
    if (body === undefined) payload = frame;
    else if (body instanceof Uint8Array) payload = frame ? concat(frame, body) : body;
    else if (native) payload = native;
    else {
      const iterator = body.stream[Symbol.asyncIterator]();
      let frameSent = frame === undefined;
      payload = new ReadableStream<Uint8Array>(
        {
          async pull(controller) {
            if (!frameSent) {
              frameSent = true;
              controller.enqueue(frame!);
              return;
            }
            try {
              const next = await iterator.next();
              if (next.done) controller.close();
              else controller.enqueue(next.value);
            } catch (error) {
              // The script's own stream failed: the binding rethrows this, not the failed fetch.
              failure = { reason: error };
              controller.error(error);
            }
          },
          async cancel() {
            await iterator.return?.();
          },
        },
        { highWaterMark: 0 },
      );
    }
    let response: Response;
    try {
      response = await send(SERVICE_URL, {
        method: 'POST',
        ...(header === undefined ? {} : { headers: { [CALL_HEADER]: header } }),
        body: payload ?? null,
        duplex: 'half',
      } as RequestInit);
    } catch (error) {
      if (failure) throw failure.reason;
      throw error;
    }
    if (failure) throw failure.reason;
    const { answer, rest } = await readAnswer(response);
    if ('storeError' in answer) {
      await rest?.cancel().catch(() => undefined);
      const { code, message, details } = answer.storeError;
      throw new StoreError(code as StoreErrorCode, { message, ...(details ? { details } : {}) });
    }
    if ('internal' in answer) {
      await rest?.cancel().catch(() => undefined);
      throw new Error(answer.internal);
    }
    if ('lengthRequired' in answer) throw new ScriptStreamFailure(unknownLengthError());
    return { value: answer.ok, body: rest, bodyLength: answer.body?.length };
  }

  async function plain<T>(op: WireRequest['op'], args: unknown[], body?: BodyInput): Promise<T> {
    const { value, body: rest } = await call(op, args, body);
    await rest?.cancel().catch(() => undefined);
    return value as T;
  }

  return {
    head: (bucket, key) => plain('head', [bucket, key]),
    async get(bucket, key, options) {
      const { value, body, bodyLength } = await call('get', [bucket, key, options]);
      const result = value as GetResult | null;
      if (result === null || bodyLength === undefined) {
        await body?.cancel().catch(() => undefined);
        return result;
      }
      return { ...result, body: remoteBody(body ?? emptyStream(), bodyLength) };
    },
    put: (bucket, key, body, options) => plain('put', [bucket, key, options], body),
    delete: (bucket, keys) => plain('delete', [bucket, keys]),
    list: (bucket, options) => plain('list', [bucket, options]),
    createMultipartUpload: (bucket, key, options) => plain('createMultipartUpload', [bucket, key, options]),
    uploadPart: (bucket, key, uploadId, partNumber, body, options) => plain('uploadPart', [bucket, key, uploadId, partNumber, options], body),
    completeMultipartUpload: (bucket, key, uploadId, parts, options) => plain('completeMultipartUpload', [bucket, key, uploadId, parts, options]),
    abortMultipartUpload: (bucket, key, uploadId) => plain('abortMultipartUpload', [bucket, key, uploadId]),
  };
}

/**
 * The answer's JSON, from its header (the body, if any, is then all object bytes, as it came) or
 * from a frame at the start of the body (the object bytes follow it).
 */
async function readAnswer(response: Response): Promise<{ answer: WireResponse; rest: ReadableStream<Uint8Array> | null }> {
  const header = response.headers.get(ANSWER_HEADER);
  if (header !== null) {
    const answer = decodeHeader(header) as WireResponse;
    const hasBody = 'ok' in answer && answer.body !== undefined && answer.body.length > 0;
    if (hasBody) return { answer, rest: response.body };
    // No object body to come. An empty one (the service's answers say `content-length: 0`) is
    // over as it arrives and leaves the connection free: it is not even looked at (a stream made
    // and cancelled on every call). Anything else is cancelled.
    if (response.headers.get('content-length') !== '0') void response.body?.cancel().catch(() => undefined);
    return { answer, rest: null };
  }
  if (response.body === null) throw new Error(`The store service answered ${response.status} without an answer.`);
  const reader = response.body.getReader();
  const { value, leftover } = await readFrame(() => reader.read());
  const answer = value as WireResponse;
  if (!('ok' in answer) || answer.body === undefined || answer.body.length === 0) {
    void reader.cancel().catch(() => undefined);
    return { answer, rest: null };
  }
  return { answer, rest: afterFrame(reader, leftover) };
}

/**
 * The bytes after a frame: what was read with it, then the rest of the reader, written through an
 * identity TransformStream. Not a ReadableStream of our own: workerd refuses to construct one
 * before compatibility date 2022-11-30, while a TransformStream (then an IdentityTransformStream,
 * which takes bytes) it has on every date.
 */
function afterFrame(reader: ReadableStreamDefaultReader<Uint8Array>, leftover: Uint8Array): ReadableStream<Uint8Array> {
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const writer = writable.getWriter();
  void (async () => {
    try {
      if (leftover.byteLength > 0) await writer.write(leftover);
      for (;;) {
        const next = await reader.read();
        if (next.done) break;
        await writer.write(next.value);
      }
      await writer.close();
    } catch (error) {
      // The response failed, or the reader of `readable` cancelled it (a write then rejects): both ends stop.
      await reader.cancel(error).catch(() => undefined);
      await writer.abort(error).catch(() => undefined);
    }
  })();
  return readable;
}

/** An empty body, as the runtime makes one (see afterFrame for why not a ReadableStream of our own). */
function emptyStream(): ReadableStream<Uint8Array> {
  return new Response(new Uint8Array(0)).body!;
}

/** An object body that is the rest of the service's response, as a web stream or chunk by chunk. */
function remoteBody(stream: ReadableStream<Uint8Array>, length: number): ObjectBody {
  return {
    length,
    segments: [],
    webStream: () => stream,
    async *stream() {
      const reader = stream.getReader();
      try {
        for (;;) {
          const next = await reader.read();
          if (next.done) return;
          yield next.value;
        }
      } finally {
        await reader.cancel().catch(() => undefined);
      }
    },
    discard() {
      void stream.cancel().catch(() => undefined);
    },
  };
}
