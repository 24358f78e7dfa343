/**
 * The disk guard with a free-space reading the test sets: the reserve file, writes refused below
 * the floor and after a full-disk failure, the reserve given up for a delete, and recovery by
 * itself (the reserve made again) once space is back. An engine behind it refuses puts with
 * STORE_STORAGE_FULL before reading their body, and lets deletes through.
 */
import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { pino } from 'pino';
import type { Logger } from '../../src/core/log.ts';
import { BackendFault } from '../../src/core/errors/backend-fault.ts';
import { DiskGuard, RESERVE_FILE } from '../../src/core/fs/disk-guard.ts';
import { guardDiskWrites } from '../../src/store/engine/disk-guarded-writes.ts';
import type { ObjectEngine } from '../../src/store/engine/object-engine.ts';
import { StoreError, storeFaultOf } from '../../src/store/engine/errors.ts';
import { openStoreEngine } from '../../src/store/engine/open-store-engine.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const MiB = 1024 * 1024;

function capture(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  return { logger: pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line).msg as string) }), lines };
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let tries = 0; tries < 100; tries++) {
    if (condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.fail(`never: ${what}`);
}

test(
  'below the floor writes are refused; a full-disk failure refuses them until space is back; the reserve is released and made again',
  { timeout: 30_000 },
  async (t) => {
    const dir = tempDir(t);
    let free = 100 * MiB;
    const { logger, lines } = capture();
    const guard = await DiskGuard.open({ dir, minFreeBytes: 10 * MiB, reserveBytes: 2 * MiB, logger, freeBytesOf: async () => free });
    t.after(() => guard.close());
    assert.equal(statSync(join(dir, RESERVE_FILE)).size, 2 * MiB, 'the reserve is made at open');
    await guard.assertWritable();

    // A write fails for lack of space: refused at once, though the last reading showed room, until
    // a check (every second, or the next state()) finds the floor free.
    free = 5 * MiB;
    assert.equal(guard.noteFailure(Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' })), true);
    assert.equal(guard.noteFailure(new Error('other')), false);
    await assert.rejects(
      guard.assertWritable(),
      (error: unknown) => error instanceof BackendFault && error.code === 'BACKEND_FULL' && error.backend === 'disk',
    );
    assert.equal((await guard.state()).full, true);
    assert.equal(await guard.releaseReserve(), true);
    assert.equal(existsSync(join(dir, RESERVE_FILE)), false);
    assert.equal(await guard.releaseReserve(), false, 'only once');
    assert.deepEqual(await guard.state(), { freeBytes: 5 * MiB, minFreeBytes: 10 * MiB, reserveBytes: 0, full: true });

    // Space comes back: above the floor, but not yet with room for the reserve too: still refused.
    free = 11 * MiB;
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    assert.equal(guard.full, true);
    free = 20 * MiB;
    await until(() => !guard.full, 'writes accepted again');
    await guard.assertWritable();
    assert.equal(statSync(join(dir, RESERVE_FILE)).size, 2 * MiB, 'the reserve is back');
    assert.ok(lines.some((l) => l.startsWith('Disk full: writes are refused')));
    assert.ok(lines.some((l) => l.startsWith('Disk full: released the reserve')));
    assert.ok(lines.some((l) => l.startsWith('Disk space is back')));

    // Below the floor with no failure yet: refused at once, and back by itself.
    free = 9 * MiB;
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await assert.rejects(guard.assertWritable(), BackendFault);
    free = 50 * MiB;
    await until(() => !guard.full, 'accepted again');
  },
);

test('no room for the reserve at open: none is made, and it is made once there is room', { timeout: 10_000 }, async (t) => {
  const dir = tempDir(t);
  let free = 3 * MiB;
  const { logger, lines } = capture();
  const guard = await DiskGuard.open({ dir, minFreeBytes: 2 * MiB, reserveBytes: 4 * MiB, logger, freeBytesOf: async () => free });
  t.after(() => guard.close());
  assert.equal(existsSync(join(dir, RESERVE_FILE)), false);
  assert.match(lines[0]!, /No room for the disk reserve/);
  guard.noteFailure(Object.assign(new Error('full'), { code: 'SQLITE_FULL' }));
  free = 10 * MiB;
  await until(() => !guard.full, 'accepted again');
  assert.equal(statSync(join(dir, RESERVE_FILE)).size, 4 * MiB);
});

test('an engine behind the guard: puts refused with STORE_STORAGE_FULL on a full disk, deletes go through', { timeout: 30_000 }, async (t) => {
  const dir = tempDir(t);
  let free = 100 * MiB;
  const guard = await DiskGuard.open({ dir, minFreeBytes: 10 * MiB, reserveBytes: MiB, logger: pino({ level: 'silent' }), freeBytesOf: async () => free });
  t.after(() => guard.close());
  const engine = guardDiskWrites(await openStoreEngine({ dataDir: dir }), guard);
  t.after(() => engine.close());
  await engine.createBucket('full-disk');
  await engine.put('full-disk', 'a', new Uint8Array(100_000));
  free = MiB;
  await new Promise((resolve) => setTimeout(resolve, 1_100));
  let read = false;
  const body = (async function* () {
    read = true;
    yield new Uint8Array(10);
  })();
  await assert.rejects(engine.put('full-disk', 'b', { stream: body, length: 10 }), (error: unknown) => {
    const mapped = storeFaultOf(error);
    assert.ok(mapped instanceof StoreError);
    assert.equal(mapped.code, 'STORE_STORAGE_FULL');
    return true;
  });
  assert.equal(read, false, 'refused before its body was read');
  await assert.rejects(engine.createMultipartUpload('full-disk', 'c'), BackendFault);
  await engine.delete('full-disk', ['a']);
  assert.equal(await engine.head('full-disk', 'a'), null);
  free = 100 * MiB;
  await until(() => !guard.full, 'accepted again');
  await engine.put('full-disk', 'b', new Uint8Array(10));
});

test('a delete that meets a full disk (SQLITE_FULL) gets the reserve and is tried once more; a second one is not', { timeout: 10_000 }, async (t) => {
  const dir = tempDir(t);
  const guard = await DiskGuard.open({ dir, minFreeBytes: MiB, reserveBytes: MiB, logger: pino({ level: 'silent' }), freeBytesOf: async () => 100 * MiB });
  t.after(() => guard.close());
  const full = () => Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
  let tries = 0;
  let failUntil = 1;
  const fake = {
    delete: async () => {
      tries += 1;
      if (tries <= failUntil) throw full();
    },
  } as unknown as ObjectEngine;
  for (const name of [
    'put',
    'createMultipartUpload',
    'uploadPart',
    'completeMultipartUpload',
    'createBucket',
    'ensureBucket',
    'putBucketCors',
    'setBucketStorageClass',
    'abortMultipartUpload',
    'deleteBucket',
  ]) {
    (fake as unknown as Record<string, unknown>)[name] = async () => undefined;
  }
  guardDiskWrites(fake, guard);
  await fake.delete('b', ['k']);
  assert.equal(tries, 2, 'tried again after the reserve was released');
  assert.equal(existsSync(join(dir, RESERVE_FILE)), false);
  assert.equal(guard.full, true);
  tries = 0;
  failUntil = 5;
  await assert.rejects(fake.delete('b', ['k']), { code: 'SQLITE_FULL' });
  assert.equal(tries, 1, 'no reserve left: not tried again');
});
