/** Checks on names and metadata shared by every engine operation (the real store's limits, STORE_LIMITS). */
import { StoreError, STORE_LIMITS } from './errors.ts';
import { STORAGE_CLASSES, type StorageClass } from './types.ts';

export function assertKey(key: string): void {
  if (Buffer.byteLength(key, 'utf8') > STORE_LIMITS.maxKeyBytes) throw new StoreError('STORE_INVALID_OBJECT_NAME');
}

const BUCKET_NAME = /^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/;

export function assertBucketName(name: string): void {
  if (!BUCKET_NAME.test(name)) {
    throw new StoreError('STORE_INVALID_BUCKET_NAME', {
      message: `The specified bucket name is not valid: ${JSON.stringify(name)} must be 3-63 characters of a-z, 0-9 and '-', starting and ending with a letter or digit.`,
    });
  }
}

/** A bucket's name as the engine stores it: the name, under its account's id when it has one (account-store.ts). */
export function assertStoredBucketName(stored: string): void {
  const slash = stored.indexOf('/');
  if (slash >= 0 && (slash !== 32 || !/^[0-9a-f]{32}$/.test(stored.slice(0, 32)))) throw new StoreError('STORE_INVALID_BUCKET_NAME');
  assertBucketName(slash < 0 ? stored : stored.slice(slash + 1));
}

export function assertCustomMetadata(metadata: Record<string, string> | undefined): void {
  if (!metadata) return;
  let bytes = 0;
  for (const [name, value] of Object.entries(metadata)) bytes += Buffer.byteLength(name) + Buffer.byteLength(value);
  if (bytes > STORE_LIMITS.maxCustomMetadataBytes) throw new StoreError('STORE_METADATA_TOO_LARGE');
}

export function checkStorageClass(value: string | undefined, fallback: StorageClass): StorageClass {
  if (value === undefined) return fallback;
  if (!(STORAGE_CLASSES as readonly string[]).includes(value)) throw new StoreError('STORE_INVALID_STORAGE_CLASS');
  return value as StorageClass;
}
