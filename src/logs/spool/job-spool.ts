/**
 * A log job's durable spool: formatted records appended to numbered segment files in the job's
 * directory, shipped in batches from a cursor. Each entry is framed as
 * [u32 byte length][f64 record time, epoch ms][bytes], so any record text (any affixes) round-trips.
 *
 * Durability: `append` is a synchronous write, so a record is in the OS before the edge finishes
 * its response and survives the process being killed. A batch's range is written to `inflight`
 * before delivery and the cursor advanced after it, so a restart re-delivers exactly the same batch
 * (same range, same object name) instead of a different, overlapping one. The cursor file is
 * replaced durably (fsynced before its rename, its directory fsynced after), so after a power loss
 * too the spool never moves back behind a delivered batch. A torn entry at the end of the newest
 * segment (a kill mid-write) is cut off when the spool opens.
 *
 * Bounded: the segment files on disk never exceed the job's `maxBytes`, nor all spools together
 * their SpoolBudget. A record that does not fit is not written: `stage` answers false and counts it
 * in `dropped`, at once (the edge never waits for room). Segments are at most an eighth of the cap,
 * so the delivered part of the oldest segment, kept until the cursor leaves it, takes little of it.
 */
import {
  closeSync,
  existsSync,
  fstatSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { replaceFileDurably } from '../../core/fs/durable-file.ts';
import { SpoolBudget } from './spool-budget.ts';

const HEADER_BYTES = 12;
const SEGMENT_MAX_BYTES = 16 * 1024 * 1024;
const SEGMENT_MIN_BYTES = 4 * 1024;
const CHUNK_BYTES = 1024 * 1024;

export interface SpoolPosition {
  segment: number;
  offset: number;
}

export interface SpoolBatch {
  start: SpoolPosition;
  end: SpoolPosition;
  /** The records' texts, concatenated in order. */
  texts: string[];
  bytes: number;
  firstTime: number;
  lastTime: number;
}

export interface JobSpoolLimits {
  /** What this job's segment files may hold on disk (default: unbounded). */
  maxBytes?: number;
  /** What every spool together may hold (default: unbounded). */
  budget?: SpoolBudget;
}

interface CursorFile {
  committed: SpoolPosition;
  inflight: { start: SpoolPosition; end: SpoolPosition } | null;
}

export class JobSpool {
  readonly dir: string;
  #segments: number[];
  #writeFd: number | null = null;
  #writeSegment: number;
  #writeOffset: number;
  #cursor: CursorFile;
  #removed = false;
  readonly #maxBytes: number;
  readonly #segmentMaxBytes: number;
  readonly #budget: SpoolBudget;
  /** Bytes of the segment files on disk, plus what is staged for them. */
  #diskBytes = 0;
  /** Records refused for want of room since the spool opened. */
  #dropped = 0;
  /** Records staged since the last flush: dropped (counted) if their write fails. */
  #stagedRecords = 0;
  /** Framed entries waiting for `flush`, in one buffer that grows to the largest turn's worth. */
  #stage: Buffer = Buffer.allocUnsafe(64 * 1024);
  #stagedBytes = 0;

  private constructor(dir: string, limits: JobSpoolLimits) {
    this.dir = dir;
    this.#maxBytes = limits.maxBytes ?? Number.POSITIVE_INFINITY;
    this.#segmentMaxBytes = Math.min(SEGMENT_MAX_BYTES, Math.max(SEGMENT_MIN_BYTES, Math.floor(this.#maxBytes / 8)));
    this.#budget = limits.budget ?? SpoolBudget.unbounded();
    mkdirSync(dir, { recursive: true });
    this.#segments = readdirSync(dir)
      .filter((name) => /^\d+\.spool$/.test(name))
      .map((name) => Number.parseInt(name, 10))
      .sort((a, b) => a - b);
    this.#cursor = existsSync(this.#cursorPath())
      ? (JSON.parse(readFileSync(this.#cursorPath(), 'utf8')) as CursorFile)
      : { committed: { segment: this.#segments[0] ?? 1, offset: 0 }, inflight: null };
    this.#writeSegment = this.#segments.at(-1) ?? this.#cursor.committed.segment;
    this.#writeOffset = this.#segments.length > 0 ? this.#repairTail(this.#writeSegment) : 0;
    // What an earlier run left counts against the caps (it may exceed them if they were lowered).
    for (const segment of this.#segments) this.#diskBytes += this.#segmentSize(segment);
    this.#budget.add(this.#diskBytes);
  }

  static open(dir: string, limits: JobSpoolLimits = {}): JobSpool {
    return new JobSpool(dir, limits);
  }

  /** Appends one record's text; returns once the bytes are in the OS (not fsynced). False: no room, dropped. */
  append(text: string, time: number): boolean {
    const accepted = this.stage(text, time);
    this.flush();
    return accepted;
  }

  /** Bytes of this spool's segment files (with what is staged for them). */
  get diskBytes(): number {
    return this.#diskBytes;
  }

  /** Records refused for want of room since the spool opened. */
  get dropped(): number {
    return this.#dropped;
  }

  /**
   * Queues one record's text in memory; `flush` writes what is queued with one system call. False
   * when the job's cap or the budget has no room for it: the record is dropped and counted.
   */
  stage(text: string, time: number): boolean {
    if (this.#removed) return false;
    // UTF-8 takes at most 3 bytes per UTF-16 unit; the exact length is known once written.
    const most = this.#stagedBytes + HEADER_BYTES + text.length * 3;
    if (most > this.#stage.length) {
      const larger = Buffer.allocUnsafe(Math.max(most, this.#stage.length * 2));
      this.#stage.copy(larger, 0, 0, this.#stagedBytes);
      this.#stage = larger;
    }
    const at = this.#stagedBytes;
    const length = this.#stage.write(text, at + HEADER_BYTES, 'utf8');
    this.#stage.writeUInt32LE(length, at);
    this.#stage.writeDoubleLE(time, at + 4);
    const bytes = HEADER_BYTES + length;
    if (this.#diskBytes + bytes > this.#maxBytes || !this.#budget.take(bytes)) {
      this.#dropped += 1;
      return false;
    }
    this.#diskBytes += bytes;
    this.#stagedBytes = at + bytes;
    this.#stagedRecords += 1;
    return true;
  }

  /** Writes the staged records; returns once they are in the OS (not fsynced). */
  flush(): void {
    const bytes = this.#stagedBytes;
    if (bytes === 0) return;
    const records = this.#stagedRecords;
    this.#stagedBytes = 0;
    this.#stagedRecords = 0;
    if (this.#removed) return;
    let written = 0;
    try {
      if (this.#writeFd === null || this.#writeOffset >= this.#segmentMaxBytes) this.#rotate();
      // write may take part of the data; continue from where it stopped.
      while (written < bytes) written += writeSync(this.#writeFd!, this.#stage, written, bytes - written);
    } catch (error) {
      // What did not reach the file takes no room (a torn entry is cut off at the next open).
      this.#diskBytes -= bytes - written;
      this.#budget.release(bytes - written);
      this.#writeOffset += written;
      // The staged records are lost (a full disk): counted as dropped, like those that found no room.
      this.#dropped += records;
      throw error;
    }
    this.#writeOffset += bytes;
  }

  /** Bytes appended but not yet shipped (approximate across segments). */
  get pendingBytes(): number {
    const { segment, offset } = this.#cursor.committed;
    if (segment === this.#writeSegment) return this.#writeOffset - offset;
    return (this.#writeSegment - segment) * this.#segmentMaxBytes + this.#writeOffset - offset;
  }

  /** The batch that was being delivered when the process stopped, to deliver again first. */
  get inflight(): { start: SpoolPosition; end: SpoolPosition } | null {
    return this.#cursor.inflight;
  }

  /** Reads up to the limits from the cursor (or exactly the in-flight range); null when empty. */
  readBatch(maxRecords: number, maxBytes: number): SpoolBatch | null {
    const inflight = this.#cursor.inflight;
    const texts: string[] = [];
    let bytes = 0;
    let firstTime = 0;
    let lastTime = 0;
    let position = { ...this.#cursor.committed };
    const start = { ...position };
    while (texts.length < maxRecords && bytes < maxBytes) {
      if (inflight && samePosition(position, inflight.end)) break;
      const entries = this.#readSegmentFrom(position, maxRecords - texts.length, maxBytes - bytes, inflight?.end);
      for (const entry of entries.items) {
        if (texts.length === 0) firstTime = entry.time;
        lastTime = entry.time;
        texts.push(entry.text);
        bytes += entry.bytes;
      }
      position = entries.next;
      if (entries.items.length === 0) {
        // End of this segment: move to the next one if the writer has gone past it.
        const later = this.#segments.find((s) => s > position.segment);
        if (later === undefined || !entries.atSegmentEnd) break;
        position = { segment: later, offset: 0 };
      }
    }
    if (texts.length === 0) return null;
    return { start, end: position, texts, bytes, firstTime, lastTime };
  }

  /** Records that a batch is about to be delivered (so a restart re-delivers the same range); resolves once on disk. */
  async markInflight(batch: SpoolBatch): Promise<void> {
    this.#cursor = { committed: this.#cursor.committed, inflight: { start: batch.start, end: batch.end } };
    await this.#writeCursor();
  }

  /** The batch was delivered: advance the cursor (resolves once on disk), then delete segments wholly behind it. */
  async commit(batch: SpoolBatch): Promise<void> {
    this.#cursor = { committed: batch.end, inflight: null };
    await this.#writeCursor();
    for (const segment of this.#segments.filter((s) => s < batch.end.segment)) {
      const size = this.#segmentSize(segment);
      rmSync(this.#segmentPath(segment), { force: true });
      this.#diskBytes -= size;
      this.#budget.release(size);
    }
    this.#segments = this.#segments.filter((s) => s >= batch.end.segment);
  }

  close(): void {
    this.flush();
    if (this.#writeFd !== null) closeSync(this.#writeFd);
    this.#writeFd = null;
  }

  /** Closes and deletes the spool (a deleted or disabled job ships nothing). */
  remove(): void {
    if (this.#removed) return;
    this.#removed = true;
    this.close();
    rmSync(this.dir, { recursive: true, force: true });
    this.#budget.release(this.#diskBytes);
    this.#diskBytes = 0;
  }

  /** Whether remove() was called (the job is gone: nothing more is written or committed). */
  get removed(): boolean {
    return this.#removed;
  }

  #rotate(): void {
    if (this.#writeFd !== null) {
      closeSync(this.#writeFd);
      this.#writeSegment += 1;
      this.#writeOffset = 0;
    }
    if (!this.#segments.includes(this.#writeSegment)) this.#segments.push(this.#writeSegment);
    this.#writeFd = openSync(this.#segmentPath(this.#writeSegment), 'a');
    this.#writeOffset = fstatSync(this.#writeFd).size;
  }

  #readSegmentFrom(from: SpoolPosition, maxRecords: number, maxBytes: number, stopAt: SpoolPosition | undefined) {
    const items: Array<{ text: string; time: number; bytes: number }> = [];
    const path = this.#segmentPath(from.segment);
    if (!existsSync(path)) return { items, next: from, atSegmentEnd: true };
    const fd = openSync(path, 'r');
    try {
      const size = fstatSync(fd).size;
      const limit = stopAt && stopAt.segment === from.segment ? Math.min(stopAt.offset, size) : size;
      let offset = from.offset;
      // Read whole entries in chunks of about CHUNK_BYTES (an entry larger than that gets its own read).
      while (offset < limit && items.length < maxRecords && maxBytes > 0) {
        const chunkLength = Math.min(limit - offset, CHUNK_BYTES);
        let chunk = Buffer.allocUnsafe(chunkLength);
        readSync(fd, chunk, 0, chunkLength, offset);
        if (chunkLength >= HEADER_BYTES && HEADER_BYTES + chunk.readUInt32LE(0) > chunkLength) {
          const whole = HEADER_BYTES + chunk.readUInt32LE(0);
          if (offset + whole > limit) break;
          chunk = Buffer.allocUnsafe(whole);
          readSync(fd, chunk, 0, whole, offset);
        }
        let at = 0;
        while (at + HEADER_BYTES <= chunk.length && items.length < maxRecords && maxBytes > 0) {
          const length = chunk.readUInt32LE(at);
          if (at + HEADER_BYTES + length > chunk.length) break;
          if (items.length > 0 && length > maxBytes) break;
          items.push({ text: chunk.toString('utf8', at + HEADER_BYTES, at + HEADER_BYTES + length), time: chunk.readDoubleLE(at + 4), bytes: length });
          maxBytes -= length;
          at += HEADER_BYTES + length;
        }
        if (at === 0) break;
        offset += at;
      }
      return { items, next: { segment: from.segment, offset }, atSegmentEnd: offset >= size && from.segment !== this.#writeSegment };
    } finally {
      closeSync(fd);
    }
  }

  /** Cuts a torn last entry off the newest segment; returns its valid length. */
  #repairTail(segment: number): number {
    const path = this.#segmentPath(segment);
    const fd = openSync(path, 'r+');
    try {
      const size = fstatSync(fd).size;
      const header = Buffer.allocUnsafe(HEADER_BYTES);
      let offset = 0;
      while (offset + HEADER_BYTES <= size) {
        readSync(fd, header, 0, HEADER_BYTES, offset);
        const next = offset + HEADER_BYTES + header.readUInt32LE(0);
        if (next > size) break;
        offset = next;
      }
      if (offset < size) ftruncateSync(fd, offset);
      return offset;
    } finally {
      closeSync(fd);
    }
  }

  async #writeCursor(): Promise<void> {
    await replaceFileDurably(this.#cursorPath(), JSON.stringify(this.#cursor));
  }

  #segmentSize(segment: number): number {
    try {
      return statSync(this.#segmentPath(segment)).size;
    } catch {
      return 0;
    }
  }

  #cursorPath(): string {
    return join(this.dir, 'cursor.json');
  }

  #segmentPath(segment: number): string {
    return join(this.dir, `${String(segment).padStart(10, '0')}.spool`);
  }
}

function samePosition(a: SpoolPosition, b: SpoolPosition): boolean {
  return a.segment === b.segment && a.offset === b.offset;
}
