/**
 * The `edgeport` command (bin/edgeport.js loads this): `start` runs every service, `dev` serves one
 * script, `backup` / `restore` copy the data out and back, `accounts create|list|rotate-key|delete`
 * administer accounts, `secrets rotate-key` reseals the database's secrets with a new key; `--help` and `--version` answer on stdout.
 *
 * Exit codes:
 * - 0: success; a server stopped cleanly by SIGTERM or SIGINT (Ctrl-C) also exits 0.
 * - 1: an error the message explains: a bad config, a port or the data dir in use, a script that
 *      does not load, a failed start or shutdown. Only an unexpected error (a bug) prints a stack.
 * - 2: bad usage: an unknown command or option, a missing or malformed argument; the message is
 *      followed by the command's help.
 *
 * Once serving, `start` and `dev` do not exit on an unhandled rejection or an uncaught exception:
 * they log it at error level and keep serving (process-faults.ts says why).
 */
import { parseBackupArgs, parseDevArgs, parseSecretsArgs, parseStartArgs, route, wantsHelp } from './args.ts';
import type { CommandName } from './commands.ts';
import { describeFailure } from './failure.ts';
import { commandHelp, groupHelp, USAGE } from './usage.ts';
import { VERSION } from './version.ts';

const RUN: Record<CommandName, (args: readonly string[]) => Promise<void>> = {
  start: async (args) => (await import('./start.ts')).runStart(parseStartArgs(args)),
  dev: async (args) => (await import('./dev.ts')).runDev(parseDevArgs(args)),
  backup: async (args) => (await import('./backup.ts')).runBackup(parseBackupArgs('backup', args)),
  restore: async (args) => (await import('./restore.ts')).runRestore(parseBackupArgs('restore', args)),
  // runAccounts reads the action itself.
  'accounts create': async (args) => (await import('./accounts.ts')).runAccounts(['create', ...args]),
  'accounts list': async (args) => (await import('./accounts.ts')).runAccounts(['list', ...args]),
  'accounts rotate-key': async (args) => (await import('./accounts.ts')).runAccounts(['rotate-key', ...args]),
  'accounts delete': async (args) => (await import('./accounts.ts')).runAccounts(['delete', ...args]),
  'accounts quota': async (args) => (await import('./accounts.ts')).runAccounts(['quota', ...args]),
  'secrets rotate-key': async (args) => (await import('./secrets.ts')).runRotateKey(parseSecretsArgs(args)),
};

/** A serving process logs a fault no request handler caught and keeps serving (process-faults.ts). */
async function keepServing(): Promise<void> {
  const [{ keepServingOnFaults }, { createLogger }] = await Promise.all([import('./process-faults.ts'), import('../core/log.ts')]);
  keepServingOnFaults(createLogger());
}

async function main(argv: readonly string[]): Promise<void> {
  const asked = route(argv);
  if (asked.kind === 'version') {
    process.stdout.write(`edgeport ${VERSION}\n`);
  } else if (asked.kind === 'help') {
    process.stdout.write(`${asked.group !== undefined ? groupHelp(asked.group) : asked.command === undefined ? USAGE : commandHelp(asked.command)}\n`);
  } else if (wantsHelp(asked.args)) {
    process.stdout.write(`${commandHelp(asked.command)}\n`);
  } else {
    if (asked.command === 'start' || asked.command === 'dev') await keepServing();
    await RUN[asked.command](asked.args);
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  const { text, exitCode } = describeFailure(error);
  process.stderr.write(`${text}\n`);
  process.exit(exitCode);
});
