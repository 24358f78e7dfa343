/**
 * A real engine with a bucket binding on it, for binding tests; with EDGEPORT_TEST_BINDING=wire
 * the binding reaches the engine through the store service, as bindings inside workerd do.
 */
import type { TestContext } from 'node:test';
import { createStoreBucket } from '../../../src/store/binding/index.ts';
import { openTestEngine } from '../../helpers/engine.ts';
import { TEST_BINDING, wireEngine } from '../../helpers/store-wire-client.ts';

export { rejectsWith } from './bucket.case.ts';

export async function openTestBucket(t: TestContext, listHonorsInclude = true) {
  const fixture = await openTestEngine(t);
  const engine = TEST_BINDING === 'wire' ? await wireEngine(t, fixture.engine, [fixture.bucket]) : fixture.engine;
  return { ...fixture, bucketBinding: createStoreBucket(engine, fixture.bucket, { listHonorsInclude }) };
}
