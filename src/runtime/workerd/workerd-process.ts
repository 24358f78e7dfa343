/**
 * One running workerd process: started with a config, ready once it reports its socket listening
 * (`--control-fd`), and stopped cleanly (SIGTERM, then SIGKILL). It never outlives the server: it
 * runs under a small shell that holds the read end of a pipe from the server, and the moment the
 * pipe ends (the server stopped it, exited, crashed or was killed), the shell stops workerd.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { LineSplitter } from './output-lines.ts';
import { WORKERD } from './workerd-package.ts';

/**
 * Runs `"$@"` (workerd) and stops it when stdin ends: the server holds the pipe's only write end.
 * fd 4 keeps stdin for the watcher (a background job's own stdin is /dev/null); workerd gets
 * neither, and alone keeps fd 3, its control pipe, so the pipe ends the moment workerd does.
 */
const GUARD = `exec 4<&0
"$@" </dev/null 4<&- &
child=$!
(read -r _ <&4; kill -TERM "$child" 2>/dev/null; sleep 5; kill -KILL "$child" 2>/dev/null) </dev/null >/dev/null 2>&1 3>&- &
watcher=$!
exec 4<&- 3>&-
wait "$child"
status=$?
kill "$watcher" 2>/dev/null
exit "$status"`;

const STOP_GRACE_MS = 5_000;

export interface WorkerdProcessOptions {
  configFile: string;
  /** Directory the config's `embed` paths are relative to. */
  cwd: string;
  /**
   * A line workerd wrote, on stdout (the script's console.log) or stderr (its errors and
   * console.error), cut to `maxLineBytes`; `cutBytes` is how much of it was cut off.
   */
  onOutput(stream: 'stdout' | 'stderr', line: string, cutBytes: number): void;
  /** The longest line passed on (and held in memory while it is read). */
  maxLineBytes: number;
  /** The process ended without being asked to (after it was ready or not). */
  onExit(code: number | null, signal: NodeJS.Signals | null): void;
  /** Run with `--experimental` (the Worker Loader needs it; experimental compatibility flags stay refused to scripts). */
  experimental?: boolean;
}

export class WorkerdProcess {
  readonly #child: ChildProcess;
  readonly #exited: Promise<void>;
  /** Resolves once the process has exited and everything it printed has been read. */
  readonly closed: Promise<void>;
  /** The last lines of stderr, for the reason a start failed. */
  readonly #recentErrors: string[] = [];
  #stopping = false;
  /** It reported its socket listening: from then on, an end it was not asked for is reported. */
  #ready = false;

  private constructor(child: ChildProcess, options: WorkerdProcessOptions) {
    this.#child = child;
    const lines = (stream: Readable, name: 'stdout' | 'stderr') => {
      // Not node:readline: it holds a line whole until its newline, however long the script made it.
      const splitter = new LineSplitter(options.maxLineBytes, (line, cutBytes) => {
        if (name === 'stderr') {
          this.#recentErrors.push(line);
          if (this.#recentErrors.length > 20) this.#recentErrors.shift();
        }
        options.onOutput(name, line, cutBytes);
      });
      stream.on('data', (chunk: Buffer) => splitter.push(chunk));
      stream.on('end', () => splitter.end());
    };
    lines(child.stdout!, 'stdout');
    lines(child.stderr!, 'stderr');
    this.#exited = new Promise((resolve) => child.once('exit', () => resolve()));
    this.closed = new Promise((resolve) => child.once('close', () => resolve()));
    // The control pipe ends as workerd does, before its guard has seen it and exited.
    let reported = false;
    const report = (code: number | null, signal: NodeJS.Signals | null) => {
      if (reported) return;
      reported = true;
      if (this.#ready && !this.#stopping) options.onExit(code, signal);
    };
    (child.stdio[3] as Readable).once('close', () => report(null, null));
    child.once('exit', report);
  }

  /** Starts workerd; resolves once its socket listens, rejects with workerd's own errors if it exits first. */
  static async start(options: WorkerdProcessOptions): Promise<WorkerdProcess> {
    const args = [WORKERD.binary, 'serve', options.configFile, '--control-fd=3', ...(options.experimental ? ['--experimental'] : [])];
    const child = spawn('/bin/sh', ['-c', GUARD, 'edgeport-workerd', ...args], {
      cwd: options.cwd,
      // No environment of the server's: workerd needs none, and a script could never see one anyway.
      env: { PATH: '/usr/bin:/bin' },
      stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
      // Its own process group, so that stopping it reaches workerd and the guard alike.
      detached: true,
    });
    const started = new WorkerdProcess(child, options);
    const control = child.stdio[3] as Readable;
    await new Promise<void>((resolve, reject) => {
      const onExit = (code: number | null) =>
        reject(new Error(started.#recentErrors.join('\n').trim() || `workerd exited with code ${code} before it was ready.`));
      child.once('exit', onExit);
      child.once('error', reject);
      createInterface({ input: control }).on('line', (line) => {
        let event: { event?: string; socket?: string };
        try {
          event = JSON.parse(line) as typeof event;
        } catch {
          return;
        }
        if (event.event === 'listen' && event.socket === 'http') {
          started.#ready = true;
          child.off('exit', onExit);
          resolve();
        }
      });
    }).catch(async (error: unknown) => {
      await started.stop();
      throw error;
    });
    return started;
  }

  /** The workerd process's own id (the guard shell's child), when it runs; Linux only (read from /proc). */
  workerdPid(): number | undefined {
    const guard = this.#child.pid;
    if (guard === undefined || this.#child.exitCode !== null) return undefined;
    try {
      const children = readFileSync(`/proc/${guard}/task/${guard}/children`, 'utf8').trim().split(' ').map(Number);
      for (const pid of children) {
        if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] === WORKERD.binary) return pid;
      }
    } catch {
      // Not Linux, or the process just went away.
    }
    return undefined;
  }

  /** Stops workerd: SIGTERM through the guard, then SIGKILL to the whole group after a grace period. */
  async stop(): Promise<void> {
    this.#stopping = true;
    const child = this.#child;
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.stdin?.end();
    const killer = setTimeout(() => this.#killGroup(), STOP_GRACE_MS);
    await this.#exited;
    clearTimeout(killer);
  }

  /** Ends workerd at once (it stopped answering); resolves when it is gone. */
  async kill(): Promise<void> {
    this.#stopping = true;
    this.#killGroup();
    await this.#exited;
  }

  #killGroup(): void {
    const pid = this.#child.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}
