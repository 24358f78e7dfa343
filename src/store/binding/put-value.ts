/**
 * The values put() and uploadPart() accept, checked as the runtime's argument conversion does and
 * turned into an engine body. Streams are passed through chunk by chunk, never buffered.
 */
import type { BodyInput } from '../engine/types.ts';
import { ScriptStreamFailure, unknownLengthError, wrongParameter } from './binding-errors.ts';
import { isStoreBodyStream } from './store-object.ts';

/** What put() takes; uploadPart() takes the same without null. */
export type BodyValue = ReadableStream | ArrayBuffer | ArrayBufferView | string | Blob | null;

const VALUE_TYPES = 'ReadableStream or ArrayBuffer or ArrayBufferView or string or Blob';
const encoder = new TextEncoder();

/** Throws the runtime's conversion TypeError unless `value` is a body `method` accepts. */
export function assertBodyValue(value: unknown, method: 'put' | 'uploadPart', owner: string): asserts value is BodyValue {
  const ok =
    (value === null && method === 'put') ||
    typeof value === 'string' ||
    value instanceof ArrayBuffer ||
    ArrayBuffer.isView(value) ||
    value instanceof Blob ||
    value instanceof ReadableStream;
  if (!ok) throw wrongParameter(method, owner, 2, VALUE_TYPES);
}

/**
 * Who tells whether a ReadableStream given to put() or uploadPart() has a known length, which the
 * runtime requires:
 * - `runtime`: inside workerd, workerd itself. The stream (or a Blob's) goes to the store service
 *   as it is (BodyInput's `native`), and workerd sends it with a Content-Length exactly when it
 *   knows the length: a request or response body that has one, the readable half of a
 *   FixedLengthStream, a get body, a Blob's stream. The service refuses one sent without
 *   (store-service.ts).
 * - `stream-kind`: in Node.js (edgeport/store), where no stream carries its length. Every body
 *   Node.js makes (a Request's, a Response's, a Blob's) is a byte stream, and a get body is the
 *   bucket's own; a stream a script builds (`new ReadableStream()`, a TransformStream's readable)
 *   is neither, unless it asks for `type: 'bytes'`.
 */
export type StreamLengths = 'runtime' | 'stream-kind';

/**
 * The engine body for a checked value. Buffers are copied: the script may reuse its buffer as soon
 * as put() returns, while the engine is still writing it. A ReadableStream of unknown length is
 * refused with the runtime's TypeError, here or (`runtime`) when the stream is sent; its stream is
 * not cancelled here, as the runtime checks the length after the guard that cancels it.
 */
export function toBodyInput(value: BodyValue, lengths: StreamLengths): BodyInput {
  if (value === null) return new Uint8Array(0);
  if (typeof value === 'string') return encoder.encode(value);
  if (value instanceof ArrayBuffer) return new Uint8Array(value.slice(0));
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength).slice();
  if (lengths === 'runtime') {
    // Sent as the runtime's own stream (a Blob's has its size as length): no stream of our own
    // is made, which workerd refuses to construct before compatibility date 2022-11-30.
    const native = value instanceof Blob ? value.stream() : value;
    return { stream: bytesOf(native), native };
  }
  if (value instanceof Blob) return { stream: bytesOf(value.stream()), length: value.size };
  // A locked stream fails as the runtime's own stream does when it is read.
  if (!value.locked && !isStoreBodyStream(value) && !isByteStream(value)) throw unknownLengthError();
  return { stream: bytesOf(value) };
}

/** Whether `stream` is a byte stream: one that gives a BYOB reader (taken and released at once, reading nothing). */
function isByteStream(stream: ReadableStream): boolean {
  try {
    stream.getReader({ mode: 'byob' }).releaseLock();
    return true;
  } catch {
    return false;
  }
}

/** A byte stream's first read takes up to this much; reads that fill their buffer grow it, up to the most. */
const READ_BYTES = { first: 16 * 1024, most: 256 * 1024 };

/**
 * The stream's chunks as bytes; an error of the stream itself is marked as the script's. Read here
 * only in this process (`stream-kind`): a byte stream, or a get body, whose chunks are Uint8Arrays.
 */
async function* bytesOf(stream: ReadableStream<unknown>): AsyncGenerator<Uint8Array> {
  let byob: ReadableStreamBYOBReader | undefined;
  try {
    byob = stream.getReader({ mode: 'byob' });
  } catch {
    // Not a byte stream (a get body): its chunks are what it enqueues.
  }
  if (byob) {
    yield* byteStreamChunks(byob);
    return;
  }
  const reader = stream.getReader();
  try {
    for (;;) {
      let next: ReadableStreamReadResult<unknown>;
      try {
        next = await reader.read();
      } catch (error) {
        throw new ScriptStreamFailure(error);
      }
      if (next.done) return;
      const chunk = next.value;
      if (chunk instanceof Uint8Array) yield chunk;
      else throw new ScriptStreamFailure(new TypeError('This ReadableStream did not return bytes.'));
    }
  } finally {
    // Reached early when the engine stops reading (a failed put): the script's stream is cancelled.
    await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

/**
 * A byte stream (a request's body) read into buffers of our size: far fewer and larger chunks than
 * its default reads give (4 KiB each inside workerd), so a large body costs few steps to pass on.
 */
async function* byteStreamChunks(reader: ReadableStreamBYOBReader): AsyncGenerator<Uint8Array> {
  let size = READ_BYTES.first;
  try {
    for (;;) {
      let next: ReadableStreamReadResult<Uint8Array>;
      try {
        next = await reader.read(new Uint8Array(size));
      } catch (error) {
        throw new ScriptStreamFailure(error);
      }
      if (next.done) return;
      const chunk = next.value;
      if (chunk.byteLength === size) size = Math.min(size * 4, READ_BYTES.most);
      if (chunk.byteLength > 0) yield chunk;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

/** When option validation fails, a stream passed in is cancelled, as the runtime does. */
export function cancelIfStream(value: unknown): void {
  if (value instanceof ReadableStream && !value.locked) {
    value.cancel(new Error('Stream cancelled because the associated put operation encountered an error.')).catch(() => undefined);
  }
}
