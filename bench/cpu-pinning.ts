/**
 * Core pinning for benchmarks that compare servers: each server under test on one core (a fair
 * fight between a single-threaded Node process and a multi-threaded native one), the load
 * generator on another, with `taskset` (util-linux) when it is there and the machine has two
 * cores or more. Otherwise nothing is pinned and `note` says so.
 */
import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';

export interface CpuPlan {
  /** `taskset -c` list for servers, undefined when not pinned. */
  server: string | undefined;
  /** `taskset -c` list for the load generator. */
  load: string | undefined;
  /** One line for the report. */
  note: string;
}

export function planCpus(): CpuPlan {
  const cores = availableParallelism();
  if (spawnSync('taskset', ['--version']).error !== undefined)
    return { server: undefined, load: undefined, note: 'not pinned: taskset (util-linux) is not installed' };
  if (cores < 2) return { server: undefined, load: undefined, note: 'not pinned: one core' };
  return { server: '0', load: '1', note: `servers pinned to core 0, load to core 1 (taskset; ${cores} cores)` };
}

/** The command and arguments that run `command` on `cpus` (unchanged when undefined). */
export function pinned(cpus: string | undefined, command: string, args: readonly string[]): [string, string[]] {
  return cpus === undefined ? [command, [...args]] : ['taskset', ['-c', cpus, command, ...args]];
}

/** Moves every thread of this process to `cpus` (autocannon's load then comes from there). */
export function pinSelf(cpus: string | undefined): void {
  if (cpus !== undefined) spawnSync('taskset', ['-a', '-p', '-c', cpus, String(process.pid)], { stdio: 'ignore' });
}
