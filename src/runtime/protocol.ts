/**
 * The messages between the server thread and a script worker (one MessagePort each way). Bodies
 * travel as transferred ArrayBuffers; a small response is one message. Numeric tags keep it cheap.
 */
import type { BodySegment } from '../store/engine/types.ts';
import type { ScriptConfig } from './script-config.ts';

/** Server → worker. */
export enum ToWorker {
  /** A new request; its body (if `hasBody`) follows as chunks. */
  Request = 0,
  BodyChunk = 1,
  BodyEnd = 2,
  /** The client went away: fail the request body, stop reading the response. */
  Abort = 3,
  /** The server has passed on `bytes` response bytes in total (flow control for streamed bodies). */
  ResponseAck = 4,
}

/** Worker → server. */
export enum FromWorker {
  /** Whole response in one message: head and (small, in-memory) body. */
  Response = 10,
  /** Head of a streamed response; chunks and End follow. */
  Head = 11,
  Chunk = 12,
  End = 13,
  /** Head plus the segments of an untouched store body, which the server sends from the files itself. */
  Segments = 14,
  /** The script threw, or its response could not be sent. */
  Error = 15,
  /** The script has read `bytes` request-body bytes in total (flow control). */
  BodyAck = 16,
  Log = 17,
  Ready = 18,
  StartupFailed = 19,
}

export interface RequestMessage {
  t: ToWorker.Request;
  id: number;
  method: string;
  url: string;
  /** Flat `[name, value, name, value, ...]`, as node:http's rawHeaders. */
  headers: string[];
  hasBody: boolean;
}

export type ToWorkerMessage =
  | RequestMessage
  | { t: ToWorker.BodyChunk; id: number; chunk: ArrayBuffer }
  | { t: ToWorker.BodyEnd; id: number }
  | { t: ToWorker.Abort; id: number }
  | { t: ToWorker.ResponseAck; id: number; bytes: number };

export interface ScriptErrorInfo {
  message: string;
  stack: string | undefined;
}

export type FromWorkerMessage =
  | { t: FromWorker.Response; id: number; status: number; headers: string[]; body: string | ArrayBuffer | null }
  | { t: FromWorker.Head; id: number; status: number; headers: string[] }
  | { t: FromWorker.Chunk; id: number; chunk: ArrayBuffer }
  | { t: FromWorker.End; id: number }
  | { t: FromWorker.Segments; id: number; status: number; headers: string[]; length: number; segments: BodySegment[] }
  | { t: FromWorker.Error; id: number; error: ScriptErrorInfo; passThrough: boolean }
  | { t: FromWorker.BodyAck; id: number; bytes: number }
  | { t: FromWorker.Log; level: 'warn' | 'error'; msg: string; error: ScriptErrorInfo | undefined }
  | { t: FromWorker.Ready }
  | { t: FromWorker.StartupFailed; error: ScriptErrorInfo };

/** What a worker is started with (`workerData`). */
export interface WorkerInit {
  script: ScriptConfig;
  /** The account whose buckets the script's bindings name (null: buckets of no account). */
  accountId: string | null;
  /** The store's data dir; only opened when the script binds buckets. */
  dataDir: string;
  /** `[blobs] url`, when blobs live outside the data dir. */
  blobsUrl: string | undefined;
  /** `[db] url`, when the store's metadata is in PostgreSQL rather than the data dir's SQLite. */
  dbUrl: string | undefined;
  /** Int32 slots shared with the server, see HEARTBEAT. */
  heartbeat: SharedArrayBuffer;
  heartbeatIntervalMs: number;
}

/** Slots of the heartbeat array: the worker bumps BEAT from a timer and counts its BUSY work. */
export const HEARTBEAT = { beat: 0, busy: 1, slots: 2 } as const;

/** Flow-control windows: a sender pauses once this many bytes are unacknowledged. */
export const FLOW = { windowBytes: 1024 * 1024, ackEveryBytes: 256 * 1024 } as const;

/**
 * A fresh ArrayBuffer with exactly the bytes of `view`, to transfer. Always a copy: the view's buffer
 * may hold other data (socket reads, Node's Buffer pool, a database row) or still be in use by the
 * script. Uint8Array's own slice, not the view's: a Buffer's `slice` is a view on the same memory,
 * so its `.buffer` would be the whole underlying buffer, from its first byte.
 */
export function copyToBuffer(view: Uint8Array): ArrayBuffer {
  return Uint8Array.prototype.slice.call(view).buffer as ArrayBuffer;
}

/** Turns anything thrown into a cloneable description. */
export function describeError(error: unknown): ScriptErrorInfo {
  if (error instanceof Error) return { message: `${error.name}: ${error.message}`, stack: error.stack };
  return { message: String(error), stack: undefined };
}
