/** A real engine with a bucket binding on it, for binding tests. */
import { rejects } from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { createStoreBucket } from '../../../src/store/binding/index.ts';
import { openTestEngine } from '../../helpers/engine.ts';

export async function openTestBucket(t: TestContext, listHonorsInclude = true) {
  const fixture = await openTestEngine(t);
  return { ...fixture, bucketBinding: createStoreBucket(fixture.engine, fixture.bucket, { listHonorsInclude }) };
}

/** Asserts a rejection with exactly this error class and message. */
export async function rejectsWith(promise: Promise<unknown>, type: ErrorConstructor | TypeErrorConstructor | RangeErrorConstructor, message: string | RegExp) {
  await rejects(promise, (error: unknown) => {
    if (!(error instanceof Error) || error.constructor !== type) throw new Error(`expected ${type.name}, got ${String(error)}`);
    if (typeof message === 'string' ? error.message !== message : !message.test(error.message)) throw new Error(`message was ${JSON.stringify(error.message)}`);
    return true;
  });
}
