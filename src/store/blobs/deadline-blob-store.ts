/**
 * A blob store on a directory that can stop answering (`[blobs] url = "file:///mnt/..."` on an NFS
 * mount whose server went away, a volume that hangs): every call has a deadline, as an s3:// store's
 * does. A call that does not answer within it (a write or read moving no byte, an open, a commit's
 * fsync) fails with a BackendFault, so the client gets a retryable 503 and `/readyz` says the blob
 * store is down, never a request that waits forever.
 *
 * A file-system call that hangs keeps one of Node's few worker threads (libuv's pool, four by
 * default, which DNS lookups, key hashing and gzip share) until the mount answers. So once
 * `maxStuck` calls are past their deadline and still unanswered, further calls fail at once
 * without touching the directory, until one of them returns: a hung mount holds at most that many
 * threads, whatever the load. Sweeps (`list`, `clearTemporary`) have no deadline: a listing of a
 * whole directory may take long on a slow mount, and they run in the background.
 *
 * Blob files are read through `read` (not streamed from `dir`), so that reads have the deadline
 * too and a hung first read fails the request before any header is sent (segment-writer.ts).
 */
import { backendUnavailable, type BackendFault } from '../../core/errors/backend-fault.ts';
import { within } from '../../core/within.ts';
import type { BlobStore, BlobWriter, SweepOptions } from './blob-store.ts';

/** What `within` answers for a call past its deadline. */
const LATE = Symbol('late');

/** How many calls past their deadline may still hold a worker thread before calls are refused at once. */
export const DEFAULT_MAX_STUCK = 2;

export interface DeadlineOptions {
  /** Each call's deadline (`[blobs] timeout_ms`). */
  timeoutMs: number;
  maxStuck?: number;
}

export class DeadlineBlobStore implements BlobStore {
  /** Opens the store `open` makes (a directory's mkdir may hang too), within the deadline, and wraps it. */
  static async open(open: () => Promise<BlobStore>, options: DeadlineOptions): Promise<DeadlineBlobStore> {
    const opening = open();
    const inner = await within(opening, options.timeoutMs, LATE);
    if (inner === LATE) {
      // Should it open after all, nobody uses it; a failure then is nobody's either.
      opening.catch(() => undefined);
      throw backendUnavailable('blob store', `did not answer open within ${options.timeoutMs} ms`, undefined, { blobStore: 'file', operation: 'open' });
    }
    return new DeadlineBlobStore(inner, options);
  }

  /** Never a directory to stream from: reads go through `read`, with their deadline. */
  readonly dir = undefined;
  readonly #inner: BlobStore;
  readonly #timeoutMs: number;
  readonly #maxStuck: number;
  /** Calls past their deadline that have not returned yet. */
  #stuck = 0;

  constructor(inner: BlobStore, options: DeadlineOptions) {
    this.#inner = inner;
    this.#timeoutMs = options.timeoutMs;
    this.#maxStuck = options.maxStuck ?? DEFAULT_MAX_STUCK;
  }

  /** Calls past their deadline and still unanswered (for tests and the logs). */
  get stuck(): number {
    return this.#stuck;
  }

  async createWriter(options?: { size?: number | undefined }): Promise<BlobWriter> {
    const writer = await this.#call('createWriter', () => this.#inner.createWriter(options));
    return {
      write: (chunk) => this.#call('write', () => writer.write(chunk)),
      commit: () => this.#call('commit', () => writer.commit()),
      abort: () => this.#call('abort', () => writer.abort()),
    };
  }

  async *read(blobId: string, offset: number, length: number): AsyncIterable<Uint8Array> {
    const iterator = this.#inner.read(blobId, offset, length)[Symbol.asyncIterator]();
    let finished = false;
    try {
      for (;;) {
        const next = await this.#call('read', () => iterator.next());
        if (next.done) {
          finished = true;
          return;
        }
        yield next.value;
      }
    } finally {
      // Left early (the reader stopped, or a read failed or is late): the file is closed once the
      // read under way returns, without waiting for it here.
      if (!finished) void Promise.resolve(iterator.return?.()).catch(() => undefined);
    }
  }

  delete(blobIds: readonly string[]): Promise<void> {
    return this.#call('delete', () => this.#inner.delete(blobIds));
  }

  list(options?: SweepOptions): Promise<string[]> {
    return this.#inner.list(options);
  }

  clearTemporary(options?: SweepOptions): Promise<number> {
    return this.#inner.clearTemporary(options);
  }

  checkReachable(): Promise<void> {
    return this.#call('checkReachable', () => this.#inner.checkReachable());
  }

  close(): Promise<void> {
    return this.#inner.close();
  }

  /** Runs `run` with the deadline; refuses at once while too many earlier calls are stuck. */
  async #call<T>(operation: string, run: () => Promise<T>): Promise<T> {
    if (this.#stuck >= this.#maxStuck) throw this.#fault(operation, `has ${this.#stuck} calls unanswered for over ${this.#timeoutMs} ms`);
    const pending = run();
    const answer = await within(pending, this.#timeoutMs, LATE);
    if (answer !== LATE) return answer;
    // Past its deadline: counted as stuck until it returns at last (its answer, or failure, then goes nowhere).
    this.#stuck++;
    const returned = (): void => {
      this.#stuck--;
    };
    pending.then(returned, returned);
    throw this.#fault(operation, `did not answer ${operation} within ${this.#timeoutMs} ms`);
  }

  #fault(operation: string, why: string): BackendFault {
    return backendUnavailable('blob store', why, undefined, { blobStore: 'file', operation, timeoutMs: this.#timeoutMs, stuck: this.#stuck });
  }
}
