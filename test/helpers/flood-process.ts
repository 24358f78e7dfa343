/**
 * Runs the wrong-key flood (wrong-key-flood.ts) in a process of its own and reads its one JSON
 * line. It runs at nice 5: an attacker's CPU is not the server's, but here both share one small
 * machine (with the measuring client and whatever else runs), and the figures are about the
 * server. Not lower: at nice 10 beside a busy core and the rest of the suite, the flood got about
 * 2% of the CPU and sent 117 requests in 8 s, which measures nothing. The process is killed when
 * the test ends, whatever happens.
 */
import { setPriority } from 'node:os';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { spawnNode, stopChild } from './child-processes.ts';

const FLOOD = fileURLToPath(new URL('./wrong-key-flood.ts', import.meta.url));

export interface FloodResult {
  /** Requests sent. */
  sent: number;
  /** Answers by HTTP status (and `shed` for load shedding's 503s). */
  byStatus: Record<string, number>;
}

/** Starts the flood with wrong-key-flood.ts's arguments; resolves with its result once it exits. */
export function startFlood(t: TestContext, args: readonly string[]): Promise<FloodResult> {
  const child = spawnNode(['--import', 'tsx', FLOOD, ...args]);
  setPriority(child.pid!, 5);
  t.after(() => stopChild(child));
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => {
      if (code === 0) resolve(JSON.parse(stdout) as FloodResult);
      else reject(new Error(`the flood exited with ${code}: ${stderr}`));
    });
  });
}
