/**
 * `edgeport dev <script-config>`: serves one script on 127.0.0.1, like a local dev server, and
 * prints one line with its URL when ready. Buckets it binds are created on first use.
 */
import { createLogger } from '../core/log.ts';
import { loadScriptConfig, startScriptHost } from '../runtime/index.ts';
import type { DevArgs } from './args.ts';
import { listen } from './listener.ts';
import { onShutdownSignal } from './shutdown.ts';

const HOST = '127.0.0.1';

/** Starts the dev server; resolves once it listens. Config and startup problems reject. */
export async function runDev(args: DevArgs): Promise<void> {
  const script = loadScriptConfig(args.config);
  const logger = createLogger();
  const host = await startScriptHost({ script, dataDir: args.dataDir, logger });
  let listener;
  try {
    // The default [limits]: plain-text refusals, as the edge answers.
    listener = await listen(host.handle, HOST, args.port, 'edgeport dev', { logger });
  } catch (error) {
    await host.close();
    throw error;
  }
  onShutdownSignal(async () => {
    await listener.close();
    await host.close();
  });
  process.stdout.write(`edgeport dev: serving script ${JSON.stringify(script.name)} at ${listener.url}\n`);
}
