/**
 * Sends a script's Response to the server thread in the cheapest form that fits: one message for
 * a null or in-memory body, the segments of an untouched store body (the server sends the files
 * itself), or a stream of transferred chunks under flow control.
 */
import { takeStoreBody } from '../store/binding/index.ts';
import type { BodySegment } from '../store/engine/types.ts';
import { copyToBuffer, FLOW, FromWorker, type FromWorkerMessage } from './protocol.ts';
import { takeStaticBody } from './static-response.ts';

export type Post = (message: FromWorkerMessage, transfer?: readonly ArrayBuffer[]) => void;

/** Headers node:http manages itself; a script cannot set them for the connection. */
const CONNECTION_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection']);

/** Statuses that never carry a body (RFC 9110 §6.4.1). */
const NO_BODY_STATUSES = new Set([101, 204, 205, 304]);

/** Flat `[name, value, ...]`; `content-length` is left out when the server computes it. */
function flattenHeaders(headers: Headers, keepLength: boolean): string[] {
  const out: string[] = [];
  // A loop, not forEach: under tsx every closure created on this hot path also gets its name defined.
  for (const [name, value] of headers) {
    if (CONNECTION_HEADERS.has(name) || (!keepLength && name === 'content-length')) continue;
    out.push(name, value);
  }
  return out;
}

/** Flow control of one streamed response: how far the server has got, and whether it gave up. */
export class ResponseFlow {
  sent = 0;
  acked = 0;
  aborted = false;
  reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  #wake: (() => void) | undefined;

  ack(bytes: number): void {
    this.acked = bytes;
    if (this.sent - this.acked < FLOW.windowBytes) this.#resume();
  }

  abort(): void {
    this.aborted = true;
    this.reader?.cancel().catch(() => undefined);
    this.#resume();
  }

  /** Resolves once the server has caught up (or gone away). */
  waitForRoom(): Promise<void> {
    return new Promise((resolve) => {
      this.#wake = resolve;
    });
  }

  #resume(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}

/** Sends `response` for request `id`; rejects (after the head, possibly) if the body fails. */
export async function sendResponse(post: Post, id: number, response: Response, isHead: boolean, flows: Map<number, ResponseFlow>): Promise<void> {
  const status = response.status;
  const source = takeStaticBody(response);
  if (source !== undefined) {
    const headers = flattenHeaders(response.headers, false);
    if (typeof source === 'string') post({ t: FromWorker.Response, id, status, headers, body: source });
    else post({ t: FromWorker.Response, id, status, headers, body: source.buffer }, [source.buffer]);
    return;
  }
  const body = response.body;
  if (body === null) {
    const headers = flattenHeaders(response.headers, true);
    // An empty body is sent with `content-length: 0`, not as an empty chunked body.
    if (!isHead && !NO_BODY_STATUSES.has(status) && !response.headers.has('content-length')) headers.push('content-length', '0');
    post({ t: FromWorker.Response, id, status, headers, body: null });
    return;
  }
  const stored = takeStoreBody(body);
  if (stored) {
    const transfer: ArrayBuffer[] = [];
    const segments = stored.segments.map((segment): BodySegment => {
      if (segment.kind === 'blob') return segment;
      const copy = copyToBuffer(segment.bytes);
      transfer.push(copy);
      return { kind: 'inline', bytes: new Uint8Array(copy) };
    });
    stored.discard();
    post({ t: FromWorker.Segments, id, status, headers: flattenHeaders(response.headers, false), length: stored.length, segments }, transfer);
    return;
  }
  if (isHead) {
    body.cancel().catch(() => undefined);
    post({ t: FromWorker.Response, id, status, headers: flattenHeaders(response.headers, true), body: null });
    return;
  }
  await streamBody(post, id, status, response.headers, body, flows);
}

async function streamBody(post: Post, id: number, status: number, headers: Headers, body: ReadableStream<Uint8Array>,
  flows: Map<number, ResponseFlow>): Promise<void> {
  const reader = body.getReader();
  const flow = new ResponseFlow();
  flow.reader = reader;
  flows.set(id, flow);
  post({ t: FromWorker.Head, id, status, headers: flattenHeaders(headers, true) });
  try {
    while (!flow.aborted) {
      const { done, value } = await reader.read();
      if (done || flow.aborted) break;
      if (!(value instanceof Uint8Array)) throw new TypeError('A response body stream must yield Uint8Array chunks.');
      if (value.byteLength === 0) continue;
      const chunk = copyToBuffer(value);
      flow.sent += chunk.byteLength;
      post({ t: FromWorker.Chunk, id, chunk }, [chunk]);
      if (flow.sent - flow.acked >= FLOW.windowBytes) await flow.waitForRoom();
    }
    if (!flow.aborted) post({ t: FromWorker.End, id });
  } finally {
    flows.delete(id);
  }
}
