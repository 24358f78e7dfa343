/**
 * Log records of requests the edge answered while it could not tell their zone (the database
 * away, the host not seen before): held, and handed to the zone's log jobs once the database
 * answers again, so that every request still makes its line.
 *
 * Held on disk as well as in memory: each record is appended to `path` (held-records-file.ts)
 * before its response completes, so a `kill -9` during the outage loses none; the next start reads
 * them back and hands them on the same way. Once the records a drain took are in their jobs'
 * spools (emit's `written`), the file is emptied (or, if records are still held, rewritten durably
 * with those alone), so no restart gives them again; a kill between the two gives them twice, never
 * none. A record whose write fails (a full disk) is held in memory only, counted, with one log line
 * when writes start failing and one when they work again (the file is tried again at most once a
 * second, rewritten whole with every record held); nothing here throws at a request.
 *
 * Bounded: at most `max` records (MAX_PENDING) and half of `maxFileBytes` of entries are held, and
 * the file never grows past `maxFileBytes` (it is rewritten with the held records alone first);
 * past the bounds the oldest go, counted, with one log line per outage.
 */
import { backendFaultOf } from '../core/errors/backend-fault.ts';
import { systemClock, type Clock } from '../core/clock.ts';
import type { Logger } from '../core/log.ts';
import type { CustomFieldNames } from '../db/control-store.ts';
import { extractCustomFields } from '../logs/custom-fields.ts';
import type { HttpRequestRecord } from '../logs/http-request-record.ts';
import type { ActiveLogJob } from '../logs/log-pipeline.ts';
import { encodeHeld, HeldRecordsFile, MAX_HELD_FILE_BYTES } from './held-records-file.ts';
import type { ZoneConfig } from './zone-config-cache.ts';

export const MAX_PENDING = 10_000;
const RETRY_MS = 1_000;
const EMPTY = Buffer.alloc(0);
/** While writes to the file fail, how often one is tried (the others go to memory only at once). */
const WRITE_RETRY_MS = 1_000;

/** A request's record without its zone's part (ZoneName, custom fields), and the headers those come from. */
export interface PendingRecord {
  host: string;
  record: HttpRequestRecord;
  requestRawHeaders: readonly string[];
  responseRawHeaders: readonly string[];
}

export interface PendingRecordsOptions {
  /** The host's zone config (ZoneConfigCache.lookup): throws while the database is away. */
  resolve(host: string): Promise<ZoneConfig | null>;
  /** Hands the record to the jobs; `written` runs once it is in their spools (in the OS). */
  emit(jobs: readonly ActiveLogJob[], record: HttpRequestRecord, written: () => void): void;
  logger: Logger;
  /** What times the retries of a failing file (default: the system's). */
  clock?: Clock;
  /** The file the records are held in (`<data dir>/logs/held-records`); none: memory only. */
  path?: string;
  max?: number;
  /** Bytes the file may hold (default MAX_HELD_FILE_BYTES). */
  maxFileBytes?: number;
}

/** A held record and its entry as the file holds it (kept, so that rewriting the file encodes nothing again; empty: it could not be encoded, memory only). */
interface Held {
  entry: PendingRecord;
  frame: Buffer;
}

export class PendingRecords {
  readonly #options: PendingRecordsOptions;
  readonly #clock: Clock;
  readonly #max: number;
  readonly #maxFileBytes: number;
  /** What the held records' entries may take together: half the file, so that it is rewritten at most once per half of it appended. */
  readonly #maxHeldBytes: number;
  #queue: Held[] = [];
  #queueBytes = 0;
  /**
   * Records a drain handed to their jobs whose spool writes have not completed yet (still kept by
   * any rewrite of the file), each with its write, resolved once it is in the OS.
   */
  readonly #delivering = new Map<Held, Promise<void>>();
  /** Records left the queue since the file was last emptied or rewritten: the file still gives them. */
  #untrimmed = false;
  #file: HeldRecordsFile | null = null;
  /** Writes to the file are failing (logged when it begins and when it ends). */
  #fileFailing = false;
  /** While they fail: when the file is tried again. */
  #retryAt = 0;
  /** Records held in memory only since the last report (their write failed). */
  #memoryOnly = 0;
  #dropped = 0;
  /** Records dropped for room since the process started (the metric; #dropped is this outage's, for its log line). */
  #droppedTotal = 0;
  #timer: NodeJS.Timeout | null = null;
  /** A drain is under way (it schedules the next one when it ends). */
  #draining = false;
  #closed = false;

  constructor(options: PendingRecordsOptions) {
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#max = options.max ?? MAX_PENDING;
    this.#maxFileBytes = options.maxFileBytes ?? MAX_HELD_FILE_BYTES;
    this.#maxHeldBytes = Math.floor(this.#maxFileBytes / 2);
    if (options.path !== undefined) this.#openFile(options.path);
  }

  #now(): number {
    return this.#clock.now();
  }

  /** Records dropped for room (the oldest, past the bounds) since the process started. */
  get droppedTotal(): number {
    return this.#droppedTotal;
  }

  get size(): number {
    return this.#queue.length;
  }

  /** Holds the record: in the file before this returns (unless its write failed), and in memory. Never throws. */
  add(entry: PendingRecord): void {
    if (this.#closed) return;
    if (this.#queue.length === 0 && this.#dropped === 0) {
      this.#options.logger.warn({ host: entry.host }, 'Log records are held until the database answers again: the edge could not look up their zone.');
    }
    let frame: Buffer = EMPTY;
    try {
      frame = encodeHeld(entry);
    } catch (error) {
      this.#memoryOnly += 1;
      this.#noteWrite(error);
    }
    this.#queue.push({ entry, frame });
    this.#queueBytes += frame.length;
    this.#bound();
    if (frame.length > 0 && this.#queue.at(-1)?.entry === entry) this.#write(frame);
    this.#schedule();
  }

  /**
   * Stops draining; the file keeps what is still held, for the next start. Resolves once the
   * records already handed on are in their spools and out of the file (a lookup under way is not
   * waited for: what it would have handed on stays held).
   */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    await Promise.all(this.#delivering.values());
    if (this.#untrimmed) this.#rewrite();
    this.#file?.close();
    this.#file = null;
  }

  /** Opens the file and takes back what an earlier process left in it; a file that cannot be read leaves the records in memory only. */
  #openFile(path: string): void {
    const { logger } = this.#options;
    let opened: ReturnType<typeof HeldRecordsFile.open>;
    try {
      opened = HeldRecordsFile.open(path, this.#maxFileBytes);
    } catch (error) {
      this.#fileFailing = true;
      logger.error({ err: error, path }, 'Could not open the file of held log records: records held while the database is away are kept in memory only.');
      return;
    }
    const { file, scan } = opened;
    this.#file = file;
    for (const held of scan.entries) {
      this.#queue.push(held);
      this.#queueBytes += held.frame.length;
    }
    this.#bound();
    const dropped = this.#dropped;
    if (scan.skippedBytes > 0 || scan.trailingBytes > 0 || scan.unreadBytes > 0) {
      logger.warn(
        { path, skippedBytes: scan.skippedBytes, trailingBytes: scan.trailingBytes, unreadBytes: scan.unreadBytes, kept: this.#queue.length },
        'The file of held log records had bytes that are not whole records (a write cut short, damage, or more than its bound): the records that could be read are kept, the rest cut.',
      );
    }
    if (this.#queue.length > 0) {
      logger.info({ path, records: this.#queue.length, dropped }, "Log records held by an earlier run go to their zones' jobs once the database answers.");
    }
    // Anything read but not kept (cut, skipped, dropped, left unread) leaves the file now.
    if (scan.trailingBytes > 0 || scan.skippedBytes > 0 || scan.unreadBytes > 0 || dropped > 0) this.#rewrite();
    if (this.#queue.length > 0) this.#schedule();
  }

  /** Drops the oldest records past the bounds, counted. */
  #bound(): void {
    while (this.#queue.length > this.#max || (this.#queueBytes > this.#maxHeldBytes && this.#queue.length > 0)) {
      this.#queueBytes -= this.#queue.shift()!.frame.length;
      this.#dropped += 1;
      this.#droppedTotal += 1;
    }
  }

  /**
   * Writes one record's entry: appended, or with the held records alone when the file would pass
   * its bound. While writes fail, records are held in memory only, and the file is tried again at
   * most once a second, rewritten whole (so the records that missed it are in it again).
   */
  #write(frame: Buffer): void {
    const file = this.#file;
    if (file === null) {
      // No file (none given, or it could not be opened at start, which was logged).
      if (this.#options.path !== undefined) this.#memoryOnly += 1;
      return;
    }
    if (this.#fileFailing && this.#now() < this.#retryAt) {
      this.#memoryOnly += 1;
      return;
    }
    try {
      if (this.#fileFailing || file.size + frame.length > this.#maxFileBytes) this.#replaceFile(file);
      else file.append(frame);
    } catch (error) {
      this.#memoryOnly += 1;
      this.#noteWrite(error);
      return;
    }
    this.#noteWrite(null);
  }

  /** Rewrites the file with the records still held (and those whose delivery has not completed). Never throws. */
  #rewrite(): void {
    const file = this.#file;
    if (file === null) return;
    try {
      if (this.#queue.length === 0 && this.#delivering.size === 0) file.clear();
      else this.#replaceFile(file);
    } catch (error) {
      this.#noteWrite(error);
      return;
    }
    this.#untrimmed = false;
    this.#noteWrite(null);
  }

  #replaceFile(file: HeldRecordsFile): void {
    file.replace([...this.#delivering.keys(), ...this.#queue].map((held) => held.frame));
  }

  /** One line when writes to the file start failing, one when they work again. */
  #noteWrite(error: unknown): void {
    if (error === null) {
      if (!this.#fileFailing || this.#file === null) return;
      this.#fileFailing = false;
      this.#options.logger.info({ path: this.#file.path }, 'Held log records are written to their file again.');
      return;
    }
    this.#retryAt = this.#now() + WRITE_RETRY_MS;
    if (this.#fileFailing) return;
    this.#fileFailing = true;
    this.#options.logger.error(
      { err: error, path: this.#file?.path },
      'Could not write held log records to their file (a full disk?): they are kept in memory only, and lost if the process is killed, until writes work again.',
    );
  }

  #schedule(): void {
    if (this.#timer || this.#closed) return;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      if (this.#draining) return;
      this.#draining = true;
      this.#drain()
        .catch((error: unknown) => this.#options.logger.error({ err: error }, 'Handing held log records to their jobs failed; retried.'))
        .finally(() => {
          this.#draining = false;
          if (this.#queue.length > 0) this.#schedule();
        });
    }, RETRY_MS);
    this.#timer.unref();
  }

  /**
   * Hands every held record whose zone can now be read to that zone's jobs, stopping at the first
   * fault (tried again later); then, once those records are in their spools, takes them out of the
   * file.
   */
  async #drain(): Promise<void> {
    let delivered = 0;
    const written: Array<Promise<void>> = [];
    try {
      const configs = new Map<string, ZoneConfig | null>();
      while (this.#queue.length > 0 && !this.#closed) {
        const held = this.#queue[0]!;
        let config = configs.get(held.entry.host);
        if (config === undefined) {
          try {
            config = await this.#options.resolve(held.entry.host);
          } catch (error) {
            if (backendFaultOf(error) === undefined) this.#options.logger.error({ err: error }, 'Held log records could not be resolved; retried.');
            break;
          }
          configs.set(held.entry.host, config);
          // Closed meanwhile, or the record dropped for room while the zone was read: the loop looks again.
          if (this.#closed || this.#queue[0] !== held) continue;
        }
        this.#queue.shift();
        this.#queueBytes -= held.frame.length;
        this.#untrimmed = true;
        if (config === null || config.jobs.length === 0) continue;
        written.push(this.#emit(held, config));
        delivered += 1;
      }
    } finally {
      await Promise.all(written);
      if (this.#untrimmed) this.#rewrite();
    }
    if (this.#queue.length > 0 || this.#closed) return;
    if (delivered > 0 || this.#dropped > 0 || this.#memoryOnly > 0) {
      this.#options.logger.info(
        { delivered, dropped: this.#dropped, ...(this.#memoryOnly > 0 ? { heldInMemoryOnly: this.#memoryOnly } : {}) },
        'The database answers again: held log records went to their jobs.',
      );
    }
    this.#dropped = 0;
    this.#memoryOnly = 0;
  }

  /** Resolves once the record is in its jobs' spools (or emit failed, logged). */
  #emit(held: Held, config: ZoneConfig): Promise<void> {
    let done = (): void => {};
    const delivery = new Promise<void>((resolve) => {
      done = () => {
        this.#delivering.delete(held);
        resolve();
      };
    });
    this.#delivering.set(held, delivery);
    try {
      this.#options.emit(config.jobs, complete(held.entry, config.zone.name, config.fields), done);
    } catch (error) {
      this.#options.logger.error({ err: error, rayId: held.entry.record.RayID }, 'A held log record could not be handed to its jobs.');
      done();
    }
    return delivery;
  }
}

/** The record with its zone's part filled in. */
function complete(entry: PendingRecord, zoneName: string, fields: CustomFieldNames | null): HttpRequestRecord {
  return { ...entry.record, ZoneName: zoneName, ...(fields ? extractCustomFields(fields, entry.requestRawHeaders, entry.responseRawHeaders) : {}) };
}
