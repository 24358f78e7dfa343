/**
 * Local-disk BlobStore. Writes go to `tmp/<process>/<id>`, are fsynced, renamed to `blobs/<id>`,
 * and the directory is fsynced (one directory fsync is shared by every rename that happened before
 * it), so a blob is durable before its metadata commits. Ids are random hex: no key ever reaches a
 * path. `<process>` names the writing process (core/process-identity.ts: pid, start time, boot), so
 * a sweep removes the temporary files of processes that are gone and never another's write in
 * progress.
 */
import { access, constants, mkdir, open, readdir, rename, rm, rmdir, stat, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { CoalescedFsync } from '../../core/fs/coalesced-fsync.ts';
import { randomHexId } from '../../core/ids.ts';
import { isRunning, parseProcessTag, processTag } from '../../core/process-identity.ts';
import type { BlobStore, BlobWriter, SweepOptions } from './blob-store.ts';
import { WriteBehind } from './write-behind.ts';

const READ_NO_FOLLOW = constants.O_RDONLY | constants.O_NOFOLLOW;

const BLOB_ID = /^[0-9a-f]{32}$/;

/**
 * A temporary file directly in `tmp/` (as versions before per-process directories wrote them), or
 * anything else there that names no process, has an unknown writer: it is swept only once idle this
 * long, the rule for a store other instances share.
 */
export const UNOWNED_TEMP_AGE_MS = 60 * 60 * 1000;

export class FsBlobStore implements BlobStore {
  readonly dir: string;
  readonly #tmp: string;
  /** This process's temporary files; made on the first write (and again if a sweep removed it). */
  readonly #ownTmp: string;
  readonly #dirSync: CoalescedFsync;

  private constructor(root: string) {
    this.dir = join(root, 'blobs');
    this.#tmp = join(root, 'tmp');
    this.#ownTmp = join(this.#tmp, processTag());
    this.#dirSync = new CoalescedFsync(this.dir, { dataOnly: false });
  }

  static async open(root: string): Promise<FsBlobStore> {
    const store = new FsBlobStore(root);
    await mkdir(store.dir, { recursive: true });
    await mkdir(store.#tmp, { recursive: true });
    return store;
  }

  /**
   * With a known size the file is sized before the first write: writes that grow a file update its
   * size each time, which costs ext4 here about 4x the CPU (100 MiB in 256 KiB writes: 88 ms
   * appending, 19 ms into the sized file) and makes the final fdatasync slower.
   */
  async createWriter(options: { size?: number | undefined } = {}): Promise<BlobWriter> {
    const blobId = randomHexId();
    const tmpPath = join(this.#ownTmp, blobId);
    const file = await open(tmpPath, 'wx').catch(async (error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
      await mkdir(this.#ownTmp, { recursive: true });
      return open(tmpPath, 'wx');
    });
    const sizedTo = options.size ?? 0;
    if (sizedTo > 0) {
      await file.truncate(sizedTo).catch(async (error: unknown) => {
        await file.close();
        await rm(tmpPath, { force: true });
        throw error;
      });
    }
    return new FsBlobWriter(blobId, file, tmpPath, join(this.dir, blobId), this.#dirSync, sizedTo);
  }

  async *read(blobId: string, offset: number, length: number): AsyncIterable<Uint8Array> {
    if (length <= 0) return;
    assertBlobId(blobId);
    // O_NOFOLLOW: a body is a file this store wrote; a link planted at its name is never followed.
    const file = await open(join(this.dir, blobId), READ_NO_FOLLOW);
    // 512 KiB reads: a file:// store's bodies are sent from here (deadline-blob-store.ts), and at
    // 256 KiB a 1 MiB GET ran about 15% below the data dir's pooled reads; at 512 KiB, level with them.
    const stream = file.createReadStream({ start: offset, end: offset + length - 1, highWaterMark: 512 * 1024 });
    for await (const chunk of stream) yield chunk as Buffer;
  }

  async delete(blobIds: readonly string[]): Promise<void> {
    await Promise.all(
      blobIds.map(async (id) => {
        assertBlobId(id);
        await unlink(join(this.dir, id)).catch((error: NodeJS.ErrnoException) => {
          if (error.code !== 'ENOENT') throw error;
        });
      }),
    );
  }

  async list(options: SweepOptions = {}): Promise<string[]> {
    const ids = (await readdir(this.dir)).filter((name) => BLOB_ID.test(name));
    return options.olderThanMs === undefined ? ids : idleFor(this.dir, ids, options.olderThanMs);
  }

  /**
   * Without an age (the data dir, which one process uses at a time): the directories of writers
   * that are gone, whatever their age; this process's and other running ones' stay. With an age (a
   * directory several machines share, whose pids mean nothing here): every temporary file idle
   * that long, whoever wrote it. Either way, files of no known writer go only once idle for
   * UNOWNED_TEMP_AGE_MS (or the given age).
   */
  async clearTemporary(options: SweepOptions = {}): Promise<number> {
    const counts = await Promise.all(
      (await readdir(this.#tmp, { withFileTypes: true })).map(async (entry) => {
        const path = join(this.#tmp, entry.name);
        const owner = entry.isDirectory() ? parseProcessTag(entry.name) : null;
        if (owner === null) {
          if ((await idleFor(this.#tmp, [entry.name], options.olderThanMs ?? UNOWNED_TEMP_AGE_MS)).length === 0) return 0;
          await rm(path, { force: true, recursive: true });
          return 1;
        }
        const names = await readdir(path).catch(() => []);
        if (options.olderThanMs === undefined) {
          if (isRunning(owner)) return 0;
          await rm(path, { force: true, recursive: true });
          return names.length;
        }
        const idle = await idleFor(path, names, options.olderThanMs);
        await Promise.all(idle.map((name) => rm(join(path, name), { force: true, recursive: true })));
        // An emptied directory goes at a later sweep, once idle itself; its writer makes it again if it needs it.
        if (idle.length === names.length && (await idleFor(this.#tmp, [entry.name], options.olderThanMs)).length === 1) {
          await rmdir(path).catch(() => undefined);
        }
        return idle.length;
      }),
    );
    return counts.reduce((sum, count) => sum + count, 0);
  }

  async checkReachable(): Promise<void> {
    await access(this.dir, constants.W_OK);
    await access(this.#tmp, constants.W_OK);
  }

  async close(): Promise<void> {
    // Writers own their file handles; the directory's, kept for its fsyncs, is let go.
    await this.#dirSync.close();
  }
}

/**
 * The names in `dir` whose mtime is at least `ageMs` old. Compared with the wall clock, not an
 * injected Clock: mtimes are stamped by the (possibly shared) file system's real time. A write in
 * progress keeps touching its file, so only an idle one counts as old.
 */
async function idleFor(dir: string, names: readonly string[], ageMs: number): Promise<string[]> {
  const cutoff = Date.now() - ageMs;
  const checked = await Promise.all(
    names.map(async (name) => {
      const info = await stat(join(dir, name)).catch(() => null);
      return info !== null && info.mtimeMs <= cutoff ? name : null;
    }),
  );
  return checked.filter((name): name is string => name !== null);
}

function assertBlobId(id: string): void {
  if (!BLOB_ID.test(id)) throw new Error(`Not a blob id: ${JSON.stringify(id)}`);
}

/**
 * Bytes are written behind the caller (write-behind.ts): while one write is on the disk the next
 * chunks collect in the other buffer, so a body arriving in 16-64 KiB socket reads costs one write
 * per STAGE_BYTES instead of one thread-pool round trip per read.
 */
const STAGE_BYTES = 256 * 1024;

class FsBlobWriter implements BlobWriter {
  #size = 0;
  #done = false;
  readonly #body: WriteBehind;
  readonly #blobId: string;
  readonly #file: FileHandle;
  readonly #tmpPath: string;
  readonly #finalPath: string;
  readonly #dirSync: CoalescedFsync;
  /** The size the file was given up front (0: none). */
  readonly #sizedTo: number;

  constructor(blobId: string, file: FileHandle, tmpPath: string, finalPath: string, dirSync: CoalescedFsync, sizedTo: number) {
    this.#sizedTo = sizedTo;
    this.#blobId = blobId;
    this.#file = file;
    this.#tmpPath = tmpPath;
    this.#finalPath = finalPath;
    this.#dirSync = dirSync;
    this.#body = new WriteBehind((bytes) => this.#writeAll(bytes), { batchBytes: STAGE_BYTES, eager: true });
  }

  async write(chunk: Uint8Array): Promise<void> {
    await this.#body.write(chunk);
    this.#size += chunk.byteLength;
  }

  async #writeAll(bytes: Buffer): Promise<void> {
    for (let written = 0; written < bytes.byteLength;) {
      written += (await this.#file.write(bytes, written, bytes.byteLength - written)).bytesWritten;
    }
  }

  async commit(): Promise<{ blobId: string; size: number }> {
    this.#done = true;
    try {
      await this.#body.flush();
      // Fewer bytes came than the size it was given: the blob is what was written, no zeros after.
      if (this.#size < this.#sizedTo) await this.#file.truncate(this.#size);
      await this.#file.sync();
      await this.#file.close();
      await rename(this.#tmpPath, this.#finalPath);
      await this.#dirSync.sync();
    } catch (error) {
      await this.#file.close().catch(() => undefined);
      await rm(this.#tmpPath, { force: true });
      throw error;
    }
    return { blobId: this.#blobId, size: this.#size };
  }

  async abort(): Promise<void> {
    if (this.#done) return;
    this.#done = true;
    await this.#body.settle();
    await this.#file.close().catch(() => undefined);
    await rm(this.#tmpPath, { force: true });
  }
}
