/**
 * The newest lines a log job delivered, read back from its destination for the dashboard's live
 * view: the newest batch (`*.log.gz`) below the destination's fixed path, by delivery time,
 * gunzipped as a stream, its last lines kept. Only file:// and store:// destinations can be read
 * back (this server writes them); s3:// and http(s):// ones are someone else's to read.
 *
 * A file:// destination is read only inside the file roots, through its real path (checked again
 * here: a symbolic link swapped in after the job was made must not lead a read outside), and the
 * batch itself is opened without following a link.
 *
 * Bounded work: at most SCAN_LIMIT files or objects are looked at, and at most MAX_BATCH_BYTES
 * of gzip are read.
 */
import { constants } from 'node:fs';
import { open, readdir, realpath, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { fixedPath, isWithin, parseDestination, type FileRoots } from '../../logs/index.ts';
import type { StoreEngine } from '../../store/engine/store-engine.ts';
import { ApiError } from '../errors.ts';

const SCAN_LIMIT = 10_000;
const MAX_BATCH_BYTES = 64 * 1024 * 1024;
const BATCH_SUFFIX = '.log.gz';

export interface DeliveredLines {
  /** The batch read: a file path or `<bucket>/<key>`; null when nothing was delivered yet. */
  batch: string | null;
  /** Epoch ms the batch was written. */
  delivered: number | null;
  lines: string[];
}

interface Candidate {
  name: string;
  time: number;
  open(): Promise<AsyncIterable<Uint8Array>>;
}

export async function readDeliveredLines(
  destinationConf: string,
  store: StoreEngine | undefined,
  fileRoots: FileRoots,
  maxLines: number,
): Promise<DeliveredLines> {
  const parsed = parseDestination(destinationConf);
  if (!parsed.ok) throw new Error(`Unvalidated destination_conf: ${parsed.reason}`);
  const destination = parsed.destination;
  let newest: Candidate | undefined;
  if (destination.scheme === 'file') {
    const check = await fileRoots.check(fixedPath(destination.directory) || '/');
    if (!check.ok) throw new ApiError('API_DELIVERED_LINES_UNAVAILABLE', { message: `the delivered lines cannot be read back: ${check.reason}` });
    newest = await newestFile(check.realPath, fileRoots);
  } else if (destination.scheme === 'store' && store) newest = await newestObject(store, destination.bucket, fixedPath(destination.prefix));
  else {
    throw new ApiError('API_DELIVERED_LINES_UNAVAILABLE', {
      message: `the delivered lines of a ${destination.scheme}:// destination cannot be read back: only file:// and store:// destinations can`,
    });
  }
  if (!newest) return { batch: null, delivered: null, lines: [] };
  return { batch: newest.name, delivered: newest.time, lines: await lastLines(await newest.open(), maxLines) };
}

/** The newest batch below `root` (a real path); links are never followed (a Dirent of a link is neither file nor directory). */
async function newestFile(root: string, fileRoots: FileRoots): Promise<Candidate | undefined> {
  let best: { path: string; time: number } | undefined;
  let scanned = 0;
  const pending = [root];
  while (pending.length > 0 && scanned < SCAN_LIMIT) {
    const dir = pending.pop()!;
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      if (++scanned > SCAN_LIMIT) break;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) pending.push(path);
      else if (entry.isFile() && entry.name.endsWith(BATCH_SUFFIX)) {
        const time = (await stat(path)).mtimeMs;
        if (!best || time > best.time || (time === best.time && path > best.path)) best = { path, time };
      }
    }
  }
  if (!best) return undefined;
  const { path, time } = best;
  return {
    name: path,
    time: Math.floor(time),
    open: async () => {
      // Where the batch is now: a directory on its way may have been swapped for a link since the scan.
      const real = await realpath(path).catch(() => path);
      const check = await fileRoots.check(dirname(real));
      if (real !== path || !isWithin(real, root) || !check.ok) {
        throw new ApiError('API_DELIVERED_LINES_UNAVAILABLE', {
          message: `the newest batch ${path} cannot be read back: ${check.ok ? 'it moved outside the destination' : check.reason}`,
        });
      }
      const file = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW).catch((error: unknown) => {
        throw new ApiError('API_DELIVERED_LINES_UNAVAILABLE', { message: `the newest batch could not be read: ${(error as Error).message}` });
      });
      if ((await file.stat()).size > MAX_BATCH_BYTES) {
        await file.close();
        throw tooLarge(path);
      }
      return file.createReadStream();
    },
  };
}

async function newestObject(store: StoreEngine, bucket: string, prefix: string): Promise<Candidate | undefined> {
  if (!(await store.getBucket(bucket))) return undefined;
  let best: { key: string; time: number; size: number } | undefined;
  let cursor: string | undefined;
  let scanned = 0;
  do {
    const page = await store.list(bucket, { ...(prefix ? { prefix: `${prefix}/` } : {}), ...(cursor ? { cursor } : {}), limit: 1000 });
    for (const object of page.objects) {
      if (!object.key.endsWith(BATCH_SUFFIX)) continue;
      if (!best || object.uploaded > best.time || (object.uploaded === best.time && object.key > best.key))
        best = { key: object.key, time: object.uploaded, size: object.size };
    }
    scanned += page.objects.length;
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor && scanned < SCAN_LIMIT);
  if (!best) return undefined;
  const { key, time, size } = best;
  return {
    name: `${bucket}/${key}`,
    time,
    open: async () => {
      if (size > MAX_BATCH_BYTES) throw tooLarge(`${bucket}/${key}`);
      const result = await store.get(bucket, key);
      if (!result?.body) return (async function* () {})();
      return result.body.stream();
    },
  };
}

/** The last `maxLines` non-empty lines of a gzip stream, read as it comes (never whole in memory). */
async function lastLines(gzipped: AsyncIterable<Uint8Array>, maxLines: number): Promise<string[]> {
  const lines: string[] = [];
  let rest = '';
  const decoder = new TextDecoder();
  try {
    await pipeline(Readable.from(gzipped), createGunzip(), async (source: AsyncIterable<Buffer>) => {
      for await (const chunk of source) {
        const parts = (rest + decoder.decode(chunk, { stream: true })).split('\n');
        rest = parts.pop()!;
        for (const line of parts) if (line !== '') lines.push(line);
        if (lines.length > maxLines) lines.splice(0, lines.length - maxLines);
      }
    });
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw new ApiError('API_DELIVERED_LINES_UNAVAILABLE', { message: `the newest batch could not be read: ${(error as Error).message}` });
  }
  rest += decoder.decode();
  if (rest !== '') lines.push(rest);
  return lines.slice(-maxLines);
}

function tooLarge(name: string): ApiError {
  return new ApiError('API_DELIVERED_LINES_UNAVAILABLE', {
    message: `the newest batch ${name} is larger than ${MAX_BATCH_BYTES} bytes: read it from the destination`,
  });
}
