/**
 * No process a test starts outlives the test process. A test file that started `edgeport start`
 * (fixtures/holds-edgeport.ts) is killed with SIGTERM or SIGKILL, exits with the server running,
 * or is cancelled by the test runner at its timeout: afterwards no process started on its data
 * dir is left. A child that ignores SIGTERM is SIGKILLed soon after.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { exitOf, hasExited, spawnNode, stopChild } from './child-processes.ts';
import { tempDir } from './temp-dir.ts';

const FIXTURE = fileURLToPath(new URL('./fixtures/holds-edgeport.ts', import.meta.url));

/** Live (not zombie) processes whose command line mentions `text`, with their command lines. */
function processesMentioning(text: string): Array<{ pid: number; command: string }> {
  const found: Array<{ pid: number; command: string }> = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const command = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ');
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (command.includes(text) && state !== 'Z') found.push({ pid: Number(entry), command });
    } catch {
      // Gone while we looked.
    }
  }
  return found;
}

/** Resolves once no process mentions `dir` (within `withinMs`); otherwise kills what is left and fails. */
async function noneLeft(dir: string, withinMs: number): Promise<number> {
  const started = performance.now();
  for (;;) {
    const left = processesMentioning(dir);
    if (left.length === 0) return performance.now() - started;
    if (performance.now() - started > withinMs) {
      for (const { pid } of left) process.kill(pid, 'SIGKILL');
      assert.fail(`still running ${withinMs} ms after the test process was gone:\n${left.map((p) => `${p.pid} ${p.command}`).join('\n')}`);
    }
    await sleep(100);
  }
}

/** Runs the fixture (`args` before it, e.g. the test runner's flags) on a fresh dir; resolves once edgeport is ready. */
async function hold(t: TestContext, mode: string, args: string[] = []) {
  const dir = tempDir(t, 'edgeport-holder-');
  // Run as from a shell: not as a file of the runner that runs this test.
  const env: NodeJS.ProcessEnv = { ...process.env, HOLDER_DIR: dir, HOLDER_MODE: mode };
  delete env.NODE_TEST_CONTEXT;
  const holder = spawnNode(['--import', 'tsx', ...args, FIXTURE], { env });
  t.after(() => stopChild(holder));
  let output = '';
  holder.stdout!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  holder.stderr!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  while (!existsSync(join(dir, 'ready'))) {
    assert.ok(!hasExited(holder), `the fixture exited before edgeport was ready:\n${output}`);
    await sleep(50);
  }
  return { dir, holder, output: () => output };
}

/** Asserts that the edgeport start of the fixture on `dir` runs. */
function assertRunning(dir: string): void {
  const pid = Number(readFileSync(join(dir, 'ready'), 'utf8'));
  assert.ok(
    processesMentioning(dir).some((p) => p.pid === pid),
    `edgeport start (pid ${pid}) runs on the fixture's data dir`,
  );
}

// The cases wait on processes and timers, hardly on the CPU: they run side by side.
describe('processes a test started, once the test process is gone', { concurrency: true, timeout: 120_000 }, () => {
  for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
    test(`a test process killed with ${signal} while edgeport start runs leaves no edgeport process behind`, { timeout: 90_000 }, async (t) => {
      const { dir, holder } = await hold(t, 'wait');
      assertRunning(dir);
      holder.kill(signal);
      await exitOf(holder);
      const ms = await noneLeft(dir, 30_000);
      t.diagnostic(`${signal}: edgeport start was gone ${ms.toFixed(0)} ms after its test process`);
    });
  }

  test('a test process that exits while edgeport start runs leaves no edgeport process behind', { timeout: 90_000 }, async (t) => {
    const { dir, holder, output } = await hold(t, 'exit');
    assert.equal(await exitOf(holder), 1);
    await noneLeft(dir, 30_000);
    assert.match(output(), /was still running at exit; SIGKILL/, 'the leftover is named');
  });

  test('a child that ignores SIGTERM is SIGKILLed after its test process is gone', { timeout: 90_000 }, async (t) => {
    const { dir, holder } = await hold(t, 'stubborn');
    assertRunning(dir);
    assert.ok(
      processesMentioning(dir).some((p) => p.pid === Number(readFileSync(join(dir, 'stubborn'), 'utf8'))),
      'the SIGTERM-proof child runs',
    );
    holder.kill('SIGKILL');
    await exitOf(holder);
    const ms = await noneLeft(dir, 30_000);
    t.diagnostic(`the SIGTERM-proof child was gone ${ms.toFixed(0)} ms after its test process`);
    assert.ok(ms >= 4_000, `it was given its 5 s to stop cleanly (gone after ${ms.toFixed(0)} ms)`);
  });

  test('the test runner cancelling a file at its timeout leaves no edgeport process behind', { timeout: 115_000 }, async (t) => {
    // 10 s: edgeport must be ready before the runner cancels (it takes a second or two; a loaded
    // machine took over 10 s). Node 22's --test-timeout cancels the whole file (SIGTERM to its
    // process); Node 24's fails the test, whose end stops the server. Either way nothing may be left
    // once the runner returns. On a machine so busy that edgeport was not ready in 10 s, once more with 45 s.
    const { dir, holder } = await hold(t, 'wait', ['--test', '--test-timeout=10000', '--test-reporter=tap']).catch(() =>
      hold(t, 'wait', ['--test', '--test-timeout=45000', '--test-reporter=tap']),
    );
    assertRunning(dir);
    assert.notEqual(await exitOf(holder), 0, 'the runner reports the cancelled file');
    await noneLeft(dir, 30_000);
  });
});
