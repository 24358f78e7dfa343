/** The bucket binding's conformance cases (bucket.case.ts) on the engine, and what only an in-process binding has. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { GetResult } from '../../../src/store/binding/index.ts';
import { takeStoreBody } from '../../../src/store/binding/index.ts';
import { BUCKET_CASES, listIncludeCase } from './bucket.case.ts';
import { openTestBucket } from './helpers.ts';
import { TEST_BINDING } from '../../helpers/store-wire-client.ts';

/** Over the wire a get's body is the service response's own stream, handed to the script as it is: nothing to take. */
const IN_PROCESS_ONLY = TEST_BINDING === 'wire' ? 'a remote body is its runtime\'s own stream; only in-process bodies are taken' : false;

for (const [name, run] of Object.entries(BUCKET_CASES)) {
  test(name, { timeout: 10_000 }, async (t) => {
    const { bucketBinding } = await openTestBucket(t);
    await run(bucketBinding);
  });
}

test('list honours include under each compatibility rule', { timeout: 10_000 }, async (t) => {
  await listIncludeCase((await openTestBucket(t, true)).bucketBinding, true);
  await listIncludeCase((await openTestBucket(t, false)).bucketBinding, false);
});

test('takeStoreBody hands over an untouched body exactly once', { timeout: 10_000, skip: IN_PROCESS_ONLY }, async (t) => {
  const { bucketBinding: b } = await openTestBucket(t);
  await b.put('k', 'bytes');
  const got = await b.get('k') as GetResult;
  const body = takeStoreBody(got.body);
  assert.equal(body?.length, 5);
  assert.equal(takeStoreBody(got.body), undefined);
  const read = await b.get('k') as GetResult;
  assert.equal(await new Response(read.body).text(), 'bytes');
  assert.equal(takeStoreBody(read.body), undefined);
});
