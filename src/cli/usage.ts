/**
 * The help texts of `edgeport`, written from the command table (commands.ts): `edgeport --help`
 * lists every command with its options and defaults; `edgeport <command> --help` adds what the
 * command does and the config key and environment variable behind each option.
 */
import { COMMANDS, type CommandName, type CommandSpec, type OptionSpec } from './commands.ts';
import { VERSION } from './version.ts';

/** Column where descriptions start. */
const COLUMN = 30;
const WIDTH = 100;

/** `left` in the first column, `right` wrapped in the second. */
function row(left: string, right: string): string {
  const indent = ' '.repeat(COLUMN);
  const wrapped = wrap(right, WIDTH, indent);
  return left.length + 2 > COLUMN ? `${left}\n${wrapped}` : `${left.padEnd(COLUMN)}${wrapped.slice(COLUMN)}`;
}

function synopsis(spec: CommandSpec): string {
  return [spec.name, ...spec.positionals.map((positional) => positional.placeholder)].join(' ');
}

function optionRow(option: OptionSpec, indent: string, detailed: boolean): string {
  const where = detailed
    ? [option.config === undefined ? undefined : `${option.config} in edgeport.toml`, option.env].filter((text) => text !== undefined)
    : [];
  return row(
    `${indent}--${option.name}${option.value === undefined ? '' : ` ${option.value}`}`,
    `${option.summary} (default: ${option.default}${where.length > 0 ? `; or ${where.join(', ')}` : ''})`,
  );
}

/** Words of `text` in lines of at most `width` characters, each after `indent`. */
export function wrap(text: string, width: number, indent = ''): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && indent.length + line.length + 1 + word.length > width) {
      lines.push(indent + line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  if (line !== '') lines.push(indent + line);
  return lines.join('\n');
}

const EXIT_CODES =
  'Exit codes: 0 success, or a clean stop on SIGTERM or Ctrl-C; 1 an error (a bad config, a port or the data dir in use, a failed start); 2 bad usage.';

/** `edgeport --help`: every command with its options and their defaults. */
export const USAGE = [
  wrap(
    `edgeport ${VERSION}: a self-hostable edge platform (management API and dashboard, edge with log shipping, JSON-RPC gateway, S3-compatible object store).`,
    WIDTH,
  ),
  '',
  'Usage: edgeport <command> [options]',
  '',
  'Commands:',
  ...Object.values(COMMANDS).flatMap((spec) => [row(`  ${synopsis(spec)}`, spec.summary), ...spec.options.map((option) => optionRow(option, '      ', false))]),
  row('  help [command]', "Show this help, or one command's (also: edgeport <command> --help)."),
  '',
  'Options:',
  row('  -h, --help', 'Show help.'),
  row('  -v, --version', 'Print the version.'),
  '',
  wrap(EXIT_CODES, WIDTH),
].join('\n');

/** The commands with more than one word: `edgeport accounts <action>`, `edgeport secrets <action>`. */
export type CommandGroup = 'accounts' | 'secrets';

/** `edgeport accounts --help` (or `secrets`): each action of the group, what it does, and how to see its options. */
export function groupHelp(group: CommandGroup): string {
  const actions = Object.values(COMMANDS).filter((spec) => spec.name.startsWith(`${group} `));
  return [
    `Usage: edgeport ${group} <action> [options]`,
    '',
    'Actions:',
    ...actions.map((spec) => row(`  ${synopsis(spec)}`, spec.summary)),
    '',
    wrap(`Run edgeport ${group} <action> --help for an action's options.`, WIDTH),
  ].join('\n');
}

/** `edgeport <command> --help`. */
export function commandHelp(name: CommandName): string {
  const spec = COMMANDS[name];
  return [
    `Usage: edgeport ${synopsis(spec)} [options]`,
    '',
    wrap(spec.description, WIDTH),
    '',
    'Options:',
    ...spec.options.map((option) => optionRow(option, '  ', true)),
    row('  -h, --help', 'Show this help.'),
  ].join('\n');
}
