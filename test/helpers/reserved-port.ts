/**
 * Ports for servers a test starts with a fixed port (documentation examples, Anvil), chosen before
 * they start. A port the kernel hands out for `listen(0)` lies in the ephemeral range, where any
 * test's outgoing connection may take it before the server binds it; so ports come from below that
 * range, are checked free by binding them, and are reserved across the suite's processes by a file
 * created exclusively, given back when the test ends.
 */
import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';

const RESERVED_PORTS = join(tmpdir(), 'edgeport-test-ports');
const LOW_PORT = 20000;
const HIGH_PORT = 32000;
const STALE_RESERVATION_MS = 60 * 60 * 1000;

/** `owner.after` gives the port back: a test's context, or whatever outlives several tests (the docs session). */
export async function reservePort(owner: Pick<TestContext, 'after'> | { after(undo: () => void): void }): Promise<number> {
  mkdirSync(RESERVED_PORTS, { recursive: true });
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = LOW_PORT + Math.floor(Math.random() * (HIGH_PORT - LOW_PORT));
    const reservation = join(RESERVED_PORTS, String(port));
    try {
      writeFileSync(reservation, String(process.pid), { flag: 'wx' });
    } catch {
      // Held by another test, or left by a run that was killed: an old one is given back.
      try {
        if (Date.now() - statSync(reservation).mtimeMs > STALE_RESERVATION_MS) rmSync(reservation, { force: true });
      } catch {
        /* just released */
      }
      continue;
    }
    if (await canListen(port)) {
      owner.after(() => rmSync(reservation, { force: true }));
      return port;
    }
    rmSync(reservation, { force: true });
  }
  throw new Error(`no free port between ${LOW_PORT} and ${HIGH_PORT} after 200 tries`);
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}
