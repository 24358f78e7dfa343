/**
 * Coalesced fsync of one path: a caller waits for an fsync that *started after* its call, and every
 * caller that arrives while one runs shares the next. This is how many writes share one flush.
 */
import { open } from 'node:fs/promises';

export class CoalescedFsync {
  readonly #path: string;
  readonly #dataOnly: boolean;
  #running: Promise<void> | null = null;
  #next: Promise<void> | null = null;

  /** `dataOnly` uses fdatasync (enough for file contents; directories need a full fsync). */
  constructor(path: string, options: { dataOnly: boolean }) {
    this.#path = path;
    this.#dataOnly = options.dataOnly;
  }

  sync(): Promise<void> {
    if (!this.#running) {
      this.#running = this.#flush().finally(() => { this.#running = null; });
      return this.#running;
    }
    this.#next ??= this.#running.catch(() => undefined).then(() => {
      this.#next = null;
      return this.sync();
    });
    return this.#next;
  }

  async #flush(): Promise<void> {
    // Opened afresh each time: the file may have been replaced since (SQLite recreates its WAL).
    // A missing file has nothing to flush: SQLite checkpoints and syncs a WAL before deleting it.
    const handle = await open(this.#path, 'r').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return null;
      throw error;
    });
    if (!handle) return;
    try {
      await (this.#dataOnly ? handle.datasync() : handle.sync());
    } finally {
      await handle.close();
    }
  }
}
