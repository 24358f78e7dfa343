/** Runs the real `edgeport` binary to its end, for tests of the command line (tied to the test process). */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnNode } from './child-processes.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** From the spawn to the exit. */
  ms: number;
}

/**
 * `edgeport ...args` in `cwd` (default the repository), with this process's environment but no
 * EDGEPORT_DATA_DIR, plus `env`; killed after a minute.
 */
export function runEdgeport(args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<CliRun> {
  const began = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawnNode([join(ROOT, 'bin/edgeport.js'), ...args], {
      cwd: options.cwd ?? ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, EDGEPORT_DATA_DIR: '', ...options.env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: performance.now() - began });
    });
  });
}
