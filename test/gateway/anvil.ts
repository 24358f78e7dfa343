/**
 * Anvil (Foundry's development node, from its npm package, a dev dependency) on 127.0.0.1, for
 * tests that put the gateway in front of a real node. Quiet (it would print every call); on a port
 * reserved for it (reserved-port.ts); stopped when the test ends. Undefined where the package has no binary (it
 * ships for linux x64 only).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { reservePort } from '../helpers/reserved-port.ts';

export const ANVIL_BINARY = fileURLToPath(new URL('../../node_modules/.bin/anvil', import.meta.url));

export const anvilInstalled = (): boolean => existsSync(ANVIL_BINARY);

/** Starts Anvil and resolves with its URL once it answers JSON-RPC. */
export async function startAnvil(t: TestContext): Promise<string> {
  const port = await reservePort(t);
  const child = spawn(ANVIL_BINARY, ['--host', '127.0.0.1', '--port', String(port), '--quiet'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
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
      const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}' });
      if (response.ok) return url;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error(`Anvil did not answer on ${url} within 15 s: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
