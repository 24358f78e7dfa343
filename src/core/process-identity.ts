/**
 * Which process wrote something, told apart from a later process that got the same pid: the pid,
 * the process's start time and the boot it ran in (Linux: /proc/<pid>/stat field 22, clock ticks
 * since boot, and /proc/sys/kernel/random/boot_id). A tag `<pid>-<start>-<boot>` names per-process
 * things on disk (temporary files); `isRunning` says whether the process a tag names still runs.
 *
 * Without /proc (macOS, BSD) start and boot are `0` and liveness is `process.kill(pid, 0)`: a pid
 * reused by another process then counts as running, which only keeps a leftover longer.
 */
import { readFileSync } from 'node:fs';

export interface ProcessIdentity {
  readonly pid: number;
  /** Start time in clock ticks since boot (`0`: unknown). */
  readonly start: string;
  /** The first 8 hex digits of the boot id (`0`: unknown). */
  readonly boot: string;
}

const TAG = /^([1-9]\d{0,9})-(\d{1,20})-([0-9a-f]{1,8})$/;

let own: ProcessIdentity | undefined;
let bootId: string | undefined;

/** This process (computed once). */
export function currentProcess(): ProcessIdentity {
  own ??= { pid: process.pid, start: startTicks(process.pid) ?? '0', boot: currentBoot() };
  return own;
}

/** `<pid>-<start>-<boot>`: a file name part naming `id`. */
export function processTag(id: ProcessIdentity = currentProcess()): string {
  return `${id.pid}-${id.start}-${id.boot}`;
}

/** The identity a tag names, or null when `name` is not a tag. */
export function parseProcessTag(name: string): ProcessIdentity | null {
  const match = TAG.exec(name);
  return match ? { pid: Number(match[1]), start: match[2]!, boot: match[3]! } : null;
}

/**
 * Whether the process `id` names still runs on this machine: false once it exited, or when its
 * pid now belongs to a process that started at another time or in another boot.
 */
export function isRunning(id: ProcessIdentity): boolean {
  if (id.pid === process.pid) return id.start === currentProcess().start && id.boot === currentProcess().boot;
  const boot = currentBoot();
  if (id.boot !== '0' && boot !== '0' && id.boot !== boot) return false;
  if (id.start !== '0' && currentProcess().start !== '0') {
    const start = startTicks(id.pid);
    return start !== null && start === id.start;
  }
  try {
    process.kill(id.pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** Field 22 of /proc/<pid>/stat, or null (no such process, or no /proc). */
function startTicks(pid: number): string | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return null;
  }
  // Field 2 is the command name in parentheses, which may itself hold spaces and parentheses.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state), so field 22 is fields[19].
  const start = fields[19];
  return start !== undefined && /^\d+$/.test(start) ? start : null;
}

function currentBoot(): string {
  if (bootId === undefined) {
    try {
      bootId =
        readFileSync('/proc/sys/kernel/random/boot_id', 'latin1')
          .replace(/[^0-9a-f]/g, '')
          .slice(0, 8) || '0';
    } catch {
      bootId = '0';
    }
  }
  return bootId;
}
