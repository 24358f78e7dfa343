/**
 * The `edgeport` command (bin/edgeport.js loads this): `start` runs every service, `dev` serves one
 * script. Exit codes: 0 clean stop, 1 bad config or failed start, 2 bad usage.
 */
import { EdgeportError } from '../core/errors/edgeport-error.ts';
import { parseDevArgs, parseStartArgs, USAGE, UsageError } from './args.ts';
import { runDev } from './dev.ts';
import { runStart } from './start.ts';

const COMMANDS: Record<string, (args: readonly string[]) => Promise<void>> = {
  dev: (args) => runDev(parseDevArgs(args)),
  start: (args) => runStart(parseStartArgs(args)),
  accounts: async (args) => (await import('./accounts.ts')).runAccounts(args),
};

async function main(argv: readonly string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    console.log(USAGE);
    return;
  }
  const run = COMMANDS[command];
  if (run === undefined) throw new UsageError(`Unknown command ${JSON.stringify(command)}.`);
  await run(rest);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError) {
    console.error(`edgeport: ${error.message}\n\n${USAGE}`);
    process.exit(2);
  }
  // Config and startup errors are the user's to fix: the message says how; no stack needed.
  console.error(error instanceof EdgeportError ? `edgeport: ${error.message}` : `edgeport: ${(error as Error).stack ?? String(error)}`);
  process.exit(1);
});
