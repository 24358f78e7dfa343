/** The write-behind buffer under both blob writers: batching, eager sends, open-once, failures. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WriteBehind } from '../../../src/store/blobs/write-behind.ts';

function recorder() {
  const sent: string[] = [];
  return {
    sent,
    send: async (bytes: Buffer) => {
      sent.push(bytes.toString());
    },
  };
}

test('only full batches go out before flush; a body that never filled one is taken back unsent', { timeout: 10_000 }, async () => {
  const { sent, send } = recorder();
  const small = new WriteBehind(send, { batchBytes: 4, initialBytes: 1 });
  await small.write(Buffer.from('abc'));
  assert.equal(small.sent, false);
  assert.equal(small.takeUnsent().toString(), 'abc');

  const body = new WriteBehind(send, { batchBytes: 4, initialBytes: 1 });
  const scratch = Buffer.from('abcdef');
  await body.write(scratch);
  scratch.fill('z'); // the bytes were copied
  await body.write(Buffer.from('ghij'));
  await body.flush();
  assert.deepEqual(sent, ['abcd', 'efgh', 'ij']);
});

test('eager: a partly filled buffer goes out whenever no send is in flight; open runs once, first', { timeout: 10_000 }, async () => {
  const events: string[] = [];
  const body = new WriteBehind(
    async (bytes) => {
      events.push(`send ${bytes.toString()}`);
    },
    {
      batchBytes: 8,
      eager: true,
      open: async () => {
        events.push('open');
      },
    },
  );
  await body.write(Buffer.from('ab'));
  await body.write(Buffer.from('cd'));
  await body.flush();
  assert.equal(events[0], 'open');
  assert.equal(events.filter((e) => e === 'open').length, 1);
  assert.equal(
    events
      .filter((e) => e.startsWith('send'))
      .map((e) => e.slice(5))
      .join(''),
    'abcd',
  );
});

test('a failed send is thrown by the next write or flush, and settle waits without throwing', { timeout: 10_000 }, async () => {
  const body = new WriteBehind(
    async () => {
      throw new Error('disk full');
    },
    { batchBytes: 2, eager: true },
  );
  await body.write(Buffer.from('ab'));
  await body.settle();
  await assert.rejects(body.write(Buffer.from('c')), /disk full/);
  await assert.rejects(body.flush(), /disk full/);
});
