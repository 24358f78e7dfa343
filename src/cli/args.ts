/**
 * Command-line arguments of `edgeport`, parsed against the command table (commands.ts). A mistake
 * is a UsageError: one sentence saying what is wrong (with a "did you mean" for a near miss), then
 * the help of the command it concerns. `--help` anywhere before `--` asks for that help instead.
 */
import { DEFAULTS } from '../config/defaults.ts';
import type { AccountQuotaOverrides } from '../db/account-usage.ts';
import { ACCOUNT_ACTIONS, COMMANDS, SECRETS_ACTIONS, type AccountAction, type CommandName, type CommandSpec, type SecretsAction } from './commands.ts';
import { closest } from './did-you-mean.ts';
import { commandHelp, groupHelp, USAGE, type CommandGroup } from './usage.ts';

export class UsageError extends Error {
  override name = 'UsageError';
  /** The help printed after the message: the command's, or edgeport's. */
  readonly usage: string;

  constructor(message: string, usage: string = USAGE) {
    super(message);
    this.usage = usage;
  }
}

/** What the command line asks for. `args` are those after the command's words. */
export type Route =
  { kind: 'help'; command?: CommandName; group?: CommandGroup } | { kind: 'version' } | { kind: 'run'; command: CommandName; args: readonly string[] };

const HELP = ['-h', '--help'];
const VERSION_FLAGS = ['-v', '--version'];
const COMMAND_WORDS = ['start', 'dev', 'backup', 'restore', 'accounts', 'secrets', 'help'];
const ACCOUNTS_NEEDS_ACTION = `edgeport accounts needs an action: ${ACCOUNT_ACTIONS.map((action) => `edgeport accounts ${action}`).join(', ')}.`;
const SECRETS_NEEDS_ACTION = `edgeport secrets needs an action: ${SECRETS_ACTIONS.map((action) => `edgeport secrets ${action}`).join(', ')}.`;

/** Reads the command (and `accounts`' action) from the front of `argv`. */
export function route(argv: readonly string[]): Route {
  const [first, ...rest] = argv;
  if (first === undefined || HELP.includes(first)) return { kind: 'help' };
  if (VERSION_FLAGS.includes(first)) return { kind: 'version' };
  if (first === 'help') {
    if (rest.length === 0) return { kind: 'help' };
    if (rest[0] === 'accounts' && (rest[1] === undefined || !(ACCOUNT_ACTIONS as readonly string[]).includes(rest[1])))
      return { kind: 'help', group: 'accounts' };
    if (rest[0] === 'secrets' && (rest[1] === undefined || !(SECRETS_ACTIONS as readonly string[]).includes(rest[1])))
      return { kind: 'help', group: 'secrets' };
    const asked = route(rest);
    return asked.kind === 'run' ? { kind: 'help', command: asked.command } : asked;
  }
  if (first.startsWith('-')) {
    const owner = Object.values(COMMANDS).find((spec) => spec.options.some((option) => first.split('=')[0] === `--${option.name}`));
    throw new UsageError(
      owner === undefined
        ? unknownOption(first, [...HELP, ...VERSION_FLAGS])
        : `Unknown option '${first.split('=')[0]}' before a command. Options follow the command, as in: edgeport ${owner.name} ${first.split('=')[0]} ...`,
    );
  }
  if (first === 'start' || first === 'dev' || first === 'backup' || first === 'restore') return { kind: 'run', command: first, args: rest };
  if (first === 'accounts') {
    const [action, ...args] = rest;
    if (action === undefined) throw new UsageError(ACCOUNTS_NEEDS_ACTION, groupHelp('accounts'));
    if (HELP.includes(action)) return { kind: 'help', group: 'accounts' };
    if (!(ACCOUNT_ACTIONS as readonly string[]).includes(action)) {
      throw new UsageError(`Unknown action '${action}' of edgeport accounts.${didYouMean(action, ACCOUNT_ACTIONS)}`, groupHelp('accounts'));
    }
    return { kind: 'run', command: `accounts ${action as AccountAction}`, args };
  }
  if (first === 'secrets') {
    const [action, ...args] = rest;
    if (action === undefined) throw new UsageError(SECRETS_NEEDS_ACTION, groupHelp('secrets'));
    if (HELP.includes(action)) return { kind: 'help', group: 'secrets' };
    if (!(SECRETS_ACTIONS as readonly string[]).includes(action)) {
      throw new UsageError(`Unknown action '${action}' of edgeport secrets.${didYouMean(action, SECRETS_ACTIONS)}`, groupHelp('secrets'));
    }
    return { kind: 'run', command: `secrets ${action as SecretsAction}`, args };
  }
  throw new UsageError(`Unknown command '${first}'.${didYouMean(first, COMMAND_WORDS)}`);
}

/** Whether `args` ask for help (`-h` or `--help` before any `--`). */
export function wantsHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end < 0 ? args : args.slice(0, end)).some((arg) => HELP.includes(arg));
}

export interface ParsedCommand {
  /** Option values by long name (each option given at most once). */
  values: Readonly<Record<string, string>>;
  positionals: readonly string[];
}

/**
 * Parses `args` for `spec`: `--name value` or `--name=value`, then exactly the command's
 * positionals (`--` ends the options, for a positional that starts with a dash).
 */
export function parseCommand(spec: CommandSpec, args: readonly string[]): ParsedCommand {
  const fail = (message: string) => new UsageError(message, commandHelp(spec.name));
  const values: Record<string, string> = {};
  const positionals: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const flag = eq < 0 ? arg : arg.slice(0, eq);
    const option = flag.startsWith('--') ? spec.options.find((candidate) => candidate.name === flag.slice(2)) : undefined;
    if (option === undefined) throw fail(unknownOption(flag, [...spec.options.map((candidate) => `--${candidate.name}`), '--help']));
    if (option.value === undefined) {
      // A switch: present or not.
      if (eq >= 0) throw fail(`Option ${flag} takes no value: write ${flag} alone.`);
      values[option.name] = 'true';
      continue;
    }
    let value: string | undefined;
    if (eq >= 0) {
      value = arg.slice(eq + 1);
    } else {
      value = args[i + 1];
      // A dash means the value was forgotten and the next option taken for it (`--port=-1` still reaches the port check).
      if (value !== undefined && value.startsWith('-') && value !== '-') value = undefined;
      else i++;
    }
    if (value === undefined || value === '') throw fail(`Option ${flag} needs a value: ${flag} ${option.value}.`);
    if (values[option.name] !== undefined) throw fail(`Option ${flag} is given twice; give it once.`);
    values[option.name] = value;
  }
  const wanted = spec.positionals;
  const synopsis = `edgeport ${[spec.name, ...wanted.map((positional) => positional.placeholder)].join(' ')} [options]`;
  if (positionals.length < wanted.length) {
    throw fail(
      `edgeport ${spec.name} needs ${wanted
        .slice(positionals.length)
        .map((positional) => positional.what)
        .join(' and ')}: ${synopsis}.`,
    );
  }
  if (positionals.length > wanted.length) {
    const extra = positionals
      .slice(wanted.length)
      .map((arg) => JSON.stringify(arg))
      .join(', ');
    throw fail(`Unexpected argument ${extra}: ${synopsis}.`);
  }
  return { values, positionals };
}

/** `Unknown option '--data-dri'. Did you mean --data-dir?` */
function unknownOption(flag: string, known: readonly string[]): string {
  return `Unknown option '${flag}'.${didYouMean(flag, known)}`;
}

function didYouMean(typed: string, known: readonly string[]): string {
  const match = closest(typed, known);
  return match === undefined ? '' : ` Did you mean ${match}?`;
}

export interface StartArgs {
  /** Path of edgeport.toml; undefined means `./edgeport.toml` when it exists. */
  config: string | undefined;
  /** Overrides of config file keys, e.g. `{ ports: { s3: 0 } }` (flags beat env and file). */
  flags: { data_dir?: string; ports?: Partial<Record<'edge' | 'api' | 'gateway' | 's3', number>> };
}

export interface DevArgs {
  /** Path of the script config (TOML or JSON). */
  config: string;
  port: number;
  dataDir: string;
}

export interface AccountsArgs {
  action: AccountAction;
  /** The account's e-mail (empty for `list`). */
  email: string;
  config: string | undefined;
  dataDir: string | undefined;
  force: boolean;
  /** `quota`: the account's own quotas to set (null: the server's again); empty: only show them. */
  quotas: AccountQuotaOverrides;
}

/** `edgeport backup <dir>` / `edgeport restore <dir>`. */
export interface BackupArgs {
  dir: string;
  config: string | undefined;
  dataDir: string | undefined;
  force: boolean;
  /** backup: copy the secrets key too. */
  includeSecretsKey?: boolean;
}

/** `edgeport secrets rotate-key`. */
export interface SecretsArgs {
  config: string | undefined;
  dataDir: string | undefined;
  /** Where the new key goes instead of replacing the key file. */
  newKeyFile: string | undefined;
}

const PORT_FLAGS = { 'edge-port': 'edge', 'api-port': 'api', 'gateway-port': 'gateway', 's3-port': 's3' } as const;

/** Parses the arguments after `edgeport start`. */
export function parseStartArgs(args: readonly string[]): StartArgs {
  const { values } = parseCommand(COMMANDS.start, args);
  const flags: StartArgs['flags'] = {};
  if (values['data-dir'] !== undefined) flags.data_dir = values['data-dir'];
  for (const [flag, service] of Object.entries(PORT_FLAGS)) {
    const value = values[flag];
    if (value !== undefined) flags.ports = { ...flags.ports, [service]: toPort(value, `--${flag}`, 'start') };
  }
  return { config: values.config, flags };
}

/** Parses the arguments after `edgeport dev`. */
export function parseDevArgs(args: readonly string[]): DevArgs {
  const { values, positionals } = parseCommand(COMMANDS.dev, args);
  return {
    config: positionals[0]!,
    port: values.port === undefined ? DEFAULTS.ports.dev : toPort(values.port, '--port', 'dev'),
    dataDir: values['data-dir'] ?? DEFAULTS.devDataDir,
  };
}

/** Parses the arguments after `edgeport accounts` (the action first). */
export function parseAccountsArgs(args: readonly string[]): AccountsArgs {
  const routed = route(['accounts', ...args]);
  if (routed.kind !== 'run') throw new UsageError(ACCOUNTS_NEEDS_ACTION, groupHelp('accounts'));
  const { values, positionals } = parseCommand(COMMANDS[routed.command], routed.args);
  const quotas: AccountQuotaOverrides = {};
  for (const [flag, name, unit] of QUOTA_FLAGS) {
    const value = values[flag];
    if (value !== undefined) quotas[name] = toQuota(value, `--${flag}`, unit);
  }
  return {
    action: routed.command.slice('accounts '.length) as AccountAction,
    email: positionals[0] ?? '',
    config: values.config,
    dataDir: values['data-dir'],
    force: values.force === 'true',
    quotas,
  };
}

/** `edgeport accounts quota`'s options: the quota each sets, and whether its value is bytes. */
const QUOTA_FLAGS = [
  ['max-object-bytes', 'maxObjectBytes', 'bytes'],
  ['max-objects', 'maxObjects', 'count'],
  ['max-script-bytes', 'maxScriptBytes', 'bytes'],
] as const;
const BYTE_UNITS: Record<string, number> = { '': 1, B: 1, KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3, TiB: 1024 ** 4 };

/** A quota option's value: `default` (null: the server's), or a whole number (bytes also with KiB, MiB, GiB or TiB); 0 is no limit. */
function toQuota(value: string, flag: string, unit: 'bytes' | 'count'): number | null {
  if (value === 'default') return null;
  const match = unit === 'bytes' ? /^(\d+)(B|KiB|MiB|GiB|TiB)?$/.exec(value) : /^(\d+)()$/.exec(value);
  const amount = match ? Number(match[1]) * BYTE_UNITS[match[2] ?? '']! : NaN;
  if (!Number.isSafeInteger(amount)) {
    const form = unit === 'bytes' ? 'a number of bytes (such as 1073741824 or 1GiB)' : 'a whole number of objects';
    throw new UsageError(
      `${flag} must be ${form}, 0 for no limit, or default for the server's [quotas]; got ${JSON.stringify(value)}.`,
      commandHelp('accounts quota'),
    );
  }
  return amount;
}

/** Parses the arguments after `edgeport backup` or `edgeport restore`. */
export function parseBackupArgs(command: 'backup' | 'restore', args: readonly string[]): BackupArgs {
  const { values, positionals } = parseCommand(COMMANDS[command], args);
  return {
    dir: positionals[0]!,
    config: values.config,
    dataDir: values['data-dir'],
    force: values.force === 'true',
    ...(command === 'backup' ? { includeSecretsKey: values['include-secrets-key'] === 'true' } : {}),
  };
}

/** Parses the arguments after `edgeport secrets rotate-key`. */
export function parseSecretsArgs(args: readonly string[]): SecretsArgs {
  const { values } = parseCommand(COMMANDS['secrets rotate-key'], args);
  return { config: values.config, dataDir: values['data-dir'], newKeyFile: values['new-key-file'] };
}

function toPort(value: string, flag: string, command: CommandName): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) {
    throw new UsageError(`${flag} must be a port number from 0 to 65535 (0 picks a free port), got ${JSON.stringify(value)}.`, commandHelp(command));
  }
  return port;
}
