/**
 * Coalesced fsync of one path: a caller waits for an fsync that *started after* its call, and every
 * caller that arrives while one runs shares the next. This is how many writes share one flush.
 *
 * The file is opened at the first flush and kept open until close(): an open and a close per flush
 * cost two more trips to the thread pool than the fsync itself. That is safe for the files this
 * syncs: a directory, and a SQLite WAL, which SQLite only deletes when the last connection to the
 * database closes (a WAL reset rewrites the same file), and the connection whose writes this syncs
 * is open for as long as this is used.
 */
import { open, type FileHandle } from 'node:fs/promises';

export class CoalescedFsync {
  readonly #path: string;
  readonly #dataOnly: boolean;
  #handle: FileHandle | null = null;
  #closed = false;
  #running: Promise<void> | null = null;
  #next: Promise<void> | null = null;

  /** `dataOnly` uses fdatasync (enough for file contents; directories need a full fsync). */
  constructor(path: string, options: { dataOnly: boolean }) {
    this.#path = path;
    this.#dataOnly = options.dataOnly;
  }

  sync(): Promise<void> {
    if (!this.#running) {
      this.#running = this.#flush().finally(() => {
        this.#running = null;
      });
      return this.#running;
    }
    this.#next ??= this.#running
      .catch(() => undefined)
      .then(() => {
        this.#next = null;
        return this.sync();
      });
    return this.#next;
  }

  /** Waits for the flushes already asked for, then lets the file go. */
  async close(): Promise<void> {
    await this.#next?.catch(() => undefined);
    await this.#running?.catch(() => undefined);
    this.#closed = true;
    const handle = this.#handle;
    this.#handle = null;
    await handle?.close();
  }

  async #flush(): Promise<void> {
    if (this.#closed) {
      // A straggler after close (a write finishing as its store shuts down): a file opened for it alone.
      const handle = await this.#open();
      try {
        await this.#syncOf(handle);
      } finally {
        await handle?.close();
      }
      return;
    }
    this.#handle ??= await this.#open();
    await this.#syncOf(this.#handle);
  }

  /** The file, or null when it is missing: SQLite checkpoints and syncs a WAL before deleting it, so nothing is left to flush. */
  #open(): Promise<FileHandle | null> {
    return open(this.#path, 'r').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return null;
      throw error;
    });
  }

  async #syncOf(handle: FileHandle | null): Promise<void> {
    if (handle) await (this.#dataOnly ? handle.datasync() : handle.sync());
  }
}
