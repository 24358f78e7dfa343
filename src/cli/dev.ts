/**
 * `edgeport dev <script-config>`: serves one script on 127.0.0.1, like a local dev server, and
 * prints one line with its URL when ready. Buckets it binds live in the data dir (default
 * `./.edgeport-dev`, apart from `edgeport start`'s), which it locks as `start` does (one process per
 * data dir); a script that binds no bucket uses no data dir. Buckets are created on first use, as
 * the first account's when the data dir has accounts (what `edgeport start` gives its scripts),
 * else as buckets of no account, which the first account adopts once `edgeport start` makes it.
 */
import { createLogger } from '../core/log.ts';
import { firstAccountIdIn } from '../db/open-control-store.ts';
import { loadScriptConfig, startScriptHost } from '../runtime/index.ts';
import type { DevArgs } from './args.ts';
import { optionHint } from './commands.ts';
import { lockDataDir } from './data-dir-lock.ts';
import { recoverInterruptedRestore } from './restore-swap.ts';
import { listen } from './listener.ts';
import { onShutdownSignal } from './shutdown.ts';

const HOST = '127.0.0.1';

/** Starts the dev server; resolves once it listens. Config and startup problems reject. */
export async function runDev(args: DevArgs): Promise<void> {
  const script = loadScriptConfig(args.config);
  const usesDataDir = script.storeBuckets.length > 0;
  // Before anything reads or writes the data dir: a second process refuses here.
  const lock = usesDataDir ? lockDataDir(args.dataDir, { flagHint: optionHint('dev', 'data-dir') }) : undefined;
  const logger = createLogger();
  let host;
  let listener;
  try {
    // A restore killed while swapping its data in: the previous data goes back before anything reads it.
    if (usesDataDir && (await recoverInterruptedRestore(args.dataDir)))
      logger.warn({ dataDir: args.dataDir }, 'A restore was cut short while swapping its data in; the previous data is back in place.');
    const accountId = usesDataDir ? await firstAccountIdIn(args.dataDir) : null;
    host = await startScriptHost({ script, accountId, dataDir: args.dataDir, logger });
    try {
      // The default [limits]: plain-text refusals, as the edge answers.
      listener = await listen(host.handle, HOST, args.port, 'edgeport dev', { logger, portHint: optionHint('dev', 'port') });
    } catch (error) {
      await host.close();
      throw error;
    }
  } catch (error) {
    lock?.release();
    throw error;
  }
  const started = { host, listener };
  onShutdownSignal(async () => {
    await started.listener.close();
    await started.host.close();
    lock?.release();
  });
  process.stdout.write(`edgeport dev: serving script ${JSON.stringify(script.name)} at ${listener.url}\n`);
}
