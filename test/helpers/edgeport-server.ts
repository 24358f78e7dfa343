/**
 * Starts the real `edgeport start` CLI on free ports and reads its banner (tests and benchmarks).
 * The process is tied to the test process (child-processes.ts) and, given the test as `owner`,
 * stopped when that test ends however it ends, even while it is still starting.
 */
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { spawnNode, stopChild } from './child-processes.ts';
import { onTestEnd } from './cleanup.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** How long `edgeport start` may take to print its ready line (a busy machine, a cold tsx cache). */
const READY_TIMEOUT_MS = 60_000;

export interface EdgeportServer {
  child: ChildProcess;
  /** Everything printed to stdout up to the ready line. */
  banner: string;
  /** Listener URLs by banner label, e.g. `urls['S3-compatible API']`. */
  urls: Record<string, string>;
  /** The S3 key printed on first start, if one was generated. */
  s3Key: { accessKeyId: string; secretAccessKey: string } | undefined;
  /** SIGTERM (SIGKILL if it has not exited 20 s later), then resolves with the exit code; again is fine. */
  stop(): Promise<number | null>;
  /** What the server printed (stdout and stderr: its log lines) since it started, the last 4 MiB at most. */
  output(): string;
}

/** What `output()` keeps of a server's printing. */
const OUTPUT_KEPT = 4 * 1024 * 1024;

export interface StartOptions {
  dataDir: string;
  env?: NodeJS.ProcessEnv;
  args?: string[];
  /** The test that owns the server: it is stopped when that test ends, before the test's earlier temporary directories are removed. */
  owner?: TestContext;
  /**
   * false: the server never sheds load. For tests whose exact answers are under test: on a busy
   * machine the listener's 503 (its event loop behind, whoever asks) would stand in their place.
   */
  shedding?: false;
}

/**
 * The secrets key of test servers on PostgreSQL, which refuse to start without one (every instance
 * of a deployment needs the same): given unless the test sets EDGEPORT_SECRETS_KEY itself.
 */
export const TEST_PG_SECRETS_KEY = Buffer.alloc(32, 7).toString('base64');

/** Resolves once the server prints its ready line; rejects with its output if it exits first or takes over a minute. */
export async function startEdgeport(options: StartOptions): Promise<EdgeportServer> {
  const ports = ['--edge-port', '0', '--api-port', '0', '--gateway-port', '0', '--s3-port', '0'];
  const onPostgres = Boolean(options.env?.EDGEPORT_DB_URL) && options.env?.EDGEPORT_SECRETS_KEY === undefined;
  const child = spawnNode([join(ROOT, 'bin/edgeport.js'), 'start', '--data-dir', options.dataDir, ...ports, ...(options.args ?? [])], {
    env: {
      ...process.env,
      EDGEPORT_LOG_LEVEL: 'warn',
      ...(onPostgres ? { EDGEPORT_SECRETS_KEY: TEST_PG_SECRETS_KEY } : {}),
      ...(options.shedding === false ? { EDGEPORT_LIMITS_MAX_EVENT_LOOP_DELAY_MS: '0' } : {}),
      ...options.env,
    },
  });
  const stop = () => stopChild(child);
  if (options.owner) onTestEnd(options.owner, stop);
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const banner = await readyLine(child, /; ready\n/, () => stderr, options.owner?.signal);
  let printed = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    printed += chunk.toString();
    if (printed.length > OUTPUT_KEPT) printed = printed.slice(-OUTPUT_KEPT);
  });
  const urls: Record<string, string> = {};
  for (const match of banner.matchAll(/^edgeport: (.+) at (http:\/\/\S+)$/gm)) urls[match[1]!] = match[2]!;
  const id = /access key id: +(\S+)/.exec(banner)?.[1];
  const secret = /secret access key: +(\S+)/.exec(banner)?.[1];
  return {
    child,
    banner,
    urls,
    s3Key: id && secret ? { accessKeyId: id, secretAccessKey: secret } : undefined,
    stop,
    output: () => `${printed}${stderr.slice(-OUTPUT_KEPT)}`,
  };
}

/**
 * Resolves with the child's stdout up to the first match of `ready`. Rejects, killing the child,
 * when it exits first, does not get there within READY_TIMEOUT_MS, or `signal` (the owning test's)
 * aborts; the error holds all the child printed.
 */
export function readyLine(child: ChildProcess, ready: RegExp, stderr: () => string, signal?: AbortSignal): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let seen = '';
    const fail = (why: string) => {
      cleanUp();
      child.kill('SIGKILL');
      reject(new Error(`${child.spawnargs.slice(3, 5).join(' ')} ${why}:\n${seen}${stderr()}`));
    };
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      if (!ready.test(seen)) return;
      cleanUp();
      resolve(seen);
    };
    const onExit = (code: number | null, exitSignal: NodeJS.Signals | null) => fail(`exited with ${code ?? exitSignal} before it was ready`);
    const onAbort = () => fail('was still starting when its test ended');
    const timer = setTimeout(() => fail(`was not ready after ${READY_TIMEOUT_MS} ms`), READY_TIMEOUT_MS);
    const cleanUp = () => {
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      child.off('exit', onExit);
      signal?.removeEventListener('abort', onAbort);
    };
    child.stdout!.on('data', onData);
    child.once('exit', onExit);
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Writes `<name>.mjs` and an edgeport.toml that routes it and binds `bucket` as env.BUCKET, both in
 * `dir`; returns the `--config` arguments for `startEdgeport`.
 */
/** `extra`: more TOML lines for the script's entry (e.g. `[limits]`, `outbound`). */
export function writeScriptConfig(dir: string, script: { name: string; source: string; route: string; bucket: string; extra?: string }): string[] {
  writeFileSync(join(dir, `${script.name}.mjs`), script.source);
  writeFileSync(
    join(dir, 'edgeport.toml'),
    `[[scripts]]
name = "${script.name}"
main = "${script.name}.mjs"
compatibility_date = "2025-01-01"
routes = ["${script.route}"]
store_buckets = [{ binding = "BUCKET", bucket_name = "${script.bucket}" }]
${script.extra ?? ''}`,
  );
  return ['--config', join(dir, 'edgeport.toml')];
}
