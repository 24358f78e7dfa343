/**
 * Log records of requests the edge answered while it could not tell their zone (the database
 * away, the host not seen before): held in memory and handed to the zone's log jobs once the
 * database answers again, so that every request still makes its line. Bounded: past
 * MAX_PENDING the oldest go, counted, with one log line per outage. Lost if the process is killed
 * before the database is back (they were never on disk), which docs/operations.md says.
 */
import { backendFaultOf } from '../core/errors/backend-fault.ts';
import type { Logger } from '../core/log.ts';
import type { CustomFieldNames } from '../db/control-store.ts';
import { extractCustomFields } from '../logs/custom-fields.ts';
import type { HttpRequestRecord } from '../logs/http-request-record.ts';
import type { ActiveLogJob } from '../logs/log-pipeline.ts';
import type { ZoneConfig } from './zone-config-cache.ts';

export const MAX_PENDING = 10_000;
const RETRY_MS = 1_000;

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
  emit(jobs: readonly ActiveLogJob[], record: HttpRequestRecord): void;
  logger: Logger;
  max?: number;
}

export class PendingRecords {
  readonly #options: PendingRecordsOptions;
  #queue: PendingRecord[] = [];
  #dropped = 0;
  #timer: NodeJS.Timeout | null = null;
  #draining = false;
  #closed = false;

  constructor(options: PendingRecordsOptions) {
    this.#options = options;
  }

  get size(): number {
    return this.#queue.length;
  }

  add(entry: PendingRecord): void {
    if (this.#closed) return;
    if (this.#queue.length === 0 && this.#dropped === 0) {
      this.#options.logger.warn(
        { host: entry.host },
        'Log records are held in memory until the database answers again: the edge could not look up their zone.',
      );
    }
    this.#queue.push(entry);
    if (this.#queue.length > (this.#options.max ?? MAX_PENDING)) {
      this.#queue.shift();
      this.#dropped += 1;
    }
    this.#schedule();
  }

  close(): void {
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
  }

  #schedule(): void {
    if (this.#timer || this.#closed) return;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      void this.#drain();
    }, RETRY_MS);
    this.#timer.unref();
  }

  /** Hands every held record whose zone can now be read to that zone's jobs; stops at the first fault and tries again later. */
  async #drain(): Promise<void> {
    if (this.#draining) return;
    this.#draining = true;
    let delivered = 0;
    try {
      const configs = new Map<string, ZoneConfig | null>();
      while (this.#queue.length > 0) {
        const entry = this.#queue[0]!;
        let config = configs.get(entry.host);
        if (config === undefined) {
          try {
            config = await this.#options.resolve(entry.host);
          } catch (error) {
            if (backendFaultOf(error) === undefined) this.#options.logger.error({ err: error }, 'Held log records could not be resolved; retried.');
            break;
          }
          configs.set(entry.host, config);
        }
        this.#queue.shift();
        if (config === null || config.jobs.length === 0) continue;
        this.#options.emit(config.jobs, complete(entry, config.zone.name, config.fields));
        delivered += 1;
      }
    } finally {
      this.#draining = false;
    }
    if (this.#queue.length > 0) return this.#schedule();
    if (delivered > 0 || this.#dropped > 0) {
      this.#options.logger.info({ delivered, dropped: this.#dropped }, 'The database answers again: held log records went to their jobs.');
    }
    this.#dropped = 0;
  }
}

/** The record with its zone's part filled in. */
function complete(entry: PendingRecord, zoneName: string, fields: CustomFieldNames | null): HttpRequestRecord {
  return { ...entry.record, ZoneName: zoneName, ...(fields ? extractCustomFields(fields, entry.requestRawHeaders, entry.responseRawHeaders) : {}) };
}
