/**
 * The bucket binding: what a script receives as `env.<binding>` for each `store_buckets` entry.
 * Other services (the script runtime) import only this file.
 */
import type { StoreEngine } from '../engine/store-engine.ts';
import { StoreBucket, type StoreBucketOptions } from './store-bucket.ts';

export { listHonorsInclude } from './compat.ts';
export { takeStoreBody, GetResult, HeadResult } from './store-object.ts';
export { StoreBucket } from './store-bucket.ts';
export type * from './types.ts';

export function createStoreBucket(engine: StoreEngine, bucketName: string, options: StoreBucketOptions): StoreBucket {
  return new StoreBucket(engine, bucketName, options);
}
