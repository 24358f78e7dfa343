/**
 * Anvil (Foundry's development node, from its npm package `@foundry-rs/anvil`, a dev dependency) on
 * 127.0.0.1, for tests that put the gateway in front of a real node. Quiet (it would print every
 * call); on a port reserved for it (reserved-port.ts); stopped when the test ends. The binary is
 * the one of the platform package that npm installed among the wrapper's optional dependencies
 * (macOS, Linux and Windows, x64 and arm64), run directly rather than through the wrapper's node
 * script, so that stopping the child stops Anvil; undefined on other platforms.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import type { TestContext } from 'node:test';
import { reservePort } from '../helpers/reserved-port.ts';

const require = createRequire(import.meta.url);

/** The wrapper's name for this platform's package (its const.mjs): @foundry-rs/anvil-linux-amd64 and so on. */
const PLATFORM_PACKAGE = `@foundry-rs/anvil-${process.platform}-${process.arch === 'x64' ? 'amd64' : process.arch}`;

/** The Anvil binary for this platform, or undefined where none is installed. */
export function anvilBinary(): string | undefined {
  try {
    // The platform package is the wrapper's (optional) dependency: resolved from the wrapper.
    const wrapper = createRequire(require.resolve('@foundry-rs/anvil/package.json'));
    return wrapper.resolve(`${PLATFORM_PACKAGE}/bin/anvil${process.platform === 'win32' ? '.exe' : ''}`);
  } catch {
    return undefined;
  }
}

export const anvilInstalled = (): boolean => anvilBinary() !== undefined;

/** Starts Anvil and resolves with its URL once it answers JSON-RPC. */
export async function startAnvil(t: TestContext): Promise<string> {
  const port = await reservePort(t);
  const binary = anvilBinary();
  if (binary === undefined) throw new Error(`Anvil is not installed for this platform (${PLATFORM_PACKAGE}): run npm install`);
  const child = spawn(binary, ['--host', '127.0.0.1', '--port', String(port), '--quiet'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`Anvil exited with ${child.exitCode}: ${stderr}`);
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
      });
      if (response.ok) return url;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error(`Anvil did not answer on ${url} within 15 s: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
