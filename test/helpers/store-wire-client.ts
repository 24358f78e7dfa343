/**
 * The engine a bucket binding inside workerd uses (src/runtime/workerd/store-client.ts), run in
 * this process against the real store service on a Unix socket: the binding tests run over the
 * wire protocol with EDGEPORT_TEST_BINDING=wire, as scripts on workerd use it.
 */
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { pino } from 'pino';
import { Agent, fetch as socketFetch } from 'undici';
import { createStoreClient } from '../../src/runtime/workerd/store-client.ts';
import { startStoreService } from '../../src/runtime/workerd/store-service.ts';
import type { BindingEngine } from '../../src/store/binding/index.ts';
import type { StoreEngine } from '../../src/store/engine/store-engine.ts';
import { engineBlobs } from '../../src/store/segment-writer.ts';
import { tempDir } from './temp-dir.ts';

/** Which engine binding tests use: the engine itself (default) or the wire client to it. */
export const TEST_BINDING: 'engine' | 'wire' = process.env.EDGEPORT_TEST_BINDING === 'wire' ? 'wire' : 'engine';

/** A client of a store service that serves `buckets` of `engine`; stopped when the test ends. */
export async function wireEngine(t: TestContext, engine: StoreEngine, buckets: readonly string[]): Promise<BindingEngine> {
  const socketPath = join(tempDir(t), 'store.sock');
  const service = await startStoreService({ engine, blobs: engineBlobs(engine), buckets: new Set(buckets), socketPath, logger: pino({ level: 'silent' }), scriptName: 'test' });
  const agent = new Agent({ connect: { socketPath } });
  t.after(async () => {
    await agent.close();
    await service.close();
  });
  return createStoreClient(async (url, init) => {
    const response = await socketFetch(url, { ...init, dispatcher: agent } as Parameters<typeof socketFetch>[1]);
    return response as unknown as Response;
  });
}
