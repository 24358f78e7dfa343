/**
 * A real engine with a bucket binding on it, for the binding tests that only run in this process
 * (those that need the engine, its clock, or server-side APIs such as takeStoreBody); everything a
 * script can do is a case (case-kit.ts), run here and inside workerd.
 */
import type { TestContext } from 'node:test';
import { createStoreBucket } from '../../../src/store/binding/index.ts';
import { openTestEngine } from '../../helpers/engine.ts';

export async function openTestBucket(t: TestContext, listHonorsInclude = true) {
  const fixture = await openTestEngine(t);
  return { ...fixture, bucketBinding: createStoreBucket(fixture.engine, fixture.bucket, { listHonorsInclude }) };
}
