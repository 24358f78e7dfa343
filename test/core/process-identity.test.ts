/** Process identities: tags round-trip, and a tag names a running process only while that very process runs. */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import fc from 'fast-check';
import { currentProcess, isRunning, parseProcessTag, processTag } from '../../src/core/process-identity.ts';

test('a tag names its identity and nothing else parses as one', { timeout: 5_000 }, () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.bigInt({ min: 0n, max: 2n ** 63n }), fc.stringMatching(/^[0-9a-f]{1,8}$/), (pid, start, boot) => {
      const id = { pid, start: String(start), boot };
      assert.deepEqual(parseProcessTag(processTag(id)), id);
    }),
  );
  for (const name of ['', '0-1-a', '12-x-a', '12-1-', '12-1-g', '1234', '0123456789abcdef0123456789abcdef', '12-1-a/..']) {
    assert.equal(parseProcessTag(name), null, name);
  }
});

test('this process runs; the same pid with another start time or boot does not', { timeout: 5_000 }, () => {
  const me = currentProcess();
  assert.equal(me.pid, process.pid);
  assert.ok(isRunning(me));
  if (me.start === '0') return; // no /proc: no start times to compare
  assert.equal(isRunning({ ...me, start: `${me.start}0` }), false);
  assert.equal(isRunning({ ...me, boot: me.boot === 'ffffffff' ? 'eeeeeeee' : 'ffffffff' }), false);
});

test('another process runs until it exits (kill -9 included)', { timeout: 20_000 }, async (t) => {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  t.after(() => child.kill('SIGKILL'));
  await new Promise((resolve) => child.once('spawn', resolve));
  const me = currentProcess();
  // Its identity as it computes it itself (field 22 of /proc/<pid>/stat), or without /proc just its pid.
  const stat = me.start === '0' ? null : readFileSync(`/proc/${child.pid}/stat`, 'latin1');
  const start = stat === null ? '0' : stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!;
  const id = { pid: child.pid!, start, boot: me.boot };
  assert.ok(isRunning(id));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
  assert.equal(isRunning(id), false);
});
