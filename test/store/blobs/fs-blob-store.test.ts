/** The BlobStore contract on local disk (blob-store.case.ts), and where its files go. */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import fc from 'fast-check';
import { currentProcess, processTag } from '../../../src/core/process-identity.ts';
import { randomHexId } from '../../../src/core/ids.ts';
import { FsBlobStore, UNOWNED_TEMP_AGE_MS } from '../../../src/store/blobs/fs-blob-store.ts';
import { tempDir } from '../../helpers/temp-dir.ts';
import { readAll } from '../../helpers/engine.ts';
import { pattern, runBlobStoreSuite, writeThroughScratch } from './blob-store.case.ts';

runBlobStoreSuite('FsBlobStore', {
  largeBytes: 300_000,
  open: async (t) => {
    const store = await FsBlobStore.open(tempDir(t));
    t.after(() => store.close());
    return store;
  },
});

test('FsBlobStore: bytes go to tmp/<process>/<id> while written, then blobs/<id>; dir names the blobs', { timeout: 10_000 }, async (t) => {
  const root = tempDir(t);
  const store = await FsBlobStore.open(root);
  t.after(() => store.close());
  assert.equal(store.dir, join(root, 'blobs'));
  const writer = await store.createWriter();
  await writer.write(new Uint8Array(10));
  const own = join(root, 'tmp', processTag());
  assert.deepEqual(readdirSync(join(root, 'tmp')), [processTag()], 'one directory, named for this process');
  assert.equal(readdirSync(own).length, 1);
  const { blobId } = await writer.commit();
  assert.deepEqual(readdirSync(own), []);
  assert.deepEqual(readdirSync(join(root, 'blobs')), [blobId]);
});

test('FsBlobStore: a file sized up front ends at the bytes written: nothing past them when fewer came', { timeout: 10_000 }, async (t) => {
  const store = await FsBlobStore.open(tempDir(t));
  t.after(() => store.close());
  for (const hint of [500_000, 400_000, 1]) {
    const { blobId } = await (await writeThroughScratch(store, pattern(400_000), 65_536, hint)).commit();
    assert.equal(statSync(join(store.dir, blobId)).size, 400_000, `hint ${hint}`);
  }
});

test(
  'FsBlobStore: any chunking, through one reused buffer, stores exactly the bytes written (writes are staged behind the caller)',
  { timeout: 10_000 },
  async (t) => {
    const store = await FsBlobStore.open(tempDir(t));
    t.after(() => store.close());
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 0, max: 700_000 }), { maxLength: 8 }), async (sizes) => {
        const data = pattern(
          sizes.reduce((a, b) => a + b, 0),
          sizes.length + 3,
        );
        const writer = await store.createWriter();
        const scratch = new Uint8Array(Math.max(1, ...sizes));
        let at = 0;
        for (const size of sizes) {
          scratch.set(data.subarray(at, at + size));
          await writer.write(scratch.subarray(0, size));
          scratch.fill(0xee);
          at += size;
        }
        const { blobId, size } = await writer.commit();
        assert.equal(size, data.byteLength);
        assert.ok(Buffer.from(data).equals(await readAll(store.read(blobId, 0, size))));
      }),
      { numRuns: 25 },
    );
  },
);

test('FsBlobStore: abort while a staged write is on the disk leaves nothing behind', { timeout: 10_000 }, async (t) => {
  const root = tempDir(t);
  const store = await FsBlobStore.open(root);
  t.after(() => store.close());
  const writer = await store.createWriter();
  await writer.write(new Uint8Array(600_000));
  await writer.abort();
  assert.deepEqual(readdirSync(join(root, 'tmp', processTag())), []);
  assert.deepEqual(await store.list(), []);
});

/** Starts a process that opens the store on `root` and writes a blob it never commits; resolves once the bytes are on disk. */
async function otherWriter(t: TestContext, root: string): Promise<ChildProcess> {
  const script = `
    import { FsBlobStore } from ${JSON.stringify(new URL('../../../src/store/blobs/fs-blob-store.ts', import.meta.url).href)};
    const store = await FsBlobStore.open(${JSON.stringify(root)});
    const writer = await store.createWriter();
    await writer.write(new Uint8Array(70000));
    process.stdout.write('written\\n');
    setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.after(() => child.kill('SIGKILL'));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('written')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the writer exited with ${code}`)));
  });
  // Its bytes are written behind the caller; give the last staged write a moment to land.
  await new Promise((resolve) => setTimeout(resolve, 200));
  return child;
}

test("FsBlobStore: a sweep removes the temporary files of processes that are gone, never a running one's", { timeout: 60_000 }, async (t) => {
  const root = tempDir(t);
  const store = await FsBlobStore.open(root);
  t.after(() => store.close());
  const mine = await store.createWriter();
  await mine.write(new Uint8Array(1000));
  const child = await otherWriter(t, root);
  const tmp = join(root, 'tmp');
  assert.equal(readdirSync(tmp).length, 2, 'this process and the other each have their own directory');
  // Another process killed mid-write long ago, whose pid is now this process's: told apart by its start time.
  const reused = join(tmp, processTag({ ...currentProcess(), start: `${currentProcess().start}1` }));
  mkdirSync(reused);
  writeFileSync(join(reused, randomHexId()), 'left over');

  assert.equal(await store.clearTemporary(), 1, 'only the one whose pid was reused');
  const left = readdirSync(tmp);
  assert.equal(left.length, 2);
  assert.ok(left.includes(processTag()) && left.some((name) => name.startsWith(`${child.pid}-`)), `this process's and the running writer's stay: ${left}`);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
  assert.equal(await store.clearTemporary(), 1, "the killed writer's file");
  assert.deepEqual(readdirSync(tmp), [processTag()]);
  const { blobId } = await mine.commit();
  assert.deepEqual(await store.list(), [blobId], "this process's write went on");
});

test('FsBlobStore: a temporary file of no known process goes only once idle for an hour; with an age, any idle file goes', { timeout: 10_000 }, async (t) => {
  const root = tempDir(t);
  const store = await FsBlobStore.open(root);
  t.after(() => store.close());
  const tmp = join(root, 'tmp');
  const fresh = randomHexId();
  const old = randomHexId();
  writeFileSync(join(tmp, fresh), "an older version's write, maybe in progress");
  writeFileSync(join(tmp, old), "an older version's crash");
  const longAgo = new Date(Date.now() - UNOWNED_TEMP_AGE_MS - 60_000);
  utimesSync(join(tmp, old), longAgo, longAgo);
  assert.equal(await store.clearTemporary(), 1);
  assert.deepEqual(readdirSync(tmp), [fresh]);

  // Shared by several machines (an age given): pids mean nothing, idleness does.
  const writer = await store.createWriter();
  await writer.write(new Uint8Array(10));
  const someone = join(tmp, processTag({ pid: 1, start: '1', boot: 'abc' }));
  mkdirSync(someone);
  writeFileSync(join(someone, 'idle'), 'x');
  writeFileSync(join(someone, 'busy'), 'y');
  utimesSync(join(someone, 'idle'), longAgo, longAgo);
  assert.equal(await store.clearTemporary({ olderThanMs: UNOWNED_TEMP_AGE_MS }), 1);
  assert.deepEqual(readdirSync(someone), ['busy']);
  await writer.commit();
});

test("FsBlobStore: a link planted at a body's name is never followed on read", { timeout: 10_000 }, async (t) => {
  const root = tempDir(t);
  const store = await FsBlobStore.open(root);
  t.after(() => store.close());
  const outside = join(tempDir(t), 'outside');
  writeFileSync(outside, 'OUTSIDE-MARKER');
  const blobId = randomHexId();
  symlinkSync(outside, join(store.dir, blobId));
  await assert.rejects(readAll(store.read(blobId, 0, 14)), (error: NodeJS.ErrnoException) => error.code === 'ELOOP');
});
