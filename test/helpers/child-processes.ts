/**
 * Processes a test starts (`edgeport start`, `edgeport dev`, a load generator), which never
 * outlive the test process, however it ends. Each is `node --import die-with-parent.mjs ...` with
 * a pipe on its fd 3 whose other end only the test process holds: the kernel closes that end when
 * the test process exits, crashes or is killed (the test runner SIGTERMs a file's process at its
 * file-level timeout and may SIGKILL it), and the child then stops itself. Children still running
 * when the test process exits normally are SIGKILLed from its 'exit' handler too, and named on
 * stderr: a test that forgets one is a bug. The other spawns in test/ (execFile, spawnSync) run
 * short commands that end by themselves.
 */
import { spawn, type ChildProcess, type IOType } from 'node:child_process';
import type { Socket } from 'node:net';

const PRELOAD = new URL('./die-with-parent.mjs', import.meta.url).href;
/** The child's fd of the pipe it watches (0-2 are stdio). */
const PARENT_PIPE_FD = 3;
/** How long `stopChild` waits after SIGTERM before it sends SIGKILL. */
export const STOP_GRACE_MS = 20_000;

const running = new Set<ChildProcess>();

export interface NodeChildOptions {
  cwd?: string;
  /** The child's whole environment (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /** stdin, stdout, stderr (default: ignore, pipe, pipe). */
  stdio?: [IOType, IOType, IOType];
}

/** Starts `node ...args` with this process's node, tied to this process's life (see the file header). */
export function spawnNode(args: readonly string[], options: NodeChildOptions = {}): ChildProcess {
  const child = spawn(process.execPath, ['--import', PRELOAD, ...args], {
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    env: { ...(options.env ?? process.env), TEST_PARENT_PIPE: `${PARENT_PIPE_FD}:${process.pid}` },
    stdio: [...(options.stdio ?? ['ignore', 'pipe', 'pipe']), 'pipe'],
  });
  // Holding the pipe open is all it is for: it never keeps this process alive.
  (child.stdio[PARENT_PIPE_FD] as Socket | null)?.unref();
  running.add(child);
  child.once('exit', () => running.delete(child));
  child.once('error', () => running.delete(child));
  return child;
}

/** True once the child has exited (by itself or by a signal). */
export function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** Resolves when the child has exited (at once if it has), with its exit code (null after a signal). */
export function exitOf(child: ChildProcess): Promise<number | null> {
  if (hasExited(child)) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

/** The child's exit code and everything it printed, once it has exited (its stdout and stderr must be pipes). */
export async function outputOf(child: ChildProcess): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const code = await exitOf(child);
  return { code, stdout, stderr };
}

/**
 * SIGTERM, then SIGKILL if the child is still running `graceMs` later; resolves with its exit
 * code (null when a signal ended it). Calling it again, or on a child that already exited, is fine.
 */
export async function stopChild(child: ChildProcess, graceMs = STOP_GRACE_MS): Promise<number | null> {
  if (hasExited(child)) return child.exitCode;
  const exited = exitOf(child);
  child.kill('SIGTERM');
  const timer = setTimeout(() => {
    process.stderr.write(`# child-processes: pid ${child.pid} ignored SIGTERM for ${graceMs} ms; SIGKILL\n`);
    child.kill('SIGKILL');
  }, graceMs);
  try {
    return await exited;
  } finally {
    clearTimeout(timer);
  }
}

process.on('exit', () => {
  for (const child of running) {
    process.stderr.write(`# child-processes: pid ${child.pid} (${child.spawnargs.slice(3, 6).join(' ')}) was still running at exit; SIGKILL\n`);
    child.kill('SIGKILL');
  }
});
