/**
 * Runs the real wrangler 4 CLI (the `wrangler` devDependency) against an edgeport management API,
 * as a user with `CLOUDFLARE_API_BASE_URL` set would, on the node that runs the tests
 * (`process.execPath`: edgeport's minimum, Node 22.13, is above wrangler's 22.12). It runs
 * `wrangler-dist/cli.js` with `--no-warnings`, as wrangler's own `bin/wrangler.js` does, without
 * that wrapper's extra process, so that stopping the child stops wrangler.
 *
 * Each `wranglerFor` gets a fresh HOME, XDG folders and TMPDIR (nothing from this machine's
 * wrangler login or cache is seen), metrics and error reports off, the update check answered from
 * a fresh cache in its TMPDIR, and no way off this machine: loopback-only.mjs refuses every
 * connection and look-up to a non-loopback host, and the proxy variables point at a closed
 * loopback port (wrangler sends everything but loopback through them). Every run has a time limit
 * and every child is stopped when its test ends, however it ends.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { exitOf, spawnNode, stopChild } from './child-processes.ts';
import { onTestEnd } from './cleanup.ts';
import { tempDir } from './temp-dir.ts';

const require = createRequire(import.meta.url);

export interface WranglerInstall {
  /** wrangler's `wrangler-dist/cli.js`. */
  cli: string;
  version: string;
}

/** Where the wrangler devDependency is; resolved when first needed, so that importing this file never fails where it is missing. */
export function wranglerInstall(): WranglerInstall {
  let wrangler: string;
  try {
    wrangler = dirname(require.resolve('wrangler/package.json'));
  } catch (error) {
    throw new Error('the devDependency wrangler is not installed: run npm install', { cause: error });
  }
  const { version } = JSON.parse(readFileSync(join(wrangler, 'package.json'), 'utf8')) as { version: string };
  return { cli: join(wrangler, 'wrangler-dist', 'cli.js'), version };
}

export const LOOPBACK_ONLY = fileURLToPath(new URL('./loopback-only.mjs', import.meta.url));
/** A loopback port nothing serves (the discard port): a request sent through the proxy is refused. */
const CLOSED_PROXY = 'http://127.0.0.1:9';
/** A wrangler command's time limit unless the caller gives one: a deploy bundles with esbuild first. */
const RUN_TIMEOUT_MS = 60_000;

export type WranglerCredentials = { email: string; key: string } | { token: string };

export interface WranglerOptions {
  /** The management API's base URL, ending in `/client/v4`. */
  apiBase: string;
  /** `CLOUDFLARE_ACCOUNT_ID`; without it wrangler asks `GET /accounts` (and `/memberships`). */
  accountId?: string;
  credentials: WranglerCredentials;
}

export interface WranglerResult {
  code: number | null;
  stdout: string;
  /** stdout as it came (what `r2 object get --pipe` wrote). */
  stdoutBytes: Buffer;
  stderr: string;
}

export interface RunOptions {
  /** Written to wrangler's stdin, then closed (e.g. the value for `secret put`). */
  input?: string | Buffer;
  timeoutMs?: number;
  /** More environment variables for this run (they win over the harness's). */
  env?: Record<string, string>;
}

export interface Wrangler {
  /** The project folder wrangler runs in: its wrangler.json, scripts and files go here. */
  dir: string;
  /** Runs one command to its end; rejects, with what it printed, if it is still running after the time limit. */
  run(args: readonly string[], options?: RunOptions): Promise<WranglerResult>;
  /** Starts a command that runs until stopped (`tail`); it is stopped when the test ends. */
  start(args: readonly string[], options?: Pick<RunOptions, 'env'>): ChildProcess;
  /** Every connection or look-up to a host off this machine that loopback-only.mjs refused so far (`connect host:port`). */
  refused(): string[];
}

/**
 * What keeps a wrangler run to itself and to this machine, whoever runs it (the harness, the docs
 * test's `wrangler` command): a TMPDIR of its own whose update-check cache says "up to date"
 * (wrangler reads `<tmpdir>/update-check/wrangler-latest.json` before it asks the registry),
 * metrics and error reports off, no colours, and the proxies at a closed port.
 */
export function isolation(home: string): Record<string, string> {
  const tmp = join(home, 'tmp');
  mkdirSync(join(tmp, 'update-check'), { recursive: true });
  writeFileSync(join(tmp, 'update-check', 'wrangler-latest.json'), JSON.stringify({ latest: wranglerInstall().version, lastUpdate: Date.now() }));
  return {
    TMPDIR: tmp,
    WRANGLER_SEND_METRICS: 'false',
    WRANGLER_SEND_ERROR_REPORTS: 'false',
    FORCE_COLOR: '0',
    HTTP_PROXY: CLOSED_PROXY,
    HTTPS_PROXY: CLOSED_PROXY,
    NO_PROXY: 'localhost,127.0.0.1,::1',
    LOOPBACK_ONLY_LOG: join(home, 'refused.log'),
  };
}

/** The command line that runs wrangler `args` as the harness does (this node, loopback only), for a shell script. */
export function wranglerCommandLine(): string[] {
  return [process.execPath, '--no-warnings', '--import', LOOPBACK_ONLY, wranglerInstall().cli];
}

/**
 * A `wrangler` command for a shell session (the docs test's): wrangler as the harness runs it,
 * in the session's environment (its CLOUDFLARE_* variables, its HOME) plus isolation(`home`).
 */
export function wranglerShellCommand(home: string): string {
  try {
    wranglerInstall();
  } catch (error) {
    return `#!/bin/sh\necho 'wrangler: ${(error as Error).message}' >&2\nexit 1\n`;
  }
  const quote = (value: string) => `'${value.replaceAll("'", "'\\''")}'`;
  const exports = Object.entries(isolation(home))
    .map(([name, value]) => `${name}=${quote(value)}`)
    .join(' ');
  return `#!/bin/sh\n# wrangler, reaching this machine only (test/helpers/wrangler.ts)\nexport ${exports}\nexec ${wranglerCommandLine().map(quote).join(' ')} "$@"\n`;
}

/** The environment of every run: only what is set here (this process's CLOUDFLARE_* and proxies never leak in). */
function environment(home: string, options: WranglerOptions): NodeJS.ProcessEnv {
  const credentials =
    'token' in options.credentials
      ? { CLOUDFLARE_API_TOKEN: options.credentials.token }
      : { CLOUDFLARE_EMAIL: options.credentials.email, CLOUDFLARE_API_KEY: options.credentials.key };
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    CLOUDFLARE_API_BASE_URL: options.apiBase,
    ...(options.accountId === undefined ? {} : { CLOUDFLARE_ACCOUNT_ID: options.accountId }),
    ...credentials,
    ...isolation(home),
  };
}

/** The child's exit code and all it printed, once it has exited. */
async function resultOf(child: ChildProcess): Promise<WranglerResult> {
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  child.stdout!.on('data', (chunk: Buffer) => stdout.push(chunk));
  child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk));
  const code = await exitOf(child);
  const stdoutBytes = Buffer.concat(stdout);
  return { code, stdout: stdoutBytes.toString(), stdoutBytes, stderr: Buffer.concat(stderr).toString() };
}

/** A wrangler for `t` with its own HOME and project folder; every child it starts is stopped when `t` ends. */
export function wranglerFor(t: TestContext, options: WranglerOptions): Wrangler {
  const home = tempDir(t, 'edgeport-wrangler-');
  const dir = join(home, 'project');
  mkdirSync(dir);
  const env = environment(home, options);
  const start = (args: readonly string[], extra: Pick<RunOptions, 'env'> = {}, stdin: 'pipe' | 'ignore' = 'ignore') => {
    const [, ...flags] = wranglerCommandLine();
    const child = spawnNode([...flags, ...args], {
      cwd: dir,
      env: { ...env, ...extra.env },
      stdio: [stdin, 'pipe', 'pipe'],
    });
    onTestEnd(t, () => stopChild(child, 5_000));
    return child;
  };
  return {
    dir,
    start: (args, extra) => start(args, extra),
    refused: () => (existsSync(env.LOOPBACK_ONLY_LOG!) ? readFileSync(env.LOOPBACK_ONLY_LOG!, 'utf8').split('\n').filter(Boolean) : []),
    async run(args, runOptions = {}) {
      const child = start(args, runOptions, runOptions.input === undefined ? 'ignore' : 'pipe');
      if (runOptions.input !== undefined) child.stdin!.end(runOptions.input);
      const output = resultOf(child);
      const limit = runOptions.timeoutMs ?? RUN_TIMEOUT_MS;
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), limit);
      });
      try {
        const first = await Promise.race([output, timedOut]);
        if (first !== 'timeout') return first;
        await stopChild(child, 2_000);
        const { stdout, stderr } = await output;
        throw new Error(`wrangler ${args.join(' ')} was still running after ${limit} ms:\n${stdout}${stderr}`);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** Asserts the run exited 0 and returns its stdout; the message holds all it printed. */
export function succeeded(result: WranglerResult, what = 'wrangler'): string {
  assert.equal(result.code, 0, `${what} exited with ${result.code}:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}
