/**
 * The private directories workerd hosts keep their config, bundles and sockets in
 * (`$TMPDIR/edgeport-workerd-*`). Each holds an `owner.pid` naming the process that made it. A
 * process removes its own when a host closes and, whatever else happens, when it exits (a crash
 * included: 'exit' handlers run for uncaught exceptions and process.exit). A process that could
 * not (SIGKILL, power loss) leaves them behind, so the next start removes every one whose owner
 * is no longer running. Directories without an owner file are left alone: they may be another
 * process's, made a moment ago.
 */
import { rmSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const PREFIX = 'edgeport-workerd-';
const OWNER_FILE = 'owner.pid';

/** This process's directories still to remove. */
const mine = new Set<string>();
let exitHookInstalled = false;
let staleSwept: Promise<void> | undefined;

export interface ScratchDir {
  readonly path: string;
  /** Removes the directory (again is fine). */
  remove(): Promise<void>;
}

/** Makes a private (0700) directory owned by this process, removed at exit if not before; the first call also sweeps stale ones. */
export async function makeScratchDir(root: string = tmpdir()): Promise<ScratchDir> {
  staleSwept ??= removeStaleScratchDirs(root).then(
    () => undefined,
    () => undefined,
  );
  await staleSwept;
  installExitHook();
  const path = await mkdtemp(join(root, PREFIX));
  mine.add(path);
  await writeFile(join(path, OWNER_FILE), `${process.pid}\n`);
  return {
    path,
    async remove() {
      mine.delete(path);
      await rm(path, { recursive: true, force: true });
    },
  };
}

/** Removes the scratch directories under `root` whose owner process is no longer running; resolves with those removed. */
export async function removeStaleScratchDirs(root: string = tmpdir()): Promise<string[]> {
  const removed: string[] = [];
  for (const name of await readdir(root).catch(() => [] as string[])) {
    if (!name.startsWith(PREFIX)) continue;
    const path = join(root, name);
    const owner = Number.parseInt(await readFile(join(path, OWNER_FILE), 'utf8').catch(() => ''), 10);
    if (!Number.isInteger(owner) || owner <= 0 || owner === process.pid || isRunning(owner)) continue;
    await rm(path, { recursive: true, force: true }).then(
      () => removed.push(path),
      () => undefined,
    );
  }
  return removed;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Synchronous: nothing asynchronous runs once the process is exiting.
  process.on('exit', () => {
    for (const path of mine) {
      try {
        rmSync(path, { recursive: true, force: true });
      } catch {
        // Best effort: the next start sweeps what is left.
      }
    }
  });
}
