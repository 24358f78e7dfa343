/**
 * The part of the store engine a bucket binding calls: the object and multipart operations, no
 * bucket management. The server's engine is one; a script runtime in another process implements
 * it over a connection to the server (src/runtime/workerd/store-client.ts).
 */
import type { StoreEngine } from '../engine/store-engine.ts';

/** Every engine method a binding calls, as data: a remote implementation serves exactly these. */
export const BINDING_OPERATIONS = [
  'head',
  'get',
  'put',
  'delete',
  'list',
  'createMultipartUpload',
  'uploadPart',
  'completeMultipartUpload',
  'abortMultipartUpload',
] as const satisfies ReadonlyArray<keyof StoreEngine>;

export type BindingOperation = (typeof BINDING_OPERATIONS)[number];

export type BindingEngine = Pick<StoreEngine, BindingOperation>;
