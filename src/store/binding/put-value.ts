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

/** The stream's chunks as bytes; an error of the stream itself is marked as the script's. */
async function* bytesOf(stream: ReadableStream<unknown>): AsyncGenerator<Uint8Array> {
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

/** When option validation fails, a stream passed in is cancelled, as the runtime does (reference §9). */
export function cancelIfStream(value: unknown): void {
  if (value instanceof ReadableStream && !value.locked) {
    value.cancel(new Error('Stream cancelled because the associated put operation encountered an error.')).catch(() => undefined);
  }
}
