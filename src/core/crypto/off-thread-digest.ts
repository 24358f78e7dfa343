/**
 * Hashes a large stream on a worker thread, so the event loop only copies bytes while the hash
 * (MD5 runs at about 800 MiB/s on one core) runs beside it. The store uses it for the MD5 (the
 * etag) of large bodies: inline, that was about a fifth of the event loop during a multipart upload.
 *
 * Bytes are copied into 256 KiB batches and moved (not copied again) to the worker, which hands
 * each batch back once hashed, for reuse. At most MAX_IN_FLIGHT bytes wait at the worker: `update`
 * returns a promise to wait on when that much is outstanding, so a fast sender cannot grow memory.
 * One worker per thread that uses it, started on first use and not keeping the process alive.
 */
import { createHash } from 'node:crypto';
import { Worker } from 'node:worker_threads';

/** Bodies shorter than this are cheaper to hash inline than to copy to the worker. */
export const OFF_THREAD_MIN_BYTES = 1024 * 1024;
const BATCH_BYTES = 256 * 1024;
const MAX_IN_FLIGHT = 4 * 1024 * 1024;
/** Batches come back from the worker and are reused by every stream (at most 32 are kept). */
const POOL_LIMIT = 32;
const pool: ArrayBuffer[] = [];

function takeBatch(): Uint8Array {
  const reused = pool.pop();
  return reused ? new Uint8Array(reused) : new Uint8Array(Buffer.allocUnsafeSlow(BATCH_BYTES).buffer, 0, BATCH_BYTES);
}

function returnBatch(buffer: ArrayBuffer): void {
  if (pool.length < POOL_LIMIT && buffer.byteLength === BATCH_BYTES) pool.push(buffer);
}

const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const streams = new Map();
parentPort.on('message', (message) => {
  if (message.type === 'open') {
    streams.set(message.id, message.algorithms.map((algorithm) => createHash(algorithm)));
  } else if (message.type === 'data') {
    const hashes = streams.get(message.id);
    const bytes = new Uint8Array(message.buffer, 0, message.length);
    if (hashes) for (const hash of hashes) hash.update(bytes);
    parentPort.postMessage({ type: 'done', id: message.id, buffer: message.buffer }, [message.buffer]);
  } else if (message.type === 'end') {
    const hashes = streams.get(message.id);
    streams.delete(message.id);
    parentPort.postMessage({ type: 'digest', id: message.id, hex: hashes ? hashes.map((hash) => hash.digest('hex')) : [] });
  } else if (message.type === 'drop') {
    streams.delete(message.id);
  }
});
`;

interface StreamState {
  onBatchDone(bytes: number): void;
  onDigest(hex: string[]): void;
  onError(error: Error): void;
}

type FromWorker = { type: 'done'; id: number; buffer: ArrayBuffer } | { type: 'digest'; id: number; hex: string[] };

let shared: { worker: Worker; streams: Map<number, StreamState>; nextId: number } | undefined;

function hashWorker(): NonNullable<typeof shared> {
  if (shared) return shared;
  const worker = new Worker(WORKER_SOURCE, { eval: true });
  const streams = new Map<number, StreamState>();
  const state = { worker, streams, nextId: 1 };
  worker.unref();
  worker.on('message', (message: FromWorker) => {
    const stream = streams.get(message.id);
    if (message.type === 'done') {
      returnBatch(message.buffer);
      stream?.onBatchDone(message.buffer.byteLength);
    } else {
      stream?.onDigest(message.hex);
    }
  });
  const fail = (error: Error) => {
    if (shared === state) shared = undefined;
    for (const stream of streams.values()) stream.onError(error);
    streams.clear();
    worker.unref();
  };
  worker.on('error', fail);
  worker.on('exit', (code) => fail(new Error(`the hashing thread exited (code ${code})`)));
  shared = state;
  return state;
}

/** A digest fed chunk by chunk, whether it runs on the hashing thread or inline (createBodyDigest). */
export interface StreamDigest {
  /** Adds bytes (copied: the caller may reuse `chunk`). Returns a promise when the caller must wait for the worker. */
  update(chunk: Uint8Array): Promise<void> | undefined;
  /** The hex digest of every algorithm asked for, in order. The digest cannot be updated afterwards. */
  digest(): Promise<string[]>;
  /** Forgets the stream (a body that failed half way). */
  cancel(): void;
}

/** Starts hashing a stream with `algorithms` (node:crypto names, e.g. 'md5', 'sha256') on the hashing thread. */
export function createOffThreadDigest(algorithms: readonly string[]): StreamDigest {
  const { worker, streams } = hashWorker();
  const id = shared!.nextId++;
  let batch: Uint8Array | undefined;
  let filled = 0;
  let inFlight = 0;
  let failure: Error | undefined;
  let drained: { resolve: () => void; reject: (error: Error) => void } | undefined;
  let finished: { resolve: (hex: string[]) => void; reject: (error: Error) => void } | undefined;

  if (streams.size === 0) worker.ref();
  const forget = () => {
    streams.delete(id);
    if (streams.size === 0) worker.unref();
  };
  streams.set(id, {
    onBatchDone(bytes) {
      inFlight -= bytes;
      if (drained && inFlight <= MAX_IN_FLIGHT / 2) {
        drained.resolve();
        drained = undefined;
      }
    },
    onDigest(hex) {
      forget();
      finished?.resolve(hex);
    },
    onError(error) {
      failure = error;
      drained?.reject(error);
      finished?.reject(error);
    },
  });
  worker.postMessage({ type: 'open', id, algorithms });

  const send = () => {
    const buffer = batch!.buffer as ArrayBuffer;
    inFlight += buffer.byteLength;
    worker.postMessage({ type: 'data', id, buffer, length: filled }, [buffer]);
    batch = undefined;
    filled = 0;
  };

  return {
    update(chunk) {
      if (failure) throw failure;
      let at = 0;
      while (at < chunk.byteLength) {
        batch ??= takeBatch();
        const take = Math.min(BATCH_BYTES - filled, chunk.byteLength - at);
        batch.set(take === chunk.byteLength ? chunk : chunk.subarray(at, at + take), filled);
        filled += take;
        at += take;
        if (filled === BATCH_BYTES) send();
      }
      if (inFlight <= MAX_IN_FLIGHT) return undefined;
      return new Promise<void>((resolve, reject) => {
        drained = { resolve, reject };
      });
    },
    digest() {
      if (failure) return Promise.reject(failure);
      if (filled > 0) send();
      return new Promise<string[]>((resolve, reject) => {
        finished = { resolve, reject };
        worker.postMessage({ type: 'end', id });
      });
    },
    cancel() {
      if (batch) returnBatch(batch.buffer as ArrayBuffer);
      batch = undefined;
      if (!streams.has(id)) return;
      forget();
      worker.postMessage({ type: 'drop', id });
    },
  };
}

/**
 * A digest of a body `length` bytes long (when known): on the hashing thread from
 * OFF_THREAD_MIN_BYTES up, where the copy to the thread costs less than the hashing it moves off the
 * event loop; inline below that, or when the length is unknown.
 */
export function createBodyDigest(algorithms: readonly string[], length: number | undefined): StreamDigest {
  if (length !== undefined && length >= OFF_THREAD_MIN_BYTES) return createOffThreadDigest(algorithms);
  const hashes = algorithms.map((algorithm) => createHash(algorithm));
  return {
    update(chunk) {
      for (const hash of hashes) hash.update(chunk);
      return undefined;
    },
    async digest() {
      return hashes.map((hash) => hash.digest('hex'));
    },
    cancel() {},
  };
}
