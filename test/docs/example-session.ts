/**
 * Runs the examples of the README and then of every page it links, in its order (documents.ts),
 * as one reader would paste them: one bash session against the one server the README starts,
 * shell blocks run as they are, files written where they are named (and programs run by the shell
 * blocks after them, with the command the page shows), `edgeport.toml` blocks loaded by the real
 * config loader, shown output compared with what the block printed (markdown-examples.ts).
 *
 * The session starts in a directory that stands for the reader's fresh clone after `npm install`:
 * `bin` is the repository's, `node_modules` holds the repository's packages (and edgeport itself,
 * as `npm install <edgeport>` puts it, for examples that import `edgeport/store`), but none of
 * what tools cached there (`node_modules/.cache`: wrangler's remembered account, for one), which a
 * fresh clone does not have. The shell starts as a fresh machine's: a HOME of its own, and a PATH
 * without `edgeport`, without `wrangler` and without any `node_modules/.bin` (`npm test` puts the
 * repository's there), nor the CLOUDFLARE_*, WRANGLER_*, XDG_* or EDGEPORT_* variables of the
 * developer's environment; so the README's `export PATH` line is what brings both commands, and
 * a block that needs anything else a reader would not have fails. Only this differs from a
 * reader's machine, so that the test can run beside the other tests and a developer's own
 * edgeport:
 *
 * - the ports examples name (DEFAULT_PORTS) become free ports, and the PostgreSQL schema they name
 *   (`schema=edgeport` in the shared `test` database) one of the session's own, dropped at its end;
 * - a command that starts a server (`npm start`, `edgeport start`, `edgeport dev`), which a reader
 *   runs in a terminal of its own, runs in the background, and the next command waits for its
 *   ready line (`__stop_servers` stops them all, as a reader's Ctrl-C in those terminals would);
 * - `npm install`, `npm ci`, `npm link` and `npm test` are not run (the test runs from an
 *   installed clone, and is itself part of `npm test`), and `npm start` runs `edgeport start`
 *   without its build step (the build writes into the repository's `dist/`, not the session's).
 *
 * Every process the session starts is killed when it closes, pass or fail. A page that fails ends
 * the session (its shell exits, as `set -e` makes it): the pages after it are not run.
 */
import { randomBytes } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config/load.ts';
import { within } from '../../src/core/within.ts';
import { dropTestSchema } from '../helpers/postgres.ts';
import { reservePort } from '../helpers/reserved-port.ts';
import { outputMismatch, parseExamples } from './markdown-examples.ts';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The ports examples name, each replaced by a free port: the README's server (8080, 8081, 8545,
 * 9000), its `edgeport dev` (8787) and origin (3000); the pages' own: edge-and-logs.md's origin
 * (3001), object-store.md's `edgeport dev` (8788), operations.md's two instances (8180.., 8280..)
 * and its backup round trip's server (8380..).
 */
const DEFAULT_PORTS = [8080, 8081, 8545, 9000, 8787, 8788, 3000, 3001, 8180, 8181, 8645, 9100, 8280, 8281, 8745, 9200, 8380, 8381, 8845, 9300] as const;
/** What a fresh clone's `npm install` makes in node_modules, but not what tools cache there later. */
const NOT_IN_A_FRESH_CLONE = new Set(['.cache']);
/** How long one block may take (a server start on a busy machine included). */
const BLOCK_TIMEOUT_MS = 90_000;

export interface DocumentRun {
  ran: number;
  written: number;
  checked: number;
  notRun: Array<{ line: number; why: string }>;
}

/** One reader's shell, in one directory, across the README and every page after it. */
export class DocsSession {
  /** The reader's clone: where the session starts, and files are written. */
  readonly work: string;
  readonly #shell: ShellSession;
  readonly #rewrite: (code: string) => string;
  readonly #asyncCleanups: Array<() => Promise<void>>;
  readonly #cleanups: Array<() => void>;
  #blocks = 0;
  /** Where the session ended, once a page failed. */
  #ended: string | undefined;

  private constructor(
    work: string,
    shell: ShellSession,
    rewrite: (code: string) => string,
    cleanups: Array<() => void>,
    asyncCleanups: Array<() => Promise<void>>,
  ) {
    this.work = work;
    this.#shell = shell;
    this.#rewrite = rewrite;
    this.#asyncCleanups = asyncCleanups;
    this.#cleanups = cleanups;
  }

  static async open(): Promise<DocsSession> {
    const cleanups: Array<() => void> = [];
    const asyncCleanups: Array<() => Promise<void>> = [];
    const work = mkdtempSync(join(tmpdir(), 'edgeport-docs-'));
    cleanups.push(() => rmSync(work, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 }));
    const ports = new Map<number, number>();
    try {
      mkdirSync(join(work, '.docs-test'));
      symlinkSync(join(ROOT, 'bin'), join(work, 'bin'));
      mkdirSync(join(work, 'node_modules'));
      for (const entry of readdirSync(join(ROOT, 'node_modules'))) {
        if (!NOT_IN_A_FRESH_CLONE.has(entry)) symlinkSync(join(ROOT, 'node_modules', entry), join(work, 'node_modules', entry));
      }
      symlinkSync(ROOT, join(work, 'node_modules', 'edgeport'));
      mkdirSync(join(work, '.home'));
      for (const port of DEFAULT_PORTS)
        ports.set(
          port,
          await reservePort({
            after: (undo: () => void) => {
              cleanups.push(undo);
            },
          }),
        );
      const pattern = new RegExp(`\\b(${DEFAULT_PORTS.join('|')})\\b`, 'g');
      // The schema the examples keep in the shared `test` database (operations.md's two instances) is
      // the session's own, as its ports are: a run never meets what an earlier or concurrent one left.
      const schema = `docs_${randomBytes(6).toString('hex')}`;
      asyncCleanups.push(() => dropTestSchema(schema));
      const rewrite = (code: string): string =>
        code.replace(pattern, (port) => String(ports.get(Number(port)))).replace(/\bschema=edgeport\b/g, `schema=${schema}`);

      const shell = new ShellSession(work, {
        ...freshEnvironment(process.env),
        // A fresh machine's: no edgeport nor wrangler on it until the README's first block.
        PATH: withoutTools(process.env.PATH ?? '').join(delimiter),
        HOME: join(work, '.home'),
        // `npm start` and `edgeport start` without flags listen where the rewritten examples look.
        EDGEPORT_EDGE_PORT: String(ports.get(8080)),
        EDGEPORT_API_PORT: String(ports.get(8081)),
        EDGEPORT_GATEWAY_PORT: String(ports.get(8545)),
        EDGEPORT_S3_PORT: String(ports.get(9000)),
      });
      const session = new DocsSession(work, shell, rewrite, cleanups, asyncCleanups);
      const prelude = await shell.run(PRELUDE);
      if (prelude.status !== 0) throw new Error(`the session's prelude failed:\n${prelude.output}\n${prelude.errors}`);
      return session;
    } catch (error) {
      for (const undo of cleanups.reverse()) undo();
      for (const undo of asyncCleanups) await undo().catch(() => undefined);
      throw error;
    }
  }

  /** Runs `command` in the session (for the test's own checks); throws when the session has ended. */
  async run(command: string): Promise<ShellResult> {
    if (this.#ended !== undefined) throw new Error(`the session ended at ${this.#ended}`);
    return this.#shell.run(command);
  }

  /**
   * Runs every example of `documentPath` (relative to the repository) in the session; throws at the
   * first that fails, naming its line, and the session ends there. `signal` (the test's) ends it
   * too, so a page that ran out of time never runs on beside the next one.
   */
  async runDocument(documentPath: string, signal: AbortSignal): Promise<DocumentRun> {
    if (this.#ended !== undefined) throw new Error(`not run: the session ended at ${this.#ended}, and every page after it builds on what came before`);
    const source = relative(ROOT, join(ROOT, documentPath));
    const onAbort = (): void => {
      this.#ended ??= `${source} (out of time)`;
      void this.#shell.close();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      return await this.#runExamples(source);
    } catch (error) {
      this.#ended ??= (error as Error).message.split(':').slice(0, 2).join(':');
      await this.#shell.close();
      throw error;
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  async #runExamples(source: string): Promise<DocumentRun> {
    const examples = parseExamples(readFileSync(join(ROOT, source), 'utf8'), source);
    const report: DocumentRun = { ran: 0, written: 0, checked: 0, notRun: [] };
    let lastOutput: { line: number; text: string } | undefined;
    for (const example of examples) {
      const where = `${source}:${example.line}`;
      const code = this.#rewrite(example.code);
      switch (example.what.kind) {
        case 'file': {
          const path = join(this.work, example.what.name);
          mkdirSync(dirname(path), { recursive: true });
          writeFileSync(path, code);
          report.written++;
          break;
        }
        case 'config': {
          const path = join(this.work, '.docs-test', `config-${++this.#blocks}.toml`);
          writeFileSync(path, code);
          try {
            loadConfig({ file: path, env: {} });
          } catch (error) {
            throw new Error(`${where}: the config example does not load: ${(error as Error).message}`, { cause: error });
          }
          report.checked++;
          break;
        }
        case 'shell': {
          // Sourced, as pasting it would run it: its variables and functions stay in the session.
          const script = join(this.work, '.docs-test', `block-${++this.#blocks}.sh`);
          writeFileSync(script, code);
          const result = await this.#shell.run(`. '${script}'`);
          if (result.status !== 0) {
            throw new Error(
              `${where}: the example exited with ${result.status}:\n${example.code}\n--- it printed:\n${result.output}\n--- on stderr:\n${result.errors}`,
            );
          }
          lastOutput = { line: example.line, text: result.output };
          report.ran++;
          break;
        }
        case 'output': {
          if (!lastOutput) throw new Error(`${where}: an <!-- output --> block follows no example`);
          const mismatch = outputMismatch(code, lastOutput.text);
          if (mismatch) throw new Error(`${where}: the example at line ${lastOutput.line} printed something else: ${mismatch}`);
          report.checked++;
          break;
        }
        case 'not-run':
          report.notRun.push({ line: example.line, why: example.what.why });
          break;
        case 'illustration':
          break;
      }
    }
    return report;
  }

  /** Kills everything the session started, gives its ports back and removes its directory. */
  async close(): Promise<void> {
    this.#ended ??= 'its close';
    await this.#shell.close();
    for (const undo of this.#cleanups.reverse()) undo();
    for (const undo of this.#asyncCleanups) await undo().catch(() => undefined);
  }
}

/**
 * The PATH without the directories a fresh machine does not have: those that hold an `edgeport` (a
 * developer's `npm link`) or a `wrangler` (a global install), and every `node_modules/.bin` (`npm
 * test` puts the repository's first).
 */
function withoutTools(path: string): string[] {
  const holds = (dir: string, name: string): boolean => {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  return path.split(delimiter).filter((dir) => dir !== '' && !/node_modules[/\\]\.bin[/\\]?$/.test(dir) && !holds(dir, 'edgeport') && !holds(dir, 'wrangler'));
}

/**
 * The test's environment less what a reader's fresh shell would not hold: the developer's
 * edgeport, Cloudflare and wrangler settings, XDG folders (HOME is the session's own), and what
 * the test runner sets for its children (`node --test` in an example reports to its terminal).
 */
function freshEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const dropped = /^(EDGEPORT_|CLOUDFLARE_|WRANGLER_|XDG_|NODE_TEST_CONTEXT$)/;
  return Object.fromEntries(Object.entries(env).filter(([name]) => !dropped.test(name)));
}

/**
 * Defined in the session before the first example: servers start in the background and are
 * waited for; the install commands are not run.
 */
const PRELUDE = `
# However the session ends (an example fails, the test process dies and closes stdin), everything
# it started goes with it: the shell leads a process group of its own.
trap 'kill 0' EXIT
__serve() {
  local log
  log=$(mktemp -p "$PWD" .server-XXXXXX.log)
  command edgeport "$@" > "$log" 2>&1 &
  local pid=$! i
  __SERVERS="$__SERVERS $pid"
  for i in $(seq 1 900); do
    if grep -qE '; ready$|serving script .* at http' "$log"; then cat "$log"; return 0; fi
    if ! kill -0 "$pid" 2>/dev/null; then cat "$log"; return 1; fi
    sleep 0.1
  done
  cat "$log"
  return 1
}
# Stops every server started so far (SIGTERM: the clean stop Ctrl-C makes), and waits for them.
__stop_servers() {
  local pid
  for pid in $__SERVERS; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in $__SERVERS; do while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done; done
  __SERVERS=
}
edgeport() {
  case "$1" in
    start|dev) __serve "$@" ;;
    *) command edgeport "$@" ;;
  esac
}
npm() {
  case "$1" in
    start) edgeport start ;;
    install|ci|link|test) echo "(the docs test does not run: npm $*)" ;;
    *) command npm "$@" ;;
  esac
}
`;

export interface ShellResult {
  status: number;
  /** What it printed on stdout (what an <!-- output --> block shows). */
  output: string;
  /** What it printed on stderr. */
  errors: string;
}

/** One bash process; commands run in it one at a time (so variables and directories carry over). */
class ShellSession {
  readonly #child: ChildProcess;
  #buffer = '';
  #errors = '';
  #waiting: ((text: string) => void) | undefined;
  #exited: Promise<number>;
  #counter = 0;

  constructor(cwd: string, env: NodeJS.ProcessEnv) {
    // Its own process group: closing kills the shell and everything it started.
    this.#child = spawn('bash', ['--noprofile', '--norc'], { cwd, env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    this.#child.stdout!.on('data', (chunk: Buffer) => {
      this.#buffer += chunk.toString();
      this.#waiting?.(this.#buffer);
    });
    // What a reader sees in the terminal besides the output: kept apart, shown when an example fails.
    this.#child.stderr!.on('data', (chunk: Buffer) => {
      this.#errors += chunk.toString();
    });
    this.#exited = new Promise((resolve) => this.#child.once('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1))));
  }

  /** Runs `command` with errexit and pipefail; resolves with its status (that of the shell, when it failed) and everything it printed. */
  async run(command: string): Promise<ShellResult> {
    const marker = `__EDGEPORT_DOCS_DONE_${++this.#counter}__`;
    this.#buffer = '';
    this.#errors = '';
    // errexit: a failing command ends the session, and with it the document's run.
    this.#child.stdin!.write(`set -eo pipefail\n${command}\necho; echo "${marker} $?"\n`);
    const done = new Promise<string>((resolve) => {
      this.#waiting = (text) => {
        if (new RegExp(`${marker} \\d+\\n`).test(text)) resolve(text);
      };
      this.#waiting(this.#buffer);
    });
    const timeout = new Promise<string>((_, reject) =>
      setTimeout(() => reject(new Error(`timed out after ${BLOCK_TIMEOUT_MS} ms:\n${this.#buffer}`)), BLOCK_TIMEOUT_MS).unref(),
    );
    const exited = this.#exited.then((status) => `${this.#buffer}\n${marker} ${status}\n`);
    const text = await Promise.race([done, timeout, exited]);
    this.#waiting = undefined;
    const at = text.lastIndexOf(marker);
    const status = Number(
      text
        .slice(at + marker.length)
        .trim()
        .split(/\s/)[0],
    );
    // The echo before the marker adds one newline of its own.
    return { status, output: text.slice(0, at).replace(/\n$/, ''), errors: this.#errors };
  }

  async close(): Promise<void> {
    try {
      process.kill(-this.#child.pid!, 'SIGTERM');
    } catch {
      return;
    }
    const exited = await within(
      this.#exited.then(() => true),
      5_000,
      false,
    );
    if (!exited) {
      try {
        process.kill(-this.#child.pid!, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    // Servers started in the background are in the same group: make sure none outlives the test.
    try {
      process.kill(-this.#child.pid!, 'SIGKILL');
    } catch {
      /* all gone */
    }
  }
}
