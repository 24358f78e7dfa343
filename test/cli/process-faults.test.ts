/**
 * keepServingOnFaults (what `edgeport start` and `edgeport dev` install): in a real node process,
 * an unhandled rejection and an uncaught exception are logged at error level and the process goes
 * on; the same faults without it end the process with 1 (Node's default), so the check can fail.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { outputOf, spawnNode } from '../helpers/child-processes.ts';

const FAULTS = fileURLToPath(new URL('../../src/cli/process-faults.ts', import.meta.url));
const LOG = fileURLToPath(new URL('../../src/core/log.ts', import.meta.url));

/** Runs a node process that (maybe) installs the handlers, then faults both ways, then says it is still running. */
async function faultingProcess(install: boolean): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const script = `
    import { keepServingOnFaults } from ${JSON.stringify(FAULTS)};
    import { createLogger } from ${JSON.stringify(LOG)};
    if (${install}) keepServingOnFaults(createLogger('info'));
    Promise.reject(new Error('rejected on purpose'));
    setTimeout(() => { throw new Error('thrown on purpose'); }, 20);
    setTimeout(() => { process.stdout.write('still running\\n'); process.exit(0); }, 300);
  `;
  const child = spawnNode(['--import', 'tsx', '--input-type=module', '-e', script]);
  return outputOf(child);
}

test(
  'with keepServingOnFaults, an unhandled rejection and an uncaught exception are logged at error level and the process keeps running',
  { timeout: 60_000 },
  async () => {
    const { code, stdout, stderr } = await faultingProcess(true);
    assert.equal(code, 0, stderr);
    assert.equal(stdout, 'still running\n');
    const lines = stderr
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { level: number; event: string; err: { message: string } });
    const rejection = lines.find((line) => line.event === 'UnhandledRejection');
    const exception = lines.find((line) => line.event === 'UncaughtException');
    assert.deepEqual([rejection?.level, rejection?.err.message], [50, 'rejected on purpose'], stderr);
    assert.deepEqual([exception?.level, exception?.err.message], [50, 'thrown on purpose'], stderr);
  },
);

test('without it, the same unhandled rejection ends the process with 1', { timeout: 60_000 }, async () => {
  const { code, stdout, stderr } = await faultingProcess(false);
  assert.equal(code, 1);
  assert.equal(stdout, '');
  assert.match(stderr, /rejected on purpose/);
});
