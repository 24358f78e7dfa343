/** Opens a real store engine on a temporary directory for a test, with a fake clock. */
import type { TestContext } from 'node:test';
import { FakeClock } from '../../src/core/clock.ts';
import { openStoreEngine, type OpenStoreEngineOptions } from '../../src/store/engine/open-store-engine.ts';
import type { ObjectEngine } from '../../src/store/engine/object-engine.ts';
import { tempDir } from './temp-dir.ts';

export interface EngineFixture {
  engine: ObjectEngine;
  clock: FakeClock;
  dataDir: string;
  bucket: string;
}

export async function openTestEngine(t: TestContext, options: Partial<OpenStoreEngineOptions> = {}): Promise<EngineFixture> {
  const dataDir = options.dataDir ?? tempDir(t);
  const clock = new FakeClock(Date.UTC(2026, 10, 22, 12, 0, 0));
  const engine = await openStoreEngine({ dataDir, clock, recover: true, ...options });
  t.after(() => engine.close());
  await engine.ensureBucket('test-bucket');
  return { engine, clock, dataDir, bucket: 'test-bucket' };
}

export async function readAll(body: AsyncIterable<Uint8Array> | undefined): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  if (body) for await (const chunk of body) chunks.push(chunk);
  return Buffer.concat(chunks);
}

export function bytes(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}
