/** Latency recording and the one-line report every benchmark prints. */

export class LatencyRecorder {
  readonly #samples: number[] = [];
  record(ms: number): void {
    this.#samples.push(ms);
  }
  percentile(p: number): number {
    if (this.#samples.length === 0) return 0;
    const sorted = [...this.#samples].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
  }
  get count(): number {
    return this.#samples.length;
  }
}

export interface BenchResult {
  name: string;
  ops: number;
  seconds: number;
  bytesPerOp?: number;
  p50: number;
  p99: number;
  /**
   * CPU time of this process per operation, all its threads (microseconds): steadier than ops/s on
   * a shared machine, whose other tenants take wall time but not this process's CPU.
   */
  cpuUsPerOp?: number;
}

export function formatResult(r: BenchResult): string {
  const opsPerSec = r.ops / r.seconds;
  const mib = r.bytesPerOp ? `  ${((opsPerSec * r.bytesPerOp) / 1024 / 1024).toFixed(1).padStart(8)} MiB/s` : ''.padEnd(16);
  const cpu = r.cpuUsPerOp === undefined ? '' : `  cpu ${r.cpuUsPerOp.toFixed(0).padStart(5)} us/op`;
  return `${r.name.padEnd(34)} ${opsPerSec.toFixed(0).padStart(8)} ops/s${mib}  p50 ${r.p50.toFixed(2).padStart(7)} ms  p99 ${r.p99.toFixed(2).padStart(7)} ms${cpu}`;
}

/** The middle value (the upper one of an even count): the figure a round-based benchmark reports. */
export const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Runs `work` and returns its result with the CPU time (user + system, microseconds) this process spent meanwhile. */
export async function withCpu<T>(work: () => Promise<T>): Promise<{ result: T; cpuUs: number }> {
  const before = process.cpuUsage();
  const result = await work();
  const spent = process.cpuUsage(before);
  return { result, cpuUs: spent.user + spent.system };
}

/** Runs `op` with `concurrency` callers until `durationMs` passes (or `maxOps` are done). */
export async function runClosedLoop(
  name: string,
  options: { concurrency: number; durationMs: number; maxOps?: number; bytesPerOp?: number },
  op: (i: number) => Promise<void>,
): Promise<BenchResult> {
  const latency = new LatencyRecorder();
  const start = performance.now();
  let issued = 0;
  const deadline = start + options.durationMs;
  const worker = async () => {
    while (performance.now() < deadline && (options.maxOps === undefined || issued < options.maxOps)) {
      const i = issued++;
      const t0 = performance.now();
      await op(i);
      latency.record(performance.now() - t0);
    }
  };
  const { cpuUs } = await withCpu(() => Promise.all(Array.from({ length: options.concurrency }, worker)));
  const seconds = (performance.now() - start) / 1000;
  return {
    name,
    ops: latency.count,
    seconds,
    p50: latency.percentile(50),
    p99: latency.percentile(99),
    cpuUsPerOp: cpuUs / Math.max(1, latency.count),
    ...(options.bytesPerOp ? { bytesPerOp: options.bytesPerOp } : {}),
  };
}
