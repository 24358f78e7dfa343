/** A process's resident set and CPU time, read from /proc (Linux), and its peak growth while something runs. */
import { readFileSync } from 'node:fs';

export function residentBytes(pid: number): number {
  const kib = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  if (kib === undefined) throw new Error(`no VmRSS for process ${pid}`);
  return Number(kib) * 1024;
}

/** Runs `work` while sampling `pid`'s RSS every 5 ms; returns the peak growth over the start, in bytes. */
export async function peakRssGrowth(pid: number, work: () => Promise<void>): Promise<number> {
  const before = residentBytes(pid);
  let peak = before;
  const timer = setInterval(() => {
    peak = Math.max(peak, residentBytes(pid));
  }, 5);
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  return Math.max(peak, residentBytes(pid)) - before;
}

/** CPU time (user + system) `pid` has used so far, in milliseconds (/proc counts in ticks of 10 ms). */
export function cpuMs(pid: number): number {
  // Fields after the command name, which is in parentheses and may hold spaces: utime and stime are the 12th and 13th.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}
