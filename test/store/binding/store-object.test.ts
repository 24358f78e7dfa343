/**
 * HeadResult / GetResult (store-object.case.ts) in this process, and takeStoreBody, which only an
 * in-process binding has (a server hands a body's segments to a socket with it).
 * test/runtime/workerd/store-binding.test.ts runs the cases inside workerd.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { takeStoreBody, type GetResult } from '../../../src/store/binding/index.ts';
import { CASES } from './store-object.case.ts';
import { openTestBucket } from './helpers.ts';
import { runCasesInProcess } from './in-process.ts';

const USED = 'Body has already been used. It can only be used once. Use tee() first if you need to read it twice.';

runCasesInProcess(CASES);

test('takeStoreBody: hands over an untouched body once; the stream then refuses to replay it', { timeout: 10_000 }, async (t) => {
  const { bucketBinding: b } = await openTestBucket(t);
  await b.put('k', 'bytes');
  const got = (await b.get('k')) as GetResult;
  const stream = got.body;
  const body = takeStoreBody(stream);
  assert.equal(body?.length, 5);
  assert.equal(got.bodyUsed, true);
  assert.equal(takeStoreBody(stream), undefined, 'only once');
  await assert.rejects(got.text(), { name: 'TypeError', message: USED });
  await assert.rejects(new Response(stream).text(), { name: 'TypeError', message: USED });
  const chunks: Uint8Array[] = [];
  for await (const chunk of body!.stream()) chunks.push(chunk);
  assert.equal(Buffer.concat(chunks).toString(), 'bytes');

  assert.equal(takeStoreBody(new ReadableStream()), undefined, 'not a store body');
  assert.equal(takeStoreBody(null), undefined);
  const read = (await b.get('k')) as GetResult;
  assert.equal(await read.text(), 'bytes');
  assert.equal(takeStoreBody(read.body), undefined, 'already read');
  const lockedResult = (await b.get('k')) as GetResult;
  const lockedStream = lockedResult.body;
  lockedStream.getReader();
  assert.equal(takeStoreBody(lockedStream), undefined, 'locked');
});
