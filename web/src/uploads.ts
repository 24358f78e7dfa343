/**
 * Uploads browser files to a bucket: one PUT for a small file, else a multipart upload (create,
 * parts of PART_SIZE bytes three at a time, complete; aborted on failure), with the bytes sent so
 * far reported as they go. The store's rule: every part but the last is at least 5 MiB, all of one
 * size, the last no larger. Many files go FILES_AT_ONCE at a time (runBounded); a dropped folder
 * is read into files with their paths (filesOfDrop).
 */
import { call, sendWithProgress, seg } from './api.ts';

export const PART_SIZE = 8 * 1024 * 1024;
const PARALLEL_PARTS = 3;
/** Files uploaded at the same time when many are chosen. */
export const FILES_AT_ONCE = 3;

export interface StoredObject {
  key: string;
  version: string;
  size: number;
  etag: string;
  uploaded: string;
  storage_class: string;
  http_metadata: Record<string, string>;
  custom_metadata: Record<string, string>;
}

export function objectPath(account: string, bucket: string, key: string): string {
  return `/accounts/${seg(account)}/store/buckets/${seg(bucket)}/objects/${seg(key)}`;
}

export async function uploadFile(
  account: string,
  bucket: string,
  key: string,
  file: Blob,
  onProgress: (sent: number) => void,
  signal?: AbortSignal,
): Promise<StoredObject> {
  const path = objectPath(account, bucket, key);
  const type = file.type ? { 'content-type': file.type } : undefined;
  if (file.size <= PART_SIZE) {
    return sendWithProgress<StoredObject>('PUT', path, file, { ...(type ? { headers: type } : {}), onProgress, ...(signal ? { signal } : {}) });
  }
  const { upload_id: uploadId } = (
    await call<{ upload_id: string }>('POST', `${path}/uploads`, file.type ? { http_metadata: { content_type: file.type } } : {})
  ).result;
  const uploads = `${path}/uploads/${seg(uploadId)}`;
  const count = Math.ceil(file.size / PART_SIZE);
  const sent = new Array<number>(count).fill(0);
  const etags = new Array<string>(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const index = next++;
      const part = file.slice(index * PART_SIZE, Math.min(file.size, (index + 1) * PART_SIZE));
      const result = await sendWithProgress<{ etag: string }>('PUT', `${uploads}/parts/${index + 1}`, part, {
        onProgress: (loaded) => {
          sent[index] = loaded;
          onProgress(sent.reduce((a, b) => a + b, 0));
        },
        ...(signal ? { signal } : {}),
      });
      sent[index] = part.size;
      etags[index] = result.etag;
      onProgress(sent.reduce((a, b) => a + b, 0));
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(PARALLEL_PARTS, count) }, worker));
    return (await call<StoredObject>('POST', `${uploads}/complete`, { parts: etags.map((etag, i) => ({ part_number: i + 1, etag })) })).result;
  } catch (error) {
    await call('DELETE', uploads).catch(() => undefined);
    throw error;
  }
}

/** Runs `work` on every item, at most `limit` at a time, in order of the items; never rejects (each item's work handles its own failure). */
export async function runBounded<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** A file to upload and its path relative to what was chosen (a folder's files keep their folders). */
export interface ChosenFile {
  file: File;
  path: string;
}

/** The files of a file input: a folder input's keep their relative path (webkitRelativePath). */
export function filesOfInput(list: FileList | null): ChosenFile[] {
  return [...(list ?? [])].map((file) => ({ file, path: file.webkitRelativePath || file.name }));
}

/** The files of a drop: dropped folders are walked (every file below them, with its path). */
export async function filesOfDrop(data: DataTransfer): Promise<ChosenFile[]> {
  const entries = [...data.items].filter((item) => item.kind === 'file').map((item) => item.webkitGetAsEntry?.() ?? null);
  // A browser that gives no entries (or a drop made of plain files): the files as they are.
  if (entries.length === 0 || entries.some((entry) => entry === null)) return filesOfInput(data.files);
  const out: ChosenFile[] = [];
  for (const entry of entries) await walk(entry!, out);
  return out;
}

async function walk(entry: FileSystemEntry, out: ChosenFile[]): Promise<void> {
  const path = entry.fullPath.replace(/^\/+/, '');
  if (entry.isFile) {
    const file = await new Promise<File>((resolve, reject) => (entry as FileSystemFileEntry).file(resolve, reject));
    out.push({ file, path: path || file.name });
    return;
  }
  const reader = (entry as FileSystemDirectoryEntry).createReader();
  // readEntries answers a batch at a time (100 in Chromium) until an empty one.
  for (;;) {
    const batch = await new Promise<FileSystemEntry[]>((resolve, reject) => reader.readEntries(resolve, reject));
    if (batch.length === 0) return;
    for (const child of batch) await walk(child, out);
  }
}
