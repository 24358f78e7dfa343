/**
 * How a bucket binding inside workerd talks to the server's store engine: one HTTP POST per engine
 * call. Each message, request and response alike, is a frame: 4 bytes of big-endian length, that
 * much JSON, then raw body bytes (a put's or uploadPart's body; a get's object body), streamed.
 * Plain Web APIs only: this file runs inside workerd as well as in the server.
 */
import type { BindingOperation } from '../../store/binding/binding-engine.ts';

/** What a request frame's JSON holds. */
export interface WireRequest {
  op: BindingOperation;
  /** The engine method's arguments, the body argument left out (it follows the frame). */
  args: unknown[];
  /** For put and uploadPart: how the body follows. `bytes` is exactly `length` bytes, `stream` of `length` when known. */
  body?: { kind: 'bytes'; length: number } | { kind: 'stream'; length?: number };
}

/** A StoreError as it crosses the wire: enough to rebuild it on the other side. */
export interface WireStoreError {
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

/** What a response frame's JSON holds. A get's body follows its frame when `body` is set. */
export type WireResponse =
  | { ok: unknown; body?: { length: number } }
  | { storeError: WireStoreError }
  | { internal: string };

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

/** The largest frame either side accepts (custom metadata and keys are far smaller). */
const MAX_FRAME_BYTES = 1024 * 1024;

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

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.byteLength === 0) return b;
  const out = new Uint8Array(a.byteLength + b.byteLength);
  out.set(a, 0);
  out.set(b, a.byteLength);
  return out;
}
