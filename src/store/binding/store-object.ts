/**
 * StoreObject and StoreObjectBody as scripts see them: classes `HeadResult` and `GetResult`, as in
 * the real runtime. A body is a web ReadableStream created on first access; while
 * untouched, a server may take its segments and send the bytes itself (takeStoreBody). A body
 * that already is a web stream (a remote engine's) is handed over as that stream.
 */
import type { HttpMetadata, ObjectBody, ObjectMeta, ServedRange, StorageClass } from '../engine/types.ts';
import { StoreChecksums } from './checksums.ts';
import { toStoreHttpMetadata, writeHttpMetadata } from './http-metadata.ts';
import type { StoreHTTPMetadata } from './types.ts';

export class HeadResult {
  readonly key: string;
  readonly version: string;
  readonly size: number;
  readonly etag: string;
  readonly httpEtag: string;
  readonly checksums: StoreChecksums;
  readonly uploaded: Date;
  /** `{}` for a list item whose kind was not asked for in `include`, as under wrangler (Miniflare). */
  readonly httpMetadata: StoreHTTPMetadata;
  readonly customMetadata: Record<string, string>;
  readonly range: ServedRange | undefined;
  readonly storageClass: StorageClass;
  /** The SSE-C key's MD5 (base64), an own property as the runtime's, undefined for an object stored without one. */
  readonly ssecKeyMd5: string | undefined;

  constructor(
    meta: Omit<ObjectMeta, 'httpMetadata' | 'customMetadata'> & { httpMetadata: HttpMetadata | undefined; customMetadata: Record<string, string> | undefined },
    range?: ServedRange,
  ) {
    this.key = meta.key;
    this.version = meta.version;
    this.size = meta.size;
    this.etag = meta.etag;
    this.httpEtag = `"${meta.etag}"`;
    this.checksums = new StoreChecksums(meta.checksums);
    this.uploaded = new Date(meta.uploaded);
    this.httpMetadata = toStoreHttpMetadata(meta.httpMetadata ?? {});
    this.customMetadata = { ...meta.customMetadata };
    this.range = range;
    this.storageClass = meta.storageClass;
    this.ssecKeyMd5 = meta.ssec?.keyMd5;
  }

  writeHttpMetadata(headers: Headers): void {
    writeHttpMetadata(this.httpMetadata, headers);
  }
}

interface BodyState {
  source: ObjectBody;
  stream: ReadableStream<Uint8Array> | undefined;
  /** Some reader started on the bytes (the stream, a read method, or takeStoreBody). */
  used: boolean;
  /** The bytes went elsewhere than `stream` (a read method or takeStoreBody): the stream errors. */
  taken: boolean;
  /** `stream` is the source's own web stream (ObjectBody.webStream), handed over as it is. */
  native: boolean;
}

/** Stream -> the engine body behind it, while nobody has read from it. */
const untouchedBodies = new WeakMap<ReadableStream<Uint8Array>, BodyState>();
/** Every body stream handed out: streams of known length, which put() takes (put-value.ts). */
const bodyStreams = new WeakSet<ReadableStream<Uint8Array>>();

const USED = 'Body has already been used. It can only be used once. Use tee() first if you need to read it twice.';

export class GetResult extends HeadResult {
  readonly #state: BodyState;

  constructor(meta: ObjectMeta, range: ServedRange, body: ObjectBody) {
    super(meta, range);
    this.#state = { source: body, stream: undefined, used: false, taken: false, native: false };
  }

  get body(): ReadableStream<Uint8Array> {
    const state = this.#state;
    if (!state.stream && state.source.webStream) {
      // A body its runtime already streams (a remote engine's response): no JavaScript per chunk.
      // Once a read method has taken it, it is that read's stream, which the runtime then refuses
      // to read again (and a stream of our own cannot be made inside workerd before 2022-11-30).
      state.stream = state.source.webStream();
      state.native = true;
    }
    if (!state.stream) {
      let iterator: AsyncIterator<Uint8Array> | undefined;
      state.stream = new ReadableStream<Uint8Array>(
        {
          async pull(controller) {
            if (!iterator && state.taken) {
              controller.error(new TypeError(USED));
              return;
            }
            state.used = true;
            untouchedBodies.delete(state.stream!);
            // The engine's chunks are enqueued as they are: no copy between the file and the script.
            iterator ??= state.source.stream()[Symbol.asyncIterator]();
            const next = await iterator.next();
            if (next.done) controller.close();
            else controller.enqueue(next.value);
          },
          async cancel() {
            await iterator?.return?.();
          },
        },
        { highWaterMark: 0 },
      );
      untouchedBodies.set(state.stream, state);
    }
    bodyStreams.add(state.stream);
    return state.stream;
  }

  get bodyUsed(): boolean {
    return this.#state.used || (this.#state.stream?.locked ?? false);
  }

  async bytes(): Promise<Uint8Array> {
    if (this.bodyUsed) throw new TypeError(USED);
    const state = this.#state;
    state.used = true;
    state.taken = true;
    if (state.stream) untouchedBodies.delete(state.stream);
    if (state.source.webStream) {
      // Read natively, from the stream the script was handed if it was.
      const stream = state.native ? state.stream! : state.source.webStream();
      return new Uint8Array(await new Response(stream).arrayBuffer());
    }
    const segments = state.source.segments;
    if (segments.length === 1 && segments[0]!.kind === 'inline') return new Uint8Array(segments[0]!.bytes);
    const out = new Uint8Array(state.source.length);
    let at = 0;
    for await (const chunk of state.source.stream()) {
      out.set(chunk, at);
      at += chunk.byteLength;
    }
    return out;
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    const bytes = await this.bytes();
    return bytes.buffer.byteLength === bytes.byteLength ? (bytes.buffer as ArrayBuffer) : (bytes.slice().buffer as ArrayBuffer);
  }

  async text(): Promise<string> {
    return new TextDecoder().decode(await this.bytes());
  }

  async json<T>(): Promise<T> {
    return JSON.parse(await this.text()) as T;
  }

  async blob(): Promise<Blob> {
    return new Blob([(await this.bytes()) as Uint8Array<ArrayBuffer>], { type: this.httpMetadata.contentType ?? '' });
  }
}

/**
 * The engine body behind `stream` if `stream` is a store body nobody has read or locked; it is then
 * marked used, and the caller owns sending its bytes (e.g. straight from the file to a socket).
 */
export function takeStoreBody(stream: ReadableStream<Uint8Array> | null): ObjectBody | undefined {
  if (!stream || stream.locked) return undefined;
  const state = untouchedBodies.get(stream);
  if (!state || state.used) return undefined;
  state.used = true;
  state.taken = true;
  untouchedBodies.delete(stream);
  return state.source;
}

/** Whether `stream` is the body of a GetResult: its length is the object's (or range's) size. */
export function isStoreBodyStream(stream: ReadableStream): boolean {
  return bodyStreams.has(stream as ReadableStream<Uint8Array>);
}
