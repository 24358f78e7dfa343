/**
 * The bucket binding: what a script receives as `env.<binding>` for each `store_buckets` entry.
 * Other services (the script runtime) import only this file.
 */
import type { BindingEngine } from './binding-engine.ts';
import { StoreBucket, type StoreBucketOptions } from './store-bucket.ts';

export type { BindingEngine, BindingOperation } from './binding-engine.ts';
export { BINDING_OPERATIONS } from './binding-engine.ts';
export { listHonorsInclude } from './compat.ts';
export { takeStoreBody, GetResult, HeadResult } from './store-object.ts';
export { StoreBucket } from './store-bucket.ts';
export type * from './types.ts';

export function createStoreBucket(engine: BindingEngine, bucketName: string, options: StoreBucketOptions): StoreBucket {
  return new StoreBucket(engine, bucketName, options);
}
