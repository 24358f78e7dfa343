/**
 * The data dir's file system, kept usable when it fills up. Writes are refused (a BackendFault:
 * the disk is full, a retryable 503/507) while less than `minFreeBytes` is free, and after a write
 * failed for lack of space (ENOSPC, SQLITE_FULL) until the floor is free again. Deletes must still
 * go through, and their SQLite writes need a little room too: `reserveBytes` are held in
 * `<dir>/disk-reserve`, and released (logged) when a delete meets a full disk. Once space is back
 * (checked every second while full), the reserve is made again and writes are accepted: nothing
 * has to be done by hand. statfs is asked at most once a second on the write path.
 */
import { randomFillSync } from 'node:crypto';
import { open, rename, rm, stat, statfs } from 'node:fs/promises';
import { join } from 'node:path';
import { backendFaultOf, backendFull, type BackendFault } from '../errors/backend-fault.ts';
import type { Logger } from '../log.ts';

export const RESERVE_FILE = 'disk-reserve';
/** How long a free-space reading is trusted on the write path. */
const FREE_CACHE_MS = 1_000;
/** How often a full disk is looked at again, requests or not. */
const RECHECK_MS = 1_000;
const CHUNK_BYTES = 1024 * 1024;

export interface DiskGuardOptions {
  /** The data dir. */
  dir: string;
  minFreeBytes: number;
  /** 0: no reserve. */
  reserveBytes: number;
  logger: Logger;
  /** Free bytes of the file system holding `dir` (default: statfs's blocks available to unprivileged users). */
  freeBytesOf?: (dir: string) => Promise<number>;
}

export interface DiskState {
  freeBytes: number;
  minFreeBytes: number;
  /** Bytes held in the reserve file now (0 once released). */
  reserveBytes: number;
  /** Writes are refused. */
  full: boolean;
}

export class DiskGuard {
  readonly #options: DiskGuardOptions;
  readonly #reservePath: string;
  readonly #freeBytesOf: (dir: string) => Promise<number>;
  #free: { bytes: number; at: number } | null = null;
  /** Why writes are refused, since when; null while they are accepted. */
  #full: { since: number; why: string } | null = null;
  #reserveHeld = 0;
  #timer: NodeJS.Timeout | null = null;
  #rechecking: Promise<void> | null = null;

  private constructor(options: DiskGuardOptions) {
    this.#options = options;
    this.#reservePath = join(options.dir, RESERVE_FILE);
    this.#freeBytesOf = options.freeBytesOf ?? defaultFreeBytes;
  }

  /** Opens the guard on `dir`, making the reserve if it is missing and there is room for it. */
  static async open(options: DiskGuardOptions): Promise<DiskGuard> {
    const guard = new DiskGuard(options);
    const existing = await stat(guard.#reservePath).then(
      (s) => s.size,
      () => 0,
    );
    if (existing === options.reserveBytes && existing > 0) guard.#reserveHeld = existing;
    else await guard.#makeReserve();
    return guard;
  }

  /** Free bytes now (from statfs, or a reading under a second old unless `fresh`). */
  async freeBytes(fresh = false): Promise<number> {
    const now = Date.now();
    if (!fresh && this.#free && now - this.#free.at < FREE_CACHE_MS) return this.#free.bytes;
    const bytes = await this.#freeBytesOf(this.#options.dir);
    this.#free = { bytes, at: now };
    return bytes;
  }

  /** Writes are refused now (the disk filled up or is below its floor). */
  get full(): boolean {
    return this.#full !== null;
  }

  /** Resolves when a write may go ahead; else throws the disk-full BackendFault. */
  async assertWritable(): Promise<void> {
    if (this.#full === null) {
      const free = await this.freeBytes();
      if (free >= this.#options.minFreeBytes) return;
      this.#enterFull(`${free} bytes free, below [disk] min_free_bytes (${this.#options.minFreeBytes})`);
    }
    throw this.#fault();
  }

  /** Called with a write's failure: a full disk makes the guard refuse writes until space is back. True if it was one. */
  noteFailure(error: unknown): boolean {
    const fault = backendFaultOf(error);
    if (fault?.code !== 'BACKEND_FULL' || fault.backend !== 'disk') return false;
    this.#enterFull(`a write failed for lack of space (${String(fault.details?.code ?? 'ENOSPC')})`);
    return true;
  }

  /** Gives up the reserve (so that a delete's own writes find room); false when none is held. */
  async releaseReserve(): Promise<boolean> {
    if (this.#reserveHeld === 0) return false;
    const bytes = this.#reserveHeld;
    this.#reserveHeld = 0;
    await rm(this.#reservePath, { force: true });
    this.#free = null;
    this.#options.logger.warn(
      { dataDir: this.#options.dir, released: bytes },
      'Disk full: released the reserve so that deletes can go through; writes are refused until space is freed, then the reserve is made again.',
    );
    return true;
  }

  /** What /readyz and /metrics show; looks at the disk afresh. */
  async state(): Promise<DiskState> {
    if (this.#full) await this.#recheck();
    const freeBytes = await this.freeBytes(true);
    return {
      freeBytes,
      minFreeBytes: this.#options.minFreeBytes,
      reserveBytes: this.#reserveHeld,
      full: this.#full !== null || freeBytes < this.#options.minFreeBytes,
    };
  }

  close(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }

  #fault(): BackendFault {
    return backendFull('disk', undefined, { why: this.#full?.why });
  }

  #enterFull(why: string): void {
    this.#free = null;
    if (this.#full) return;
    this.#full = { since: Date.now(), why };
    this.#options.logger.warn(
      { dataDir: this.#options.dir, why, minFreeBytes: this.#options.minFreeBytes },
      'Disk full: writes are refused (deletes still work) until space is freed under the data dir.',
    );
    this.#timer = setInterval(() => void this.#recheck(), RECHECK_MS);
    this.#timer.unref();
  }

  /** Leaves the full state once the floor (and room for the reserve, if it was released) is free again. */
  #recheck(): Promise<void> {
    this.#rechecking ??= (async () => {
      try {
        const free = await this.freeBytes(true);
        const needed = this.#options.minFreeBytes + (this.#reserveHeld === 0 ? this.#options.reserveBytes : 0);
        if (free < needed || this.#full === null) return;
        if (this.#reserveHeld === 0) await this.#makeReserve();
        if (this.#options.reserveBytes > 0 && this.#reserveHeld === 0) return;
        const since = this.#full.since;
        this.#full = null;
        if (this.#timer) clearInterval(this.#timer);
        this.#timer = null;
        this.#options.logger.info(
          { dataDir: this.#options.dir, freeBytes: await this.freeBytes(true), fullForMs: Date.now() - since },
          'Disk space is back: writes are accepted again.',
        );
      } catch (error) {
        this.#options.logger.warn({ err: error, dataDir: this.#options.dir }, "Could not check the data dir's free space; it is checked again in a second.");
      } finally {
        this.#rechecking = null;
      }
    })();
    return this.#rechecking;
  }

  /**
   * Writes the reserve file: random bytes (a compressing file system would not store zeros), made
   * durable, and only when the floor stays free after it. A partial file (no room after all) goes.
   */
  async #makeReserve(): Promise<void> {
    const { reserveBytes, minFreeBytes } = this.#options;
    if (reserveBytes === 0) return;
    const free = await this.freeBytes(true);
    if (free < reserveBytes + minFreeBytes) {
      this.#options.logger.warn(
        { dataDir: this.#options.dir, freeBytes: free, reserveBytes },
        'No room for the disk reserve: on a full disk, deletes may fail until space is freed. It is made once there is room.',
      );
      return;
    }
    const tmp = `${this.#reservePath}.tmp`;
    const file = await open(tmp, 'w', 0o600);
    try {
      const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
      for (let written = 0; written < reserveBytes; written += CHUNK_BYTES) {
        const n = Math.min(CHUNK_BYTES, reserveBytes - written);
        randomFillSync(chunk, 0, n);
        await file.write(chunk, 0, n);
      }
      await file.sync();
    } catch (error) {
      await file.close().catch(() => undefined);
      await rm(tmp, { force: true });
      this.#options.logger.warn({ err: error, dataDir: this.#options.dir }, 'Could not make the disk reserve; it is tried again once there is room.');
      return;
    }
    await file.close();
    await rename(tmp, this.#reservePath);
    this.#reserveHeld = reserveBytes;
    this.#free = null;
  }
}

async function defaultFreeBytes(dir: string): Promise<number> {
  const s = await statfs(dir);
  return s.bavail * s.bsize;
}
