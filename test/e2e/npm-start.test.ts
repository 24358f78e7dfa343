/**
 * `npm start` as a user runs it in a terminal: it starts edgeport (rebuilding the dashboard only
 * when its sources changed), and Ctrl-C, which the terminal sends to the whole foreground process
 * group, stops it cleanly: npm exits 0, not 130.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../helpers/temp-dir.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

test('Ctrl-C on npm start (SIGINT to its process group) exits 0', { timeout: 120_000 }, async (t) => {
  const dataDir = join(tempDir(t), 'data');
  // Its own process group, as a terminal's foreground job has.
  const npm = spawn('npm', ['start', '--', '--data-dir', dataDir, '--edge-port', '0', '--api-port', '0', '--gateway-port', '0', '--s3-port', '0'], {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, EDGEPORT_DATA_DIR: '', EDGEPORT_LOG_LEVEL: 'warn' },
  });
  t.after(() => {
    if (npm.exitCode === null && npm.signalCode === null) process.kill(-npm.pid!, 'SIGKILL');
  });
  let out = '';
  let err = '';
  npm.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  // 'close': the process has exited and its output has been read to the end.
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => npm.once('close', (code, signal) => resolve({ code, signal })));
  await new Promise<void>((resolve, reject) => {
    npm.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (/; ready\n/.test(out)) resolve();
    });
    void exited.then(({ code }) => reject(new Error(`npm start exited with ${code} before it was ready:\n${out}${err}`)));
  });
  // At once: from the ready line on, Ctrl-C stops cleanly.
  process.kill(-npm.pid!, 'SIGINT');
  assert.deepEqual(await exited, { code: 0, signal: null }, `npm start's exit after Ctrl-C:\n${err}\n${out}`);
  assert.doesNotMatch(err, /ERR!|signal SIGINT/);
});
