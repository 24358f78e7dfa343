/**
 * `edgeport dev <script-config>`: serves one script on 127.0.0.1, like a local dev server, and
 * prints one line with its URL when ready. Buckets it binds are created on first use.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '../core/log.ts';
import { loadScriptConfig, startScriptHost } from '../runtime/index.ts';
import type { DevArgs } from './args.ts';
import { onShutdownSignal } from './shutdown.ts';

const HOST = '127.0.0.1';
/** How long requests in flight may take to finish after SIGTERM before connections are cut. */
const DRAIN_MS = 2_000;

/** Starts the dev server; resolves once it listens. Config and startup problems reject. */
export async function runDev(args: DevArgs): Promise<void> {
  const script = loadScriptConfig(args.config);
  const logger = createLogger();
  const host = await startScriptHost({ script, dataDir: args.dataDir, logger });
  const server = createServer(host.handle);
  try {
    await listen(server, args.port);
  } catch (error) {
    await host.close();
    throw error;
  }
  const { port } = server.address() as AddressInfo;
  onShutdownSignal(async () => {
    const closed = new Promise((resolve) => server.close(resolve));
    server.closeIdleConnections();
    const timer = setTimeout(() => server.closeAllConnections(), DRAIN_MS);
    await closed;
    clearTimeout(timer);
    await host.close();
  });
  process.stdout.write(`edgeport dev: serving script ${JSON.stringify(script.name)} at http://${HOST}:${port}\n`);
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, HOST, () => {
      server.off('error', reject);
      resolve();
    });
  });
}
