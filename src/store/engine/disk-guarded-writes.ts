/**
 * The store engine on a data dir that can fill up (SQLite or blob files in it): writes that add
 * data are refused while the disk guard says the disk is full (STORE_STORAGE_FULL, a retryable
 * 503 on S3), before any of their body is read; deletes always go ahead, and one that meets a full
 * disk (its SQLite writes need a little room) gets the guard's reserve and is tried once more.
 * A write that fails for lack of space tells the guard, which then refuses writes until space is
 * back. Every face (S3, the binding, the API) goes through these methods.
 */
import type { DiskGuard } from '../../core/fs/disk-guard.ts';
import type { ObjectEngine } from './object-engine.ts';

/** Methods that add data: refused on a full disk. */
const GROWING = [
  'put',
  'createMultipartUpload',
  'uploadPart',
  'completeMultipartUpload',
  'createBucket',
  'ensureBucket',
  'putBucketCors',
  'setBucketStorageClass',
] as const satisfies ReadonlyArray<keyof ObjectEngine>;
/** Methods that free data: let through on a full disk, with the reserve if need be. */
const SHRINKING = ['delete', 'abortMultipartUpload', 'deleteBucket'] as const satisfies ReadonlyArray<keyof ObjectEngine>;

type Method = (...args: unknown[]) => Promise<unknown>;

/** Wraps `engine`'s write methods (on the instance itself) with `guard`; returns the engine. */
export function guardDiskWrites(engine: ObjectEngine, guard: DiskGuard): ObjectEngine {
  const methods = engine as unknown as Record<string, Method>;
  for (const name of GROWING) {
    const original = methods[name]!.bind(engine);
    methods[name] = async function guardedWrite(...args: unknown[]): Promise<unknown> {
      await guard.assertWritable();
      try {
        return await original(...args);
      } catch (error) {
        guard.noteFailure(error);
        throw error;
      }
    };
  }
  for (const name of SHRINKING) {
    const original = methods[name]!.bind(engine);
    methods[name] = async function deleteOnFullDisk(...args: unknown[]): Promise<unknown> {
      try {
        return await original(...args);
      } catch (error) {
        if (!guard.noteFailure(error) || !(await guard.releaseReserve())) throw error;
        return original(...args);
      }
    };
  }
  return engine;
}
