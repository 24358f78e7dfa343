/**
 * HTTP load with `wrk` (Debian package) when installed, else `autocannon` (npm): both report
 * requests/s and latency percentiles for the same Lua/URL workload. `cpus` pins wrk to those cores
 * with `taskset` (autocannon runs in the calling process, which pins itself; see cpu-pinning.ts).
 */
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import autocannon from 'autocannon';

export interface LoadResult {
  tool: string;
  requestsPerSec: number;
  p50: number;
  p99: number;
  errors: number;
}

export function hasWrk(): boolean {
  return spawnSync('wrk', ['--version']).error === undefined;
}

function parseWrkMs(text: string): number {
  const match = /^([\d.]+)(us|ms|s)$/.exec(text.trim());
  if (!match) return Number.NaN;
  const value = Number(match[1]);
  return match[2] === 'us' ? value / 1000 : match[2] === 's' ? value * 1000 : value;
}

/** Runs wrk with the shared store driver Lua script (env OP etc.). */
export async function runLoad(options: {
  url: string;
  connections: number;
  seconds: number;
  lua: string;
  env: Record<string, string>;
  autocannonRequest: () => autocannon.Request;
  /** `taskset -c` list for wrk, e.g. "1"; wrk then runs one thread per listed core. */
  cpus?: string;
}): Promise<LoadResult> {
  if (hasWrk()) {
    const threads = Math.min(options.cpus === undefined ? 2 : options.cpus.split(',').length, options.connections);
    const wrkArgs = [`-t${threads}`, `-c${options.connections}`, `-d${options.seconds}s`, '--latency', '-s', options.lua, options.url];
    const [command, args] = options.cpus === undefined ? ['wrk', wrkArgs] : ['taskset', ['-c', options.cpus, 'wrk', ...wrkArgs]];
    // Asynchronous: the server under test may live in this very process.
    const { stdout: out } = await promisify(execFile)(command, args, {
      env: { ...process.env, ...options.env },
      encoding: 'utf8',
    });
    const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0);
    const p50 = parseWrkMs(/\s50%\s+(\S+)/.exec(out)?.[1] ?? '');
    const p99 = parseWrkMs(/\s99%\s+(\S+)/.exec(out)?.[1] ?? '');
    const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
    const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
    const errors = non2xx + (socketErrors ? socketErrors.slice(1).reduce((a, b) => a + Number(b), 0) : 0);
    return { tool: 'wrk', requestsPerSec: rps, p50, p99, errors };
  }
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.seconds,
    requests: [options.autocannonRequest()],
  });
  return {
    tool: 'autocannon',
    requestsPerSec: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx,
  };
}
