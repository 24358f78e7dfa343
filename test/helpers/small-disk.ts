/**
 * `edgeport start` with its data dir on a small file system of its own, for tests of a full disk:
 * a tmpfs of `sizeMiB` mounted in a mount namespace of the server's own (`unshare --user
 * --map-root-user --mount`), so it needs no root and touches no mount of the machine's; it works
 * wherever unprivileged user namespaces do (Linux's default; Debian and Ubuntu turn them on). The
 * mount goes away with the server. The test reaches files on it through `/proc/<pid>/root`
 * (`inside`): to fill the disk from outside edgeport, free it, or open the database read-only.
 * When the namespace cannot be made, the test fails with what to enable: it never skips.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { stopChild } from './child-processes.ts';
import { onTestEnd } from './cleanup.ts';
import { readyLine, type EdgeportServer } from './edgeport-server.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PRELOAD = new URL('./die-with-parent.mjs', import.meta.url).href;
const MOUNT = 'mount -t tmpfs -o "size=$1" edgeport-small-disk "$2" && shift 2 && exec "$@"';

export interface SmallDiskServer extends EdgeportServer {
  /** The server's pid; its view of the file system is at /proc/<pid>/root. */
  pid: number;
  /** `path` (on the small disk) as the test process reaches it. */
  inside(path: string): string;
  /** Everything the server logged on stderr so far. */
  stderr(): string;
  /**
   * Runs `node -e code` inside the server's namespaces (nsenter), where the small disk is mounted:
   * for what cannot go through /proc/<pid>/root (SQLite resolves that link to this process's own
   * root). Its stdout, trimmed; throws with its stderr if it fails.
   */
  nodeInside(code: string): string;
}

/** Fails, saying what to enable, when this machine cannot give a process a tmpfs of its own. */
export function assertSmallDisksWork(): void {
  const probe = spawnSync('unshare', ['--user', '--map-root-user', '--mount', 'sh', '-c', 'mount -t tmpfs -o size=1m edgeport-probe /mnt && echo ok'], {
    encoding: 'utf8',
  });
  if (probe.stdout?.trim() !== 'ok') {
    throw new Error(
      "This test puts edgeport's data dir on a tmpfs of its own in a user and mount namespace (unshare --user --map-root-user --mount), " +
        `which this machine refused: ${probe.error?.message ?? probe.stderr.trim()}. Enable unprivileged user namespaces ` +
        '(sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu 24.04 kernel.apparmor_restrict_unprivileged_userns=0), or run the tests as root.',
    );
  }
}

export async function startOnSmallDisk(
  t: TestContext,
  options: { dir: string; sizeMiB: number; args?: string[]; env?: NodeJS.ProcessEnv },
): Promise<SmallDiskServer> {
  assertSmallDisksWork();
  const dataDir = join(options.dir, 'data');
  mkdirSync(dataDir, { recursive: true });
  const ports = ['--edge-port', '0', '--api-port', '0', '--gateway-port', '0', '--s3-port', '0'];
  // unshare and sh exec in turn, so the server keeps this process as its parent (die-with-parent.mjs).
  const child = spawn(
    'unshare',
    [
      '--user',
      '--map-root-user',
      '--mount',
      'sh',
      '-c',
      MOUNT,
      'sh',
      `${options.sizeMiB}m`,
      dataDir,
      process.execPath,
      '--import',
      PRELOAD,
      join(ROOT, 'bin/edgeport.js'),
      'start',
      '--data-dir',
      dataDir,
      ...ports,
      ...(options.args ?? []),
    ],
    {
      env: { ...process.env, EDGEPORT_LOG_LEVEL: 'info', ...options.env, TEST_PARENT_PIPE: `3:${process.pid}` },
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    },
  );
  (child.stdio[3] as Socket | null)?.unref();
  const stop = () => stopChild(child);
  onTestEnd(t, stop);
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const banner = await readyLine(child, /; ready\n/, () => stderr, t.signal);
  child.stdout!.resume();
  const urls: Record<string, string> = {};
  for (const match of banner.matchAll(/^edgeport: (.+) at (http:\/\/\S+)$/gm)) urls[match[1]!] = match[2]!;
  const pid = child.pid!;
  return {
    child,
    banner,
    urls,
    s3Key: undefined,
    output: () => stderr,
    stop,
    pid,
    inside: (path) => `/proc/${pid}/root${path}`,
    stderr: () => stderr,
    nodeInside(code) {
      const run = spawnSync('nsenter', ['--target', String(pid), '--user', '--mount', '--preserve-credentials', process.execPath, '-e', code], {
        encoding: 'utf8',
      });
      if (run.status !== 0) throw new Error(`node inside the server's namespace failed (${run.status ?? run.error?.message}): ${run.stderr}`);
      return run.stdout.trim();
    },
  };
}
