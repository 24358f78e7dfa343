/**
 * The values put() and uploadPart() accept, checked as the runtime's argument conversion does and
 * turned into an engine body. Streams are passed through chunk by chunk, never buffered.
 */
import type { BodyInput } from '../engine/types.ts';
import { ScriptStreamFailure, wrongParameter } from './binding-errors.ts';

/** What put() takes; uploadPart() takes the same without null. */
export type BodyValue = ReadableStream | ArrayBuffer | ArrayBufferView | string | Blob | null;

const VALUE_TYPES = 'ReadableStream or ArrayBuffer or ArrayBufferView or string or Blob';
const encoder = new TextEncoder();

/** Throws the runtime's conversion TypeError unless `value` is a body `method` accepts. */
export function assertBodyValue(value: unknown, method: 'put' | 'uploadPart', owner: string): asserts value is BodyValue {
  const ok = (value === null && method === 'put') || typeof value === 'string' || value instanceof ArrayBuffer
    || ArrayBuffer.isView(value) || value instanceof Blob || value instanceof ReadableStream;
  if (!ok) throw wrongParameter(method, owner, 2, VALUE_TYPES);
}

/**
 * The engine body for a checked value. Buffers are copied: the script may reuse its buffer as soon
 * as put() returns, while the engine is still writing it. A ReadableStream of unknown length is
 * accepted, unlike Miniflare: production takes chunked request bodies (reference §9, §11 #5).
 */
export function toBodyInput(value: BodyValue): BodyInput {
  if (value === null) return new Uint8Array(0);
  if (typeof value === 'string') return encoder.encode(value);
  if (value instanceof ArrayBuffer) return new Uint8Array(value.slice(0));
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength).slice();
  if (value instanceof Blob) return { stream: bytesOf(value.stream()), length: value.size };
  return { stream: bytesOf(value) };
}

/** A byte stream's first read takes up to this much; reads that fill their buffer grow it, up to the most. */
const READ_BYTES = { first: 16 * 1024, most: 256 * 1024 };

/** The stream's chunks as bytes; an error of the stream itself is marked as the script's. */
async function* bytesOf(stream: ReadableStream<unknown>): AsyncGenerator<Uint8Array> {
  let byob: ReadableStreamBYOBReader | undefined;
  try {
    byob = stream.getReader({ mode: 'byob' });
  } catch {
    // Not a byte stream: its chunks are whatever it enqueues.
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
      else if (typeof chunk === 'string') yield encoder.encode(chunk);
      else if (chunk instanceof ArrayBuffer) yield new Uint8Array(chunk);
      else if (ArrayBuffer.isView(chunk)) yield new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
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

/** When option validation fails, a stream passed in is cancelled, as the runtime does (reference §9). */
export function cancelIfStream(value: unknown): void {
  if (value instanceof ReadableStream && !value.locked) {
    value.cancel(new Error('Stream cancelled because the associated put operation encountered an error.')).catch(() => undefined);
  }
}
