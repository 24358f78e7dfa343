/**
 * How a bucket binding inside workerd talks to the server's store engine: one HTTP POST per engine
 * call. The call's JSON (the operation and its arguments) travels in a request header and the
 * answer's JSON in a response header, as JSON with every character outside printable ASCII
 * written as a \u escape (still JSON, and a valid header value), so that a body is only ever the raw bytes
 * of an object: a put's or uploadPart's body, a get's object body. Each side can then hand a body
 * to the other as the HTTP body itself, streamed natively, with no framing to read through in
 * JavaScript. JSON too large for a header (a delete of many keys, a complete of many parts, an
 * object with many parts) goes instead as a frame at the start of the body: 4 bytes of big-endian
 * length, then that much JSON; a message without the header has its frame there.
 * Plain Web APIs only: this file runs inside workerd as well as in the server.
 */
import type { BindingOperation } from '../../store/binding/binding-engine.ts';

/** What a request's JSON holds. */
export interface WireRequest {
  op: BindingOperation;
  /** The engine method's arguments, the body argument left out (it is the request's body). */
  args: unknown[];
  /**
   * For put and uploadPart: how the body follows. `bytes` is exactly `length` bytes, `stream` of
   * `length` when known; `native` is the script's own stream as the whole HTTP body, its length
   * the Content-Length its runtime sent (none: a stream of unknown length).
   */
  body?: { kind: 'bytes'; length: number } | { kind: 'stream'; length?: number } | { kind: 'native' };
}

/** A StoreError as it crosses the wire: enough to rebuild it on the other side. */
export interface WireStoreError {
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

/** What a response's JSON holds. A get's object body is the rest of the response body when `body` is set. */
export type WireResponse =
  | { ok: unknown; body?: { length: number } }
  | { storeError: WireStoreError }
  | { internal: string }
  /** A `native` body came without a length: the runtime did not know it, and put refuses such a stream. */
  | { lengthRequired: true };

/** The request header that carries a call's JSON. */
export const CALL_HEADER = 'x-store-call';
/** The response header that carries an answer's JSON. */
export const ANSWER_HEADER = 'x-store-answer';

/**
 * The longest JSON header either side sends (percent-encoded); longer JSON goes as a frame in the
 * body. Well under the 16 KiB of request head Node accepts by default and workerd's own limits.
 */
const HEADER_LIMIT = 8 * 1024;

/** The largest frame either side accepts (a delete of 1,000 keys of 1,024 bytes fits; 10,000 parts do). */
const MAX_FRAME_BYTES = 4 * 1024 * 1024;

/**
 * The longest header a call with a `native` body may have: as long as a frame, since nothing may
 * go in front of that body (the Content-Length workerd sends must be the stream's own).
 */
export const NATIVE_CALL_HEADER_LIMIT = MAX_FRAME_BYTES;

/** What a header value cannot hold as it is: controls, DEL and everything past ASCII. */
const NOT_HEADER_SAFE = /[^\x20-\x7e]/g;
const HAS_UNSAFE = /[^\x20-\x7e]/;

function escapeUnicode(char: string): string {
  return `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/**
 * The header value for `value`, or undefined when it is longer than `limit` (use a frame). Its
 * JSON as it is, with the few characters a header cannot carry escaped, rather than
 * percent-encoded: a third of the bytes on every call, and no encoding pass on either side.
 */
export function encodeHeader(value: unknown, limit = HEADER_LIMIT): string | undefined {
  const json = JSON.stringify(value);
  const text = HAS_UNSAFE.test(json) ? json.replace(NOT_HEADER_SAFE, escapeUnicode) : json;
  return text.length <= limit ? text : undefined;
}

export function decodeHeader(text: string): unknown {
  return JSON.parse(text);
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The frame's bytes for `value`. */
export function encodeFrame(value: unknown): Uint8Array {
  const json = encoder.encode(JSON.stringify(value));
  const frame = new Uint8Array(4 + json.byteLength);
  new DataView(frame.buffer).setUint32(0, json.byteLength);
  frame.set(json, 4);
  return frame;
}

/** Reads chunks of a body: a web stream reader or a Node async iterator. */
export type ChunkSource = () => Promise<{ done?: boolean | undefined; value?: Uint8Array | undefined }>;

/**
 * Reads one frame from `read`; answers its JSON and the bytes after it, first the part of the last
 * chunk that was already read (`leftover`), then whatever `read` yields next.
 */
export async function readFrame(read: ChunkSource): Promise<{ value: unknown; leftover: Uint8Array }> {
  let buffered: Uint8Array = new Uint8Array(0);
  let need = 4;
  let length: number | undefined;
  for (;;) {
    if (buffered.byteLength >= need) {
      if (length === undefined) {
        length = new DataView(buffered.buffer, buffered.byteOffset, 4).getUint32(0);
        if (length > MAX_FRAME_BYTES) throw new Error(`A store frame of ${length} bytes is over the limit.`);
        need = 4 + length;
        continue;
      }
      return { value: JSON.parse(decoder.decode(buffered.subarray(4, need))), leftover: buffered.subarray(need) };
    }
    const next = await read();
    if (next.done || next.value === undefined) throw new Error('The store connection ended inside a frame.');
    buffered = concat(buffered, next.value);
  }
}

export function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.byteLength === 0) return b;
  const out = new Uint8Array(a.byteLength + b.byteLength);
  out.set(a, 0);
  out.set(b, a.byteLength);
  return out;
}
