/**
 * The edge's held log records on disk, `<data dir>/logs/held-records` (HELD_RECORDS_FILE beside the
 * job spools): the records pending-records.ts holds while the database is away, each appended with
 * one synchronous write before its response completes, so it is in the OS before the client has
 * the answer and survives the process being killed. The next start reads them back.
 *
 * Each entry is framed as [u32 magic][u32 payload length][u32 CRC-32 of the payload][payload], all
 * little-endian; the payload is the UTF-8 JSON of `{ v: 1, host, record, requestRawHeaders,
 * responseRawHeaders }`. JSON round-trips every field a record has (strings, whatever their
 * characters, finite numbers, booleans, string maps), and the raw header lists are kept as they
 * were, so a record read back is completed (zone name, custom fields) exactly as the held one would
 * have been. Reading keeps every entry whose magic, length, checksum and shape are right: bytes
 * after the last such entry (a write cut short) are cut, and bytes between entries that are not
 * one (a damaged file) are skipped, up to the next entry found by its magic, and counted.
 *
 * The file holds request headers (Authorization and Cookie among them: custom fields are taken
 * from them once the zone is known), so it is made readable by the server's user only.
 */
import { closeSync, fstatSync, ftruncateSync, mkdirSync, openSync, readSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { crc32 } from 'node:zlib';
import { replaceFileDurablySync } from '../core/fs/durable-file.ts';
import type { HttpRequestRecord } from '../logs/http-request-record.ts';
import type { PendingRecord } from './pending-records.ts';

/** The file's name in `<data dir>/logs`. */
export const HELD_RECORDS_FILE = 'held-records';
/** What the file may hold on disk, by default (docs/edge-and-logs.md). */
export const MAX_HELD_FILE_BYTES = 64 * 1024 * 1024;

const MAGIC = Buffer.from('EHR1', 'latin1');
const HEADER_BYTES = 12;
const FILE_MODE = 0o600;

/** A held record read back, with its entry as the file holds it. */
export interface HeldEntry {
  entry: PendingRecord;
  frame: Buffer;
}

export interface HeldScan {
  entries: HeldEntry[];
  /** Bytes between entries that are not one (a damaged file): skipped. */
  skippedBytes: number;
  /** Bytes after the last whole entry (a write cut short, or damage at the end): cut. */
  trailingBytes: number;
}

/** One record's entry, as append writes it. */
export function encodeHeld(entry: PendingRecord): Buffer {
  const json = JSON.stringify({
    v: 1,
    host: entry.host,
    record: entry.record,
    requestRawHeaders: entry.requestRawHeaders,
    responseRawHeaders: entry.responseRawHeaders,
  });
  const length = Buffer.byteLength(json, 'utf8');
  const frame = Buffer.allocUnsafe(HEADER_BYTES + length);
  MAGIC.copy(frame, 0);
  frame.writeUInt32LE(length, 4);
  frame.write(json, HEADER_BYTES, 'utf8');
  frame.writeUInt32LE(crc32(frame.subarray(HEADER_BYTES)), 8);
  return frame;
}

/** Every whole, intact entry of `data`, in order, and what was not one. */
export function scanHeld(data: Buffer): HeldScan {
  const entries: HeldEntry[] = [];
  let skippedBytes = 0;
  let end = 0;
  let at = 0;
  while (at >= 0 && at + HEADER_BYTES <= data.length) {
    const found = entryAt(data, at);
    if (found === null) {
      at = data.indexOf(MAGIC, at + 1);
      continue;
    }
    skippedBytes += at - end;
    entries.push(found);
    at += found.frame.length;
    end = at;
  }
  return { entries, skippedBytes, trailingBytes: data.length - end };
}

function entryAt(data: Buffer, at: number): HeldEntry | null {
  if (data.compare(MAGIC, 0, MAGIC.length, at, at + MAGIC.length) !== 0) return null;
  const length = data.readUInt32LE(at + 4);
  const end = at + HEADER_BYTES + length;
  if (end > data.length) return null;
  const payload = data.subarray(at + HEADER_BYTES, end);
  if (crc32(payload) !== data.readUInt32LE(at + 8)) return null;
  const entry = decode(payload);
  // A copy: the entry outlives the buffer read, which need not stay in memory for it.
  return entry === null ? null : { entry, frame: Buffer.from(data.subarray(at, end)) };
}

function decode(payload: Buffer): PendingRecord | null {
  let value: unknown;
  try {
    value = JSON.parse(payload.toString('utf8'));
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const { v, host, record, requestRawHeaders, responseRawHeaders } = value as Record<string, unknown>;
  if (v !== 1 || typeof host !== 'string' || typeof record !== 'object' || record === null || Array.isArray(record)) return null;
  if (!isHeaderList(requestRawHeaders) || !isHeaderList(responseRawHeaders)) return null;
  return { host, record: record as HttpRequestRecord, requestRawHeaders, responseRawHeaders };
}

function isHeaderList(value: unknown): value is string[] {
  return Array.isArray(value) && value.length % 2 === 0 && value.every((item) => typeof item === 'string');
}

export class HeldRecordsFile {
  readonly path: string;
  /** -1 after a replace whose new file could not be opened: opened again at the next write. */
  #fd: number;
  #size: number;

  private constructor(path: string, fd: number, size: number) {
    this.path = path;
    this.#fd = fd;
    this.#size = size;
  }

  /**
   * Opens the file (making it and its directory when missing) and reads what an earlier run left:
   * the last `maxBytes` of it at most (`unreadBytes`: what came before, left unread). Throws when
   * the file cannot be opened or read.
   */
  static open(path: string, maxBytes: number): { file: HeldRecordsFile; scan: HeldScan & { unreadBytes: number } } {
    mkdirSync(dirname(path), { recursive: true });
    const fd = openSync(path, 'a+', FILE_MODE);
    try {
      const size = fstatSync(fd).size;
      const from = Math.max(0, size - maxBytes);
      const data = Buffer.allocUnsafe(size - from);
      let read = 0;
      while (read < data.length) {
        const n = readSync(fd, data, read, data.length - read, from + read);
        if (n === 0) break;
        read += n;
      }
      return { file: new HeldRecordsFile(path, fd, size), scan: { ...scanHeld(data.subarray(0, read)), unreadBytes: from } };
    } catch (error) {
      closeSync(fd);
      throw error;
    }
  }

  /** Bytes in the file. */
  get size(): number {
    return this.#size;
  }

  /** Appends one entry; returns once it is in the OS (not fsynced). Throws when it could not be written whole (then none of it stays). */
  append(frame: Buffer): void {
    const fd = this.#open();
    let written = 0;
    try {
      while (written < frame.length) written += writeSync(fd, frame, written, frame.length - written);
    } catch (error) {
      // A part written before the disk filled up goes again; failing that, the next start cuts it.
      if (written > 0) {
        try {
          ftruncateSync(fd, this.#size);
        } catch {
          this.#size += written;
        }
      }
      throw error;
    }
    this.#size += frame.length;
  }

  /** Makes the file hold exactly `frames`, durably (fsynced, renamed into place, its directory fsynced). Throws when it could not. */
  replace(frames: readonly Buffer[]): void {
    const data = Buffer.concat(frames);
    replaceFileDurablySync(this.path, data, { mode: FILE_MODE });
    // The open descriptor holds the file that was replaced: the new one takes the appends from now.
    if (this.#fd >= 0) closeSync(this.#fd);
    this.#fd = -1;
    this.#open();
  }

  /** Empties the file (every record it held went to its jobs). */
  clear(): void {
    ftruncateSync(this.#open(), 0);
    this.#size = 0;
  }

  close(): void {
    if (this.#fd >= 0) closeSync(this.#fd);
    this.#fd = -1;
  }

  #open(): number {
    if (this.#fd < 0) {
      this.#fd = openSync(this.path, 'a+', FILE_MODE);
      this.#size = fstatSync(this.#fd).size;
    }
    return this.#fd;
  }
}
