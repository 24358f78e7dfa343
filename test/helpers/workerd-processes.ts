/**
 * The workerd processes running below this test process (each under its guard shell), found in
 * /proc: to kill one as a crash would, and to check that none is left once a host has stopped.
 */
import { readdirSync, readFileSync } from 'node:fs';

function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces; the fields after its closing parenthesis do not.
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

function commandOf(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return [];
  }
}

/** Pids of `workerd serve` processes whose ancestry reaches `ancestor` (default: this process). */
export function workerdProcesses(ancestor = process.pid): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    const command = commandOf(pid);
    if (!command[0]?.endsWith('/workerd') || command[1] !== 'serve') continue;
    for (let at: number | undefined = parentOf(pid), hops = 0; at !== undefined && at > 1 && hops < 10; at = parentOf(at), hops++) {
      if (at === ancestor) {
        found.push(pid);
        break;
      }
    }
  }
  return found;
}
