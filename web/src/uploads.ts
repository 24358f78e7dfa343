/**
 * Uploads a browser file to a bucket: one PUT for a small file, else a multipart upload (create,
 * parts of PART_SIZE bytes three at a time, complete; aborted on failure), with the bytes sent so
 * far reported as they go. The store's rule: every part but the last is at least 5 MiB, all of one
 * size, the last no larger.
 */
import { call, sendWithProgress, seg } from './api.ts';

export const PART_SIZE = 8 * 1024 * 1024;
const PARALLEL_PARTS = 3;

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

export async function uploadFile(account: string, bucket: string, key: string, file: Blob,
  onProgress: (sent: number) => void, signal?: AbortSignal): Promise<StoredObject> {
  const path = objectPath(account, bucket, key);
  const type = file.type ? { 'content-type': file.type } : undefined;
  if (file.size <= PART_SIZE) {
    return sendWithProgress<StoredObject>('PUT', path, file, { ...(type ? { headers: type } : {}), onProgress, ...(signal ? { signal } : {}) });
  }
  const { upload_id: uploadId } = (await call<{ upload_id: string }>('POST', `${path}/uploads`,
    file.type ? { http_metadata: { content_type: file.type } } : {})).result;
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
