/**
 * A BindingEngine whose calls go to the server's store service (store-service.ts) over HTTP: the
 * engine a bucket binding inside workerd uses. Failures come back as the StoreErrors the engine
 * threw, so the binding turns them into exactly the errors a script sees in-process. Bodies stream
 * both ways. Plain Web APIs only: it runs inside workerd (and in tests, in Node).
 */
import type { BindingEngine } from '../../store/binding/binding-engine.ts';
import { StoreError, type StoreErrorCode } from '../../store/engine/errors.ts';
import type { BodyInput, GetResult, ObjectBody } from '../../store/engine/types.ts';
import { encodeFrame, readFrame, type WireRequest, type WireResponse } from './store-wire.ts';

/** Sends one request to the store service (a workerd service binding's fetch, or a fetch bound to its socket). */
export type StoreFetch = (request: Request) => Promise<Response>;

const SERVICE_URL = 'http://store.internal/';

export function createStoreClient(send: StoreFetch): BindingEngine {
  async function call(op: WireRequest['op'], args: unknown[], body?: BodyInput): Promise<{ value: unknown; response: ReadableStreamDefaultReader<Uint8Array>; leftover: Uint8Array; bodyLength: number | undefined }> {
    // JSON would turn a trailing `undefined` (options not given) into null, which is not the same.
    while (args.length > 0 && args[args.length - 1] === undefined) args.pop();
    const request: WireRequest = { op, args };
    let payload: ReadableStream<Uint8Array> | Uint8Array;
    let failure: { reason: unknown } | undefined;
    if (body === undefined) {
      payload = encodeFrame(request);
    } else if (body instanceof Uint8Array) {
      request.body = { kind: 'bytes', length: body.byteLength };
      const head = encodeFrame(request);
      payload = new Uint8Array(head.byteLength + body.byteLength);
      payload.set(head, 0);
      payload.set(body, head.byteLength);
    } else {
      request.body = body.length === undefined ? { kind: 'stream' } : { kind: 'stream', length: body.length };
      const head = encodeFrame(request);
      const iterator = body.stream[Symbol.asyncIterator]();
      let headSent = false;
      payload = new ReadableStream<Uint8Array>({
        async pull(controller) {
          if (!headSent) {
            headSent = true;
            controller.enqueue(head);
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
      }, { highWaterMark: 0 });
    }
    let response: Response;
    try {
      response = await send(new Request(SERVICE_URL, { method: 'POST', body: payload, duplex: 'half' } as RequestInit));
    } catch (error) {
      if (failure) throw failure.reason;
      throw error;
    }
    if (failure) throw failure.reason;
    if (response.body === null) throw new Error(`The store service answered ${response.status} without a body.`);
    const reader = response.body.getReader();
    const { value, leftover } = await readFrame(() => reader.read());
    const answer = value as WireResponse;
    if ('storeError' in answer) {
      await reader.cancel().catch(() => undefined);
      const { code, message, details } = answer.storeError;
      throw new StoreError(code as StoreErrorCode, { message, ...(details ? { details } : {}) });
    }
    if ('internal' in answer) {
      await reader.cancel().catch(() => undefined);
      throw new Error(answer.internal);
    }
    return { value: answer.ok, response: reader, leftover, bodyLength: answer.body?.length };
  }

  async function plain<T>(op: WireRequest['op'], args: unknown[], body?: BodyInput): Promise<T> {
    const { value, response } = await call(op, args, body);
    await response.cancel().catch(() => undefined);
    return value as T;
  }

  return {
    head: (bucket, key) => plain('head', [bucket, key]),
    async get(bucket, key, options) {
      const { value, response, leftover, bodyLength } = await call('get', [bucket, key, options]);
      const result = value as GetResult | null;
      if (result === null || bodyLength === undefined) {
        await response.cancel().catch(() => undefined);
        return result;
      }
      return { ...result, body: remoteBody(response, leftover, bodyLength) };
    },
    put: (bucket, key, body, options) => plain('put', [bucket, key, options], body),
    delete: (bucket, keys) => plain('delete', [bucket, keys]),
    list: (bucket, options) => plain('list', [bucket, options]),
    createMultipartUpload: (bucket, key, options) => plain('createMultipartUpload', [bucket, key, options]),
    uploadPart: (bucket, key, uploadId, partNumber, body) => plain('uploadPart', [bucket, key, uploadId, partNumber], body),
    completeMultipartUpload: (bucket, key, uploadId, parts, options) => plain('completeMultipartUpload', [bucket, key, uploadId, parts, options]),
    abortMultipartUpload: (bucket, key, uploadId) => plain('abortMultipartUpload', [bucket, key, uploadId]),
  };
}

/** An object body that streams the rest of the service's response. */
function remoteBody(reader: ReadableStreamDefaultReader<Uint8Array>, leftover: Uint8Array, length: number): ObjectBody {
  return {
    length,
    segments: [],
    async* stream() {
      try {
        if (leftover.byteLength > 0) yield leftover;
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
      void reader.cancel().catch(() => undefined);
    },
  };
}
