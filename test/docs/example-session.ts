/**
 * Runs the examples of one Markdown document (markdown-examples.ts) as a reader would paste them
 * on a fresh machine: shell blocks in one bash session in a directory of the document's own, with
 * `edgeport` on the PATH (as `npm link` puts it) and `wrangler` too (a reader's own wrangler 4:
 * the devDependency on Node 22, reaching this machine only, test/helpers/wrangler.ts), programs
 * with node beside them, files written where they are named. Three things differ from a reader's machine, all so that documents can run
 * side by side and beside a developer's own edgeport:
 *
 * - the default ports in examples (8080, 8081, 8545, 9000, 8787, the origin's 3000, and the second
 *   instance's 8180, 8181, 8645, 9100) become free ports, and `/tmp/edgeport-logs` a directory of
 *   the document's own (the session's `[logs] file_roots`);
 * - a command that starts a server (`npm start`, `edgeport start`, `edgeport dev`), which a reader
 *   runs in a terminal of its own, runs in the background, and the next command waits for its
 *   ready line;
 * - `npm install`, `npm ci`, `npm link` and `npm test` are not run (the test runs from an
 *   installed clone, and is itself part of `npm test`).
 *
 * Every process the session starts is killed when the document ends, pass or fail.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config/load.ts';
import { within } from '../../src/core/within.ts';
import { reservePort } from '../helpers/reserved-port.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { wranglerShellCommand } from '../helpers/wrangler.ts';
import { outputMismatch, parseExamples } from './markdown-examples.ts';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The ports examples name, each replaced by a free port. */
const DEFAULT_PORTS = [8080, 8081, 8545, 9000, 8787, 3000, 8180, 8181, 8645, 9100] as const;
const LOG_ROOT = '/tmp/edgeport-logs';
/** How long one block may take (a server start on a busy machine included). */
const BLOCK_TIMEOUT_MS = 90_000;

export interface DocumentRun {
  ran: number;
  written: number;
  checked: number;
  notRun: Array<{ line: number; why: string }>;
}

/** Runs every example of `documentPath` (relative to the repository); throws at the first that fails, naming its line. */
export async function runDocumentExamples(t: TestContext, documentPath: string): Promise<DocumentRun> {
  const source = relative(ROOT, join(ROOT, documentPath));
  const examples = parseExamples(readFileSync(join(ROOT, documentPath), 'utf8'), source);
  const work = tempDir(t, 'edgeport-doc-');
  const logRoot = join(work, 'edgeport-logs');
  mkdirSync(logRoot);
  // The packages a reader installs (the repository's), and edgeport itself as `npm install
  // <edgeport>` puts it beside them, for examples that import `edgeport/store`.
  mkdirSync(join(work, 'node_modules'));
  for (const entry of readdirSync(join(ROOT, 'node_modules'))) symlinkSync(join(ROOT, 'node_modules', entry), join(work, 'node_modules', entry));
  symlinkSync(ROOT, join(work, 'node_modules', 'edgeport'));
  const bin = join(work, '.bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'edgeport'), `#!/bin/sh\nexec "${process.execPath}" "${join(ROOT, 'bin/edgeport.js')}" "$@"\n`, { mode: 0o755 });
  // A reader's wrangler 4 (it needs Node 22): the devDependency, on this machine only.
  writeFileSync(join(bin, 'wrangler'), wranglerShellCommand(join(work, '.wrangler-home')), { mode: 0o755 });
  const ports = new Map<number, number>();
  for (const port of DEFAULT_PORTS) ports.set(port, await reservePort(t));
  const rewrite = (code: string): string => code
    .replace(/\b(8080|8081|8545|9000|8787|3000|8180|8181|8645|9100)\b/g, (port) => String(ports.get(Number(port))))
    .replaceAll(LOG_ROOT, logRoot);

  // A `node --test` in an example reports to its terminal, not to this test runner as its child would.
  const { NODE_TEST_CONTEXT: _runnerChild, ...inherited } = process.env;
  const shell = new ShellSession(work, {
    ...inherited,
    PATH: `${bin}:${process.env.PATH ?? ''}`,
    HOME: work,
    EDGEPORT_LOGS_FILE_ROOTS: logRoot,
    // `npm start` and `edgeport start` without flags listen where the rewritten examples look.
    EDGEPORT_EDGE_PORT: String(ports.get(8080)), EDGEPORT_API_PORT: String(ports.get(8081)),
    EDGEPORT_GATEWAY_PORT: String(ports.get(8545)), EDGEPORT_S3_PORT: String(ports.get(9000)),
    // Whatever the developer's environment holds, the examples start from a fresh machine's.
    EDGEPORT_ADMIN_EMAIL: '', EDGEPORT_ADMIN_KEY: '', EDGEPORT_S3_ACCESS_KEY_ID: '', EDGEPORT_S3_SECRET_ACCESS_KEY: '',
    EDGEPORT_DATA_DIR: '', EDGEPORT_DB_URL: '', EDGEPORT_BLOBS_URL: '',
  });
  t.after(() => shell.close());
  await shell.run(PRELUDE);

  const report: DocumentRun = { ran: 0, written: 0, checked: 0, notRun: [] };
  let lastOutput: { line: number; text: string } | undefined;
  for (const [index, example] of examples.entries()) {
    const where = `${source}:${example.line}`;
    const code = rewrite(example.code);
    switch (example.what.kind) {
      case 'file': {
        const path = join(work, example.what.name);
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, code);
        report.written++;
        break;
      }
      case 'config': {
        const path = join(work, `.config-${index}.toml`);
        writeFileSync(path, code);
        try {
          loadConfig({ file: path, env: {} });
        } catch (error) {
          throw new Error(`${where}: the config example does not load: ${(error as Error).message}`, { cause: error });
        }
        report.checked++;
        break;
      }
      case 'shell':
      case 'program': {
        const script = example.what.kind === 'shell' ? `.block-${index}.sh` : `.example-${index}.${example.what.language === 'ts' ? 'mts' : 'mjs'}`;
        writeFileSync(join(work, script), code);
        const command = example.what.kind === 'shell' ? `. ./${script}`
          : example.what.language === 'ts' ? `node --import tsx ./${script}` : `node ./${script}`;
        const result = await shell.run(command);
        if (result.status !== 0) {
          throw new Error(`${where}: the example exited with ${result.status}:\n${example.code}\n--- it printed:\n${result.output}\n--- on stderr:\n${result.errors}`);
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

/**
 * A test per document of a group, run side by side: a document waits mostly on its server and the
 * commands it runs, hardly on this process. Each reports what ran, what was written and checked,
 * and which blocks were not run and why.
 */
export function testDocuments(group: string, documents: readonly string[]): void {
  describe(`the examples of ${group}`, { concurrency: true, timeout: 300_000 }, () => {
    for (const document of documents) {
      test(`every example of ${document} runs as written`, { timeout: 240_000 }, async (t) => {
        const run = await runDocumentExamples(t, document);
        t.diagnostic(`${run.ran} run, ${run.written} written, ${run.checked} checked${run.notRun.map((n) => `; line ${n.line} not run: ${n.why}`).join('')}`);
      });
    }
  });
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
  for i in $(seq 1 900); do
    if grep -qE '; ready$|serving script .* at http' "$log"; then cat "$log"; return 0; fi
    if ! kill -0 "$pid" 2>/dev/null; then cat "$log"; return 1; fi
    sleep 0.1
  done
  cat "$log"
  return 1
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

interface ShellResult {
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
    this.#child.stderr!.on('data', (chunk: Buffer) => { this.#errors += chunk.toString(); });
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
    const timeout = new Promise<string>((_, reject) => setTimeout(() => reject(new Error(`timed out after ${BLOCK_TIMEOUT_MS} ms:\n${this.#buffer}`)), BLOCK_TIMEOUT_MS).unref());
    const exited = this.#exited.then((status) => `${this.#buffer}\n${marker} ${status}\n`);
    const text = await Promise.race([done, timeout, exited]);
    this.#waiting = undefined;
    const at = text.lastIndexOf(marker);
    const status = Number(text.slice(at + marker.length).trim().split(/\s/)[0]);
    // The echo before the marker adds one newline of its own.
    return { status, output: text.slice(0, at).replace(/\n$/, ''), errors: this.#errors };
  }

  async close(): Promise<void> {
    try {
      process.kill(-this.#child.pid!, 'SIGTERM');
    } catch {
      return;
    }
    const exited = await within(this.#exited.then(() => true), 5_000, false);
    if (!exited) {
      try {
        process.kill(-this.#child.pid!, 'SIGKILL');
      } catch { /* gone */ }
    }
    // Servers started in the background are in the same group: make sure none outlives the test.
    try {
      process.kill(-this.#child.pid!, 'SIGKILL');
    } catch { /* all gone */ }
  }
}
