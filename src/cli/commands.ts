/**
 * The commands of `edgeport` as data: what each does, its arguments and its options with their
 * defaults, config keys and environment variables. The parser (args.ts), the help (usage.ts) and the
 * messages that name a flag (a port in use, a data dir in use) all read this one table.
 */
import { DEFAULTS } from '../config/defaults.ts';

export interface OptionSpec {
  /** Long name without dashes: `data-dir`. */
  readonly name: string;
  /** Placeholder of its value (`DIR`, `N`); every option here takes one. */
  readonly value: string;
  /** What it sets, in a few words. */
  readonly summary: string;
  /** The default, as shown in the help. */
  readonly default: string;
  /** The edgeport.toml key it overrides, e.g. `[ports] api`. */
  readonly config?: string;
  /** The environment variable it overrides. */
  readonly env?: string;
}

export type CommandName = 'start' | 'dev' | 'accounts create';

export interface CommandSpec {
  readonly name: CommandName;
  /** Required positional arguments: `<script-config>`, and what it is in words (`a script config`). */
  readonly positionals: ReadonlyArray<{ readonly placeholder: string; readonly what: string }>;
  /** One line for the command list. */
  readonly summary: string;
  /** A paragraph for the command's own help. */
  readonly description: string;
  readonly options: readonly OptionSpec[];
}

const CONFIG_OPTION: OptionSpec = { name: 'config', value: 'FILE', summary: 'edgeport.toml to read', default: './edgeport.toml when it exists' };

const port = (name: string, service: string, what: string, value: number): OptionSpec => ({
  name: `${name}-port`, value: 'N', summary: `${what} port; 0 picks a free one`, default: String(value),
  config: `[ports] ${service}`, env: `EDGEPORT_${service.toUpperCase()}_PORT`,
});

export const COMMANDS: Readonly<Record<CommandName, CommandSpec>> = {
  start: {
    name: 'start',
    positionals: [],
    summary: 'Run every service: edge, management API + dashboard, JSON-RPC gateway, S3 API.',
    description: 'Runs every service on 127.0.0.1: the edge, the management API with the web dashboard, the JSON-RPC '
      + 'gateway and the S3-compatible API, keeping their data in the data dir. The first start creates an account '
      + 'and an S3 access key and prints them once. One process per data dir: a second start (or dev) on a dir in '
      + 'use is refused. SIGTERM or Ctrl-C stops it cleanly (exit code 0). Flags beat EDGEPORT_* environment '
      + 'variables, which beat edgeport.toml.',
    options: [
      CONFIG_OPTION,
      { name: 'data-dir', value: 'DIR', summary: 'where data is kept; one process at a time', default: DEFAULTS.dataDir, config: 'data_dir', env: 'EDGEPORT_DATA_DIR' },
      port('edge', 'edge', 'edge', DEFAULTS.ports.edge),
      port('api', 'api', 'management API and dashboard', DEFAULTS.ports.api),
      port('gateway', 'gateway', 'JSON-RPC gateway', DEFAULTS.ports.gateway),
      port('s3', 's3', 'S3-compatible API', DEFAULTS.ports.s3),
    ],
  },
  dev: {
    name: 'dev',
    positionals: [{ placeholder: '<script-config>', what: 'a script config' }],
    summary: 'Serve one script on 127.0.0.1, like a local dev server.',
    description: 'Serves one script (its config: TOML or JSON with name, main, compatibility_date, store_buckets) on '
      + '127.0.0.1 and prints a line with its URL when ready. The buckets it binds live in its own data dir, apart '
      + 'from edgeport start\'s, and one process at a time uses a data dir. SIGTERM or Ctrl-C stops it cleanly.',
    options: [
      { name: 'port', value: 'N', summary: 'port; 0 picks a free one', default: String(DEFAULTS.ports.dev) },
      { name: 'data-dir', value: 'DIR', summary: 'where the script\'s buckets are kept', default: DEFAULTS.devDataDir },
    ],
  },
  'accounts create': {
    name: 'accounts create',
    positionals: [{ placeholder: '<email>', what: 'the e-mail of the new account' }],
    summary: 'Make a management API account and print its key once (also while start runs).',
    description: 'Makes a management API account in the database of edgeport start (SQLite in the data dir, or '
      + '[db] url) and prints its e-mail and API key; the key is shown only this once (only its hash is kept). '
      + 'Safe while edgeport start runs on the same data dir.',
    options: [
      CONFIG_OPTION,
      { name: 'data-dir', value: 'DIR', summary: 'the data dir whose database gets the account', default: DEFAULTS.dataDir, config: 'data_dir', env: 'EDGEPORT_DATA_DIR' },
    ],
  },
};

/** `--api-port N (or [ports] api in edgeport.toml, EDGEPORT_API_PORT)`: how to change what `option` sets. */
export function optionHint(command: CommandName, option: string): string {
  const spec = COMMANDS[command].options.find((candidate) => candidate.name === option);
  if (spec === undefined) throw new Error(`edgeport ${command} has no option --${option}`);
  const elsewhere = [spec.config === undefined ? undefined : `${spec.config} in edgeport.toml`, spec.env].filter((text) => text !== undefined);
  return `--${spec.name} ${spec.value}${elsewhere.length > 0 ? ` (or ${elsewhere.join(', ')})` : ''}`;
}
