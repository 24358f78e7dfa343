/**
 * Starts the real `edgeport dev` CLI on a script and waits for its ready line (tests and
 * benchmarks). The process is tied to the test process (child-processes.ts) and, given the test
 * as `owner`, stopped when that test ends however it ends.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { spawnNode, stopChild } from './child-processes.ts';
import { onTestEnd } from './cleanup.ts';
import { readyLine } from './edgeport-server.ts';

export interface DevServer {
  url: string;
  child: ChildProcess;
  /** Stops the process (SIGTERM, SIGKILL 20 s later) and removes its config dir (and data dir unless given); again is fine. */
  stop(): Promise<void>;
}

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface DevServerOptions {
  /** Reuse a data dir (e.g. to restart after a crash); by default a fresh one is made and removed. */
  dataDir?: string;
  compatibilityDate?: string;
  extraConfig?: string;
  /** The test that owns the server: it is stopped when that test ends, before the test's earlier temporary directories are removed. */
  owner?: TestContext;
}

export async function startDevServer(
  scriptPath: string,
  bindings: Array<{ binding: string; bucket_name: string }>,
  options: DevServerOptions = {},
): Promise<DevServer> {
  const dir = mkdtempSync(join(tmpdir(), 'edgeport-dev-'));
  const dataDir = options.dataDir ?? join(dir, 'data');
  const config = join(dir, 'script.toml');
  const buckets = bindings.map((b) => `[[store_buckets]]\nbinding = "${b.binding}"\nbucket_name = "${b.bucket_name}"\n`).join('\n');
  writeFileSync(
    config,
    `name = "test-script"\nmain = "${relative(dir, scriptPath)}"\ncompatibility_date = "${options.compatibilityDate ?? '2025-01-01'}"\n${options.extraConfig ?? ''}\n\n${buckets}`,
  );
  const child = spawnNode([join(ROOT, 'bin/edgeport.js'), 'dev', config, '--port', '0', '--data-dir', dataDir], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const stop = async () => {
    await stopChild(child);
    rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
  };
  if (options.owner) onTestEnd(options.owner, stop);
  let url: string;
  try {
    url = /http:\/\/127\.0\.0\.1:\d+/.exec(await readyLine(child, /http:\/\/127\.0\.0\.1:\d+/, () => '', options.owner?.signal))![0];
  } catch (error) {
    if (!options.owner) await stop();
    throw error;
  }
  child.stdout!.resume();
  return { url, child, stop };
}
