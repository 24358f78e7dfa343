/**
 * The server's end of the bucket bindings of scripts in workerd: an HTTP server on a Unix socket
 * that only an account's workerd process is given, answering each engine call (store-wire.ts) from
 * the server's own engine, seen as the calling script's account and limited to the buckets that
 * script binds. Which script calls is the request's path: the isolate's secret token, which the
 * binding's code in the isolate adds (entry-module.ts) and the script never sees.
 * A put's body goes from the socket to the engine as it arrives; a get's body goes from where the
 * engine keeps it (inline bytes, blob files) straight to the socket, as the S3 API sends it.
 */
import type { Logger } from '../../core/log.ts';
import { BINDING_OPERATIONS, type BindingEngine } from '../../store/binding/index.ts';
import { backendFaultOf } from '../../core/errors/backend-fault.ts';
import { noteFault } from '../../core/errors/fault-log.ts';
import { StoreError, storeFaultOf } from '../../store/engine/errors.ts';
import type { BodyInput, GetResult } from '../../store/engine/types.ts';
import { primeFirstBlob, writeSegments, type BlobSource } from '../../store/segment-writer.ts';
import { ANSWER_HEADER, decodeHeader, encodeFrame, encodeHeader, readFrame, type WireRequest, type WireResponse } from './store-wire.ts';
import { listenOnSocket } from './socket-server.ts';
import { createStoreHttpServer, type StoreRequest, type StoreResponse } from './store-http-server.ts';

/** What one script may reach: its account's view of the engine, limited to the buckets it binds. */
export interface StoreCaller {
  /** The engine as the script's account sees it. */
  engine: BindingEngine;
  /** Where the engine's blobs are read from, to send a get's body. */
  blobs: BlobSource;
  /** The buckets the script binds: the only ones the service answers for. */
  buckets: ReadonlySet<string>;
  scriptName: string;
}

export interface StoreServiceOptions {
  /** The script a request comes from, by its path (`/<its token>`); undefined for none known. */
  caller(target: string): StoreCaller | undefined;
  socketPath: string;
  logger: Logger;
  /** Names the service in the log. */
  name: string;
}

export interface StoreService {
  close(): Promise<void>;
}

const OPERATIONS = new Set<string>(BINDING_OPERATIONS);

export async function startStoreService(options: StoreServiceOptions): Promise<StoreService> {
  // A call whose answering itself failed (a bug) is logged and its connection closed, never an unhandled rejection.
  // Bodies can take as long as the script takes to produce them: no timeout but on idle connections.
  const server = createStoreHttpServer(
    (req, res) => {
      const caller = options.caller(req.target);
      if (caller === undefined) {
        answer(res, { internal: 'The store service does not know the calling script.' });
        return Promise.resolve();
      }
      return serve(caller, options.logger, req, res);
    },
    (error) => {
      options.logger.error({ err: error, service: options.name }, 'Request handler failed unexpectedly; its connection was closed.');
    },
  );
  return listenOnSocket(server, options.socketPath);
}

async function serve(options: StoreCaller, logger: Logger, req: StoreRequest, res: StoreResponse): Promise<void> {
  let request: WireRequest;
  let body: BodyInput | undefined;
  try {
    const header = req.call;
    let leftover: Uint8Array = new Uint8Array(0);
    if (header !== undefined) {
      request = checkRequest(decodeHeader(header), options.buckets);
    } else {
      const frame = await readFrame(() => req.body.next());
      request = checkRequest(frame.value, options.buckets);
      leftover = frame.leftover;
    }
    if (request.body?.kind === 'native' && req.length === undefined) {
      // Sent chunked: workerd did not know the stream's length, which the runtime requires. Answered
      // at once: the store HTTP server reads and drops the rest of the body and keeps the connection.
      answer(res, { lengthRequired: true });
      return;
    }
    if (request.body !== undefined) body = await bodyOf(request.body, leftover, req);
  } catch (error) {
    answer(res, { internal: `The store service could not read the request: ${(error as Error).message}` });
    return;
  }
  try {
    const engine = options.engine as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    const args = body === undefined ? request.args : withBody(request, body);
    const result = await engine[request.op]!(...args);
    if (request.op === 'get' && result !== null && (result as GetResult).body !== undefined) {
      await sendGet(options, logger, res, result as GetResult);
      return;
    }
    answer(res, { ok: result ?? null });
  } catch (thrown) {
    // A backend fault (the database, the blob store, the disk) reaches the script as the store's own error.
    const fault = thrown instanceof StoreError ? undefined : storeFaultOf(thrown);
    const error = fault ?? thrown;
    if (error instanceof StoreError) {
      if (fault) noteFault(logger, 'binding', backendFaultOf(fault)!);
      answer(res, { storeError: { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) } });
      return;
    }
    // A body cut off because the script's request went away is routine; anything else is not.
    const level = req.aborted || res.destroyed ? 'debug' : 'error';
    logger[level]({ script: options.scriptName, op: request.op, error: (error as Error).message }, 'A store binding call failed.');
    answer(res, { internal: 'We encountered an internal error. Please try again.' });
  }
}

/** The request as sent, checked: a known operation on a bucket the script binds. */
function checkRequest(value: unknown, buckets: ReadonlySet<string>): WireRequest {
  const request = value as WireRequest;
  if (typeof request !== 'object' || request === null || !OPERATIONS.has(request.op) || !Array.isArray(request.args)) {
    throw new Error('not a store call');
  }
  if (!buckets.has(request.args[0] as string)) throw new Error(`the script binds no bucket named ${JSON.stringify(request.args[0])}`);
  return request;
}

/** put's body goes third (after bucket and key), uploadPart's fifth (after upload id and part number). */
function withBody(request: WireRequest, body: BodyInput): unknown[] {
  const args = [...request.args];
  args.splice(request.op === 'put' ? 2 : 4, 0, body);
  return args;
}

/**
 * A native body up to this long is read whole and handed to the engine as bytes: no larger than
 * what the engine keeps in memory to store inline (64 KiB by default), and most often here already
 * with the request's head (a script's put of a small request body). Passing it on chunk by chunk
 * cost more than the rest of reading the call. Its length is the HTTP body's own, so the bytes
 * are exactly the script's stream (a `stream` body's declared length is checked by the engine).
 */
const BUFFERED_BODY_BYTES = 64 * 1024;

async function bodyOf(spec: NonNullable<WireRequest['body']>, leftover: Uint8Array, req: StoreRequest): Promise<BodyInput> {
  const iterator = req.body;
  // A native body is the whole HTTP body: its length is the Content-Length (checked present above).
  const length = spec.kind === 'native' ? req.length : spec.length;
  // A body the script passed as bytes reaches the engine as bytes, as it does in-process; so does a small native one.
  const whole = spec.kind === 'bytes' || (spec.kind === 'native' && length !== undefined && length <= BUFFERED_BODY_BYTES) ? length : undefined;
  if (whole !== undefined) {
    const bytes = new Uint8Array(whole);
    let at = Math.min(leftover.byteLength, whole);
    bytes.set(leftover.subarray(0, at), 0);
    while (at < whole) {
      const next = await iterator.next();
      if (next.done) throw new Error('the body ended early');
      const chunk = next.value.subarray(0, whole - at);
      bytes.set(chunk, at);
      at += chunk.byteLength;
    }
    return bytes;
  }
  async function* rest(): AsyncIterable<Uint8Array> {
    if (leftover.byteLength > 0) yield leftover;
    for (;;) {
      const next = await iterator.next();
      if (next.done) return;
      yield next.value;
    }
  }
  return length === undefined ? { stream: rest() } : { stream: rest(), length };
}

/** Starts the answer: its JSON in the header, or (too large for one) as a frame written first. */
function writeAnswer(res: StoreResponse, response: WireResponse, bodyLength: number): void {
  const header = encodeHeader(response);
  if (header !== undefined) {
    res.writeHead(200, [ANSWER_HEADER, header, 'content-length', String(bodyLength)]);
    return;
  }
  const frame = encodeFrame(response);
  res.writeHead(200, ['content-length', String(frame.byteLength + bodyLength)]);
  res.write(frame);
}

function answer(res: StoreResponse, response: WireResponse): void {
  writeAnswer(res, response, 0);
  res.end();
}

/** The answer, then the object's bytes from where the engine keeps them, paced by the connection. */
async function sendGet(options: StoreCaller, logger: Logger, res: StoreResponse, result: GetResult): Promise<void> {
  const body = result.body!;
  const { body: _omitted, ...rest } = result;
  const segments = body.segments;
  // A remote blob store that is down fails the get here, before the answer: the script gets the store's error.
  const inline = segments.length === 1 && segments[0]!.kind === 'inline';
  const primed = inline ? undefined : await primeFirstBlob(segments, options.blobs).finally(() => body.discard());
  writeAnswer(res, { ok: rest, body: { length: body.length } }, body.length);
  body.discard();
  if (inline && segments[0]!.kind === 'inline') {
    // A small object kept in the metadata store goes out with its answer, in one write.
    res.end(segments[0]!.bytes);
    return;
  }
  try {
    await writeSegments(res, segments, options.blobs, primed);
    res.end();
  } catch (error) {
    // The binding's stream errors when the connection drops; a blob that cannot be read is logged.
    if (!res.destroyed) logger.error({ script: options.scriptName, error: (error as Error).message }, 'Sending a store body to a script failed.');
    res.destroy();
  }
}
