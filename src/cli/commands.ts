/**
 * The commands of `edgeport` as data: what each does, its arguments and its options with their
 * defaults, config keys and environment variables. The parser (args.ts), the help (usage.ts) and the
 * messages that name a flag (a port in use, a data dir in use) all read this one table.
 */
import { DEFAULTS } from '../config/defaults.ts';

export interface OptionSpec {
  /** Long name without dashes: `data-dir`. */
  readonly name: string;
  /** Placeholder of its value (`DIR`, `N`); absent for a switch such as `--force`, which takes none. */
  readonly value?: string;
  /** What it sets, in a few words. */
  readonly summary: string;
  /** The default, as shown in the help. */
  readonly default: string;
  /** The edgeport.toml key it overrides, e.g. `[ports] api`. */
  readonly config?: string;
  /** The environment variable it overrides. */
  readonly env?: string;
}

export type CommandName =
  | 'start'
  | 'dev'
  | 'backup'
  | 'restore'
  | 'accounts create'
  | 'accounts list'
  | 'accounts rotate-key'
  | 'accounts delete'
  | 'accounts quota'
  | 'secrets rotate-key';

/** The actions of `edgeport accounts`. */
export const ACCOUNT_ACTIONS = ['create', 'list', 'rotate-key', 'delete', 'quota'] as const;
export type AccountAction = (typeof ACCOUNT_ACTIONS)[number];

/** The actions of `edgeport secrets`. */
export const SECRETS_ACTIONS = ['rotate-key'] as const;
export type SecretsAction = (typeof SECRETS_ACTIONS)[number];

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

const DATA_DIR_OPTION: OptionSpec = {
  name: 'data-dir',
  value: 'DIR',
  summary: 'the data dir of edgeport start',
  default: DEFAULTS.dataDir,
  config: 'data_dir',
  env: 'EDGEPORT_DATA_DIR',
};
/** The `<email>` of an existing account (rotate-key, delete). */
const ACCOUNT_EMAIL = { placeholder: '<email>', what: 'the e-mail of the account' };
const ACCOUNTS_WHILE_RUNNING = 'Safe while edgeport start runs on the same data dir (the server sees the change at once).';

const port = (name: string, service: string, what: string, value: number): OptionSpec => ({
  name: `${name}-port`,
  value: 'N',
  summary: `${what} port; 0 picks a free one`,
  default: String(value),
  config: `[ports] ${service}`,
  env: `EDGEPORT_${service.toUpperCase()}_PORT`,
});

export const COMMANDS: Readonly<Record<CommandName, CommandSpec>> = {
  start: {
    name: 'start',
    positionals: [],
    summary: 'Run every service: edge, management API + dashboard, JSON-RPC gateway, S3 API.',
    description:
      'Runs every service on 127.0.0.1: the edge, the management API with the web dashboard, the JSON-RPC ' +
      'gateway and the S3-compatible API, keeping their data in the data dir. The first start creates an account ' +
      'and an S3 access key and prints them once. One process per data dir: a second start (or dev) on a dir in ' +
      'use is refused. SIGTERM or Ctrl-C stops it cleanly (exit code 0). Flags beat EDGEPORT_* environment ' +
      'variables, which beat edgeport.toml.',
    options: [
      CONFIG_OPTION,
      {
        name: 'data-dir',
        value: 'DIR',
        summary: 'where data is kept; one process at a time',
        default: DEFAULTS.dataDir,
        config: 'data_dir',
        env: 'EDGEPORT_DATA_DIR',
      },
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
    description:
      'Serves one script (its config: TOML or JSON with name, main, compatibility_date, store_buckets) on ' +
      '127.0.0.1 and prints a line with its URL when ready. The buckets it binds live in its own data dir, apart ' +
      "from edgeport start's, and one process at a time uses a data dir: with start stopped, --data-dir naming " +
      "start's data dir serves start's buckets (the operator's). SIGTERM or Ctrl-C stops it cleanly.",
    options: [
      { name: 'port', value: 'N', summary: 'port; 0 picks a free one', default: String(DEFAULTS.ports.dev) },
      { name: 'data-dir', value: 'DIR', summary: "where the script's buckets are kept", default: DEFAULTS.devDataDir },
    ],
  },
  backup: {
    name: 'backup',
    positionals: [{ placeholder: '<dir>', what: 'an empty or new directory for the backup' }],
    summary: 'Copy the database and object bodies into a directory, consistently, also while start runs.',
    description:
      "Copies the data dir's SQLite database (a consistent snapshot, by SQLite's online backup) and the " +
      'object bodies (blob files) into <dir>, which must be empty or new, while edgeport start may keep serving: ' +
      'every write acknowledged before the backup began is in it. With [db] url (PostgreSQL) only the bodies are ' +
      "copied: back the database up with pg_dump. The secrets key, which the database's secrets are sealed with, " +
      'is left out unless --include-secrets-key: keep a copy of it apart. Restore with edgeport restore <dir>.',
    options: [CONFIG_OPTION, DATA_DIR_OPTION, { name: 'include-secrets-key', summary: 'copy the secrets key too; guard the backup like it', default: 'off' }],
  },
  restore: {
    name: 'restore',
    positionals: [{ placeholder: '<dir>', what: 'a directory written by edgeport backup' }],
    summary: 'Put a backup made by edgeport backup into a data dir (never one a server is using).',
    description:
      'Copies a backup made by edgeport backup into the data dir. Refused while edgeport start or dev uses ' +
      'the data dir, and when the data dir holds data already, unless --force, which replaces its database, ' +
      "bodies, chain and log spools. A secrets key in the backup replaces the data dir's secrets.key; without one " +
      "the data dir's is kept. Then start edgeport on it, with the key the backup's database was sealed with.",
    options: [CONFIG_OPTION, DATA_DIR_OPTION, { name: 'force', summary: 'replace the data of a data dir that is not empty', default: 'off' }],
  },
  'accounts create': {
    name: 'accounts create',
    positionals: [{ placeholder: '<email>', what: 'the e-mail of the new account' }],
    summary: 'Make a management API account and print its key once (also while start runs).',
    description:
      'Makes a management API account in the database of edgeport start (SQLite in the data dir, or ' +
      '[db] url) and prints its e-mail and API key; the key is shown only this once (only its hash is kept). ' +
      'Safe while edgeport start runs on the same data dir.',
    options: [
      CONFIG_OPTION,
      {
        name: 'data-dir',
        value: 'DIR',
        summary: 'the data dir whose database gets the account',
        default: DEFAULTS.dataDir,
        config: 'data_dir',
        env: 'EDGEPORT_DATA_DIR',
      },
    ],
  },
  'accounts list': {
    name: 'accounts list',
    positionals: [],
    summary: 'List the accounts, the operator first, with what each holds.',
    description:
      "Lists every management API account of edgeport start's database, oldest first (the first is the " +
      `operator), with its id, when it was made and how many zones, log jobs, buckets and deployed scripts it holds. ${ACCOUNTS_WHILE_RUNNING}`,
    options: [CONFIG_OPTION, DATA_DIR_OPTION],
  },
  'accounts rotate-key': {
    name: 'accounts rotate-key',
    positionals: [ACCOUNT_EMAIL],
    summary: 'Give an account a new API key and print it once; the old key stops working.',
    description:
      'Gives the account a new generated API key and prints it once (only its hash is kept); the old key ' +
      "and the account's dashboard sessions stop working at once. The operator's key follows EDGEPORT_ADMIN_KEY " +
      `when that is set: the next start puts that one back. ${ACCOUNTS_WHILE_RUNNING}`,
    options: [CONFIG_OPTION, DATA_DIR_OPTION],
  },
  'accounts delete': {
    name: 'accounts delete',
    positionals: [ACCOUNT_EMAIL],
    summary: 'Delete an account; one that still holds zones, buckets or scripts only with --force.',
    description:
      'Deletes the account, its S3 access keys and its dashboard sessions. An account that still holds ' +
      'zones (with their rulesets and log jobs), buckets or deployed scripts is refused, naming them, unless --force, which deletes ' +
      `them too, objects included. The operator (the first account) is never deleted. ${ACCOUNTS_WHILE_RUNNING}`,
    options: [CONFIG_OPTION, DATA_DIR_OPTION, { name: 'force', summary: 'also delete its zones, log jobs, buckets and objects', default: 'off' }],
  },
  'accounts quota': {
    name: 'accounts quota',
    positionals: [ACCOUNT_EMAIL],
    summary: 'Show what an account stores against its quotas; the options set its own.',
    description:
      "Shows what the account stores (the bytes and count of its objects, open multipart uploads' parts " +
      "included; the bytes of its scripts' kept versions) against its quotas, and whose each quota is: the " +
      "server's [quotas] in edgeport.toml, or the account's own. An option sets the account's own quota (a " +
      'number of bytes or objects, bytes also as 500MiB, 10GiB...; 0 for no limit) or, with "default", gives it ' +
      "the server's again. A lower quota refuses new writes only: what is stored stays. " +
      ACCOUNTS_WHILE_RUNNING,
    options: [
      CONFIG_OPTION,
      DATA_DIR_OPTION,
      { name: 'max-object-bytes', value: 'N', summary: 'bytes its objects and open uploads may hold', default: "the server's" },
      { name: 'max-objects', value: 'N', summary: 'objects it may hold', default: "the server's" },
      { name: 'max-script-bytes', value: 'N', summary: "bytes its scripts' kept versions may hold", default: "the server's" },
    ],
  },
  'secrets rotate-key': {
    name: 'secrets rotate-key',
    positionals: [],
    summary: 'Reseal every secret in the database with a new secrets key (every instance stopped).',
    description:
      'Makes a new secrets key and reseals every secret kept in the database (worker secrets, S3 secret keys, ' +
      'log destinations) with it in one transaction; the old key opens nothing afterwards (backups made before ' +
      'still need it). The new key replaces the key file (secrets.key in the data dir, or [secrets] key_file) once ' +
      'the database has it; a key given as EDGEPORT_SECRETS_KEY cannot be rewritten, so the new one goes to ' +
      '--new-key-file, which must then be given. Refused while edgeport start runs on the data dir, or any instance ' +
      'on the same PostgreSQL database.',
    options: [
      CONFIG_OPTION,
      DATA_DIR_OPTION,
      { name: 'new-key-file', value: 'FILE', summary: 'put the new key in this new file', default: 'replace the key file' },
    ],
  },
};

/** `--api-port N (or [ports] api in edgeport.toml, EDGEPORT_API_PORT)`: how to change what `option` sets. */
export function optionHint(command: CommandName, option: string): string {
  const spec = COMMANDS[command].options.find((candidate) => candidate.name === option);
  if (spec === undefined) throw new Error(`edgeport ${command} has no option --${option}`);
  const elsewhere = [spec.config === undefined ? undefined : `${spec.config} in edgeport.toml`, spec.env].filter((text) => text !== undefined);
  return `--${spec.name}${spec.value === undefined ? '' : ` ${spec.value}`}${elsewhere.length > 0 ? ` (or ${elsewhere.join(', ')})` : ''}`;
}
