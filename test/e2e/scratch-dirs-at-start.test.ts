/**
 * A killed server's workerd scratch dirs ($TMPDIR/edgeport-workerd-*, owner.pid naming a process
 * that is gone) are removed by the next `edgeport start` as it starts, as docs/operations.md says,
 * not only when a script first starts; a dir of a live process and one without an owner stay.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { startEdgeport } from '../helpers/edgeport-server.ts';
import { tempDir } from '../helpers/temp-dir.ts';

test('start removes the workerd scratch dirs of dead processes, before any script runs', { timeout: 90_000 }, async (t) => {
  const tmp = tempDir(t, 'edgeport-tmpdir-');
  const scratch = (name: string, owner?: number) => {
    const path = join(tmp, `edgeport-workerd-${name}`);
    mkdirSync(path);
    if (owner !== undefined) writeFileSync(join(path, 'owner.pid'), `${owner}\n`);
    return path;
  };
  // A pid far above any the kernel hands out (pid_max is at most 2^22): no such process.
  const dead = scratch('dead', 2 ** 22 + 17);
  const live = scratch('live', process.pid);
  const ownerless = scratch('ownerless');
  const server = await startEdgeport({ owner: t, dataDir: join(tempDir(t), 'data'), env: { TMPDIR: tmp } });
  assert.equal(existsSync(dead), false, "a dead process's dir is gone once the server is ready");
  assert.equal(existsSync(live), true);
  assert.equal(existsSync(ownerless), true);
  assert.equal(await server.stop(), 0);
});
