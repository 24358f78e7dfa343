/**
 * ScryptThread: the same bytes as node:crypto's scrypt, off libuv's thread pool (file I/O goes on
 * while it works), a bounded queue refused at once, close(), and no hold on the process when idle.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { scryptSync } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ScryptBusyError, ScryptThread } from '../../src/core/crypto/scrypt-thread.ts';
import { testScryptThread } from '../helpers/scrypt-thread.ts';

const COST = { N: 16384, r: 8, p: 1, keyLength: 32 };

test('derives what node:crypto derives, salt given as a pooled Buffer slice', { timeout: 20_000 }, async (t) => {
  const thread = testScryptThread(t);
  const salt = Buffer.from('c2FsdC1zYWx0LXNhbHQ=', 'base64');
  const derived = await thread.derive('the-key', salt, COST);
  assert.deepEqual(derived, scryptSync('the-key', salt, 32, { N: 16384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 }));
  await assert.rejects(thread.derive('k', salt, { ...COST, N: 3 }), /scrypt failed/, 'bad parameters reject, the thread lives on');
  assert.equal((await thread.derive('the-key', salt, COST)).length, 32);
});

test('a full queue is refused at once with an estimate; the queued ones finish', { timeout: 30_000 }, async (t) => {
  const thread = testScryptThread(t, { maxQueued: 4 });
  const queued = [1, 2, 3, 4].map((i) => thread.derive(`key-${i}`, Buffer.alloc(16, i), COST));
  const started = performance.now();
  await assert.rejects(thread.derive('one-too-many', Buffer.alloc(16), COST), (error: unknown) => {
    assert.ok(error instanceof ScryptBusyError);
    assert.equal(error.code, 'CRYPTO_SCRYPT_BUSY');
    assert.ok(error.retryAfterMs > 0, `estimate ${error.retryAfterMs} ms`);
    return true;
  });
  const refusedMs = performance.now() - started;
  assert.ok(refusedMs < 20, `refused in ${refusedMs.toFixed(1)} ms, not after the queue`);
  assert.equal((await Promise.all(queued)).length, 4);
  assert.equal(thread.queued, 0);
  await thread.derive('room-again', Buffer.alloc(16), COST);
});

test("file reads go on while the thread is busy: the hashes are not on libuv's pool", { timeout: 60_000 }, async (t) => {
  const thread = testScryptThread(t, { maxQueued: 64 });
  const work = Array.from({ length: 24 }, (_, i) => thread.derive(`key-${i}`, Buffer.alloc(16, i), COST));
  const file = fileURLToPath(import.meta.url);
  const reads: number[] = [];
  for (let i = 0; i < 20; i++) {
    const started = performance.now();
    await Promise.all([readFile(file), readFile(file), readFile(file), readFile(file), readFile(file)]);
    reads.push(performance.now() - started);
  }
  const queuedStill = thread.queued;
  await Promise.all(work);
  reads.sort((a, b) => a - b);
  process.stdout.write(
    `# 5 parallel file reads while ${queuedStill}+ hashes were queued: median ${reads[10]!.toFixed(1)} ms, max ${reads[19]!.toFixed(1)} ms\n`,
  );
  assert.ok(queuedStill > 0, 'the reads ran while hashes were still queued');
  // With the 24 hashes on libuv's 4-thread pool the first reads wait for all of them (measured: 1.6 s).
  assert.ok(reads[19]! < 250, `slowest ${reads[19]} ms`);
});

test('close() rejects what is queued and refuses more', { timeout: 20_000 }, async () => {
  const thread = new ScryptThread();
  const pending = assert.rejects(thread.derive('k', Buffer.alloc(16), COST), /closed/);
  await thread.close();
  await pending;
  await assert.rejects(thread.derive('k', Buffer.alloc(16), COST), /closed/);
});

test('an idle thread does not keep the process alive; a running hash does until it is done', { timeout: 30_000 }, async () => {
  const module = new URL('../../src/core/crypto/scrypt-thread.ts', import.meta.url).href;
  const script = `
    const { ScryptThread } = await import(${JSON.stringify(module)});
    const thread = new ScryptThread();
    thread.derive('k', Buffer.alloc(16), { N: 16384, r: 8, p: 1, keyLength: 32 }).then((bytes) => console.log('derived', bytes.length));
  `;
  const started = performance.now();
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { timeout: 20_000 });
  assert.equal(stdout.trim(), 'derived 32', 'the pending hash kept the process alive until it resolved');
  assert.ok(performance.now() - started < 15_000, 'and then the process exited on its own');
});

test(
  "on Linux the thread runs below the process's priority (nice 10), the rest of the process unchanged",
  { timeout: 20_000, skip: process.platform !== 'linux' },
  async (t) => {
    const niceOfThreads = () =>
      readdirSync('/proc/self/task').map((tid) => Number(readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]));
    const before = niceOfThreads();
    const thread = testScryptThread(t);
    await thread.derive('k', Buffer.alloc(16), COST);
    const after = niceOfThreads();
    assert.equal(after.filter((nice) => nice === 10).length, before.filter((nice) => nice === 10).length + 1, `nice values ${after.join(',')}`);
    assert.equal(readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ')[16], String(before[0]), 'the main thread keeps its own');
  },
);

test("fair between clients: a fresh client runs on the second thread; a flooder's place goes to a client that asked less", { timeout: 60_000 }, async (t) => {
  const thread = testScryptThread(t, { maxQueued: 4 });
  const finished: string[] = [];
  const run = (name: string, client: string) =>
    thread.derive(name, Buffer.alloc(16), COST, client).then(
      () => {
        finished.push(name);
      },
      (error: unknown) => {
        finished.push(`${name} refused`);
        assert.ok(error instanceof ScryptBusyError);
      },
    );
  // f0 is the flooder's first ask (fresh: the second thread), f1 runs on the first, f2-f4 wait, f5 and f6 find no place.
  const flood = Array.from({ length: 7 }, (_, i) => run(`f${i}`, '10.0.0.1'));
  assert.equal(thread.queued, 5);
  const fresh = run('fresh', '10.0.0.2');
  const other = [run('other-1', '10.0.0.3'), run('other-2', '10.0.0.3')];
  assert.equal(thread.queued, 7, "fresh and other-1 wait for the second thread; other-2 took f4's place");
  await Promise.all([...flood, fresh, ...other]);
  assert.deepEqual(finished.slice(0, 3), ['f5 refused', 'f6 refused', 'f4 refused']);
  const at = (name: string) => finished.indexOf(name);
  // The two threads run side by side, so only the order on each thread is certain (and one job against a job two places later).
  assert.ok(at('f0') < at('fresh') && at('fresh') < at('other-1'), `the second thread ran f0, fresh, other-1: ${finished.join(', ')}`);
  assert.ok(at('f1') < at('other-2') && at('other-2') < at('f2') && at('f2') < at('f3'), `other-2 asked less than the flooder: ${finished.join(', ')}`);
  assert.ok(at('fresh') < at('f3'), `the fresh client did not wait behind the flooder's queue: ${finished.join(', ')}`);
  assert.equal(finished.length, 10);
});
