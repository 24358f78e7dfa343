/** A process's resident set, read from /proc (Linux), and its peak growth while something runs. */
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
  const timer = setInterval(() => { peak = Math.max(peak, residentBytes(pid)); }, 5);
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  return Math.max(peak, residentBytes(pid)) - before;
}
