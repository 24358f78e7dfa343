/**
 * The module behind each `store_buckets` binding inside workerd (a wrapped binding): workerd calls
 * the default export with the binding's inner bindings and hands its result to the script as
 * `env.<binding>`. The StoreBucket is the same code scripts get in-process; only its engine is
 * remote, reached through the `store` service binding.
 */
import { createStoreBucket, type StoreBucket } from '../../../store/binding/index.ts';
import { createStoreClient } from '../store-client.ts';

interface InnerBindings {
  store: { fetch(url: string, init: RequestInit): Promise<Response> };
  bucket: string;
  listHonorsInclude: boolean;
}

export default function makeStoreBucket(env: InnerBindings): StoreBucket {
  const store = env.store;
  // workerd knows which streams have a known length, and says so when the client sends one.
  return createStoreBucket(
    createStoreClient((url, init) => store.fetch(url, init)),
    env.bucket,
    { listHonorsInclude: env.listHonorsInclude, streamLengths: 'runtime' },
  );
}
