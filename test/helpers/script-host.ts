/**
 * Runs a script through the real script host (workerd + node:http) on port 0, in process, and
 * captures what it logs. For runtime tests; test/helpers/dev-server.ts runs the whole CLI instead.
 * Each host starts a workerd process (about a second of CPU): a file whose tests can share one
 * passes the file's own `{ after }` (node:test's top-level hook) instead of a test's context.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { pino } from 'pino';
import { startScriptHost } from '../../src/runtime/host.ts';
import { parseScriptConfig } from '../../src/runtime/script-config.ts';
import { onTestEnd } from './cleanup.ts';

export interface LogRecord {
  level: number;
  msg: string;
  [field: string]: unknown;
}

export interface TestHost {
  url: string;
  logs: LogRecord[];
  dataDir: string;
  /** Stops the server and the host (also done when the test ends). */
  stop(): Promise<void>;
}

export interface TestHostOptions {
  /** Extra keys of the script config (snake_case, as in TOML). */
  config?: Record<string, unknown>;
  /** The account whose buckets the script binds (default: none, as `edgeport dev` before any account exists). */
  accountId?: string | null;
  /** The data dir (default: a directory of the host's own). */
  dataDir?: string;
  /** Run `source` as a script uploaded through the API (one ES module) rather than a configured one. */
  uploaded?: boolean;
}

/** Writes `source` as the script's module, starts a host for it, and stops it when the test ends. */
export async function startTestHost(t: Pick<TestContext, 'after'>, source: string, options: TestHostOptions = {}): Promise<TestHost> {
  const dir = mkdtempSync(join(tmpdir(), 'edgeport-host-'));
  let stop = async (): Promise<void> => undefined;
  // Through onTestEnd, so the host stops before a data dir the test made earlier (tempDir) is removed.
  onTestEnd(t, async () => {
    await stop();
    rmSync(dir, { recursive: true, force: true });
  });
  writeFileSync(join(dir, 'script.mjs'), source);
  const script = parseScriptConfig({ name: 'test-script', main: 'script.mjs', compatibility_date: '2025-01-01', ...options.config }, { baseDir: dir });
  const logs: LogRecord[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => logs.push(JSON.parse(line) as LogRecord) });
  const dataDir = options.dataDir ?? join(dir, 'data');
  const uploaded = options.uploaded
    ? { mainModule: 'script.mjs', modules: [{ name: 'script.mjs', kind: 'esModule' as const, content: new TextEncoder().encode(source) }], vars: [] }
    : undefined;
  const host = await startScriptHost({ script, accountId: options.accountId ?? null, dataDir, logger, ...(uploaded ? { uploaded } : {}) });
  const server = createServer(host.handle);
  let stopped: Promise<void> | undefined;
  stop = () =>
    (stopped ??= (async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await host.close();
    })());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, logs, dataDir, stop: () => stop() };
}
