/**
 * Command-line arguments of `edgeport` (DESIGN.md "CLI"), parsed with node:util parseArgs. A
 * mistake is a UsageError whose message says what is wrong and shows the usage.
 */
import { parseArgs } from 'node:util';
import { DEFAULTS } from '../config/defaults.ts';

export const USAGE = `Usage:
  edgeport start [--config edgeport.toml] [--data-dir DIR] [--edge-port N] [--api-port N] [--gateway-port N] [--s3-port N]
  edgeport dev <script-config> [--port ${DEFAULTS.ports.dev}] [--data-dir DIR]`;

export class UsageError extends Error {
  override name = 'UsageError';
}

export interface DevArgs {
  /** Path of the script config (TOML or JSON). */
  config: string;
  port: number;
  dataDir: string;
}

export interface StartArgs {
  /** Path of edgeport.toml; undefined means `./edgeport.toml` when it exists. */
  config: string | undefined;
  /** Overrides of config file keys, e.g. `{ ports: { s3: 0 } }` (flags beat env and file). */
  flags: { data_dir?: string; ports?: Partial<Record<'edge' | 'api' | 'gateway' | 's3', number>> };
}

const PORT_FLAGS = { 'edge-port': 'edge', 'api-port': 'api', 'gateway-port': 'gateway', 's3-port': 's3' } as const;

/** Parses the arguments after `edgeport start`. */
export function parseStartArgs(args: readonly string[]): StartArgs {
  const { values, positionals } = parse(args, {
    config: { type: 'string' },
    'data-dir': { type: 'string' },
    'edge-port': { type: 'string' },
    'api-port': { type: 'string' },
    'gateway-port': { type: 'string' },
    's3-port': { type: 'string' },
  });
  if (positionals.length > 0) throw new UsageError(`edgeport start takes no positional arguments, got ${JSON.stringify(positionals[0])}.`);
  const flags: StartArgs['flags'] = {};
  if (values['data-dir'] !== undefined) flags.data_dir = values['data-dir'] as string;
  for (const [flag, service] of Object.entries(PORT_FLAGS)) {
    const value = values[flag] as string | undefined;
    if (value !== undefined) flags.ports = { ...flags.ports, [service]: toPort(value, `--${flag}`) };
  }
  return { config: values.config as string | undefined, flags };
}

/** Parses the arguments after `edgeport dev`. */
export function parseDevArgs(args: readonly string[]): DevArgs {
  const { values, positionals } = parse(args, {
    port: { type: 'string' },
    'data-dir': { type: 'string' },
  });
  if (positionals.length !== 1) {
    throw new UsageError(positionals.length === 0 ? 'edgeport dev needs a script config.' : `edgeport dev takes one script config, got ${positionals.length}.`);
  }
  return {
    config: positionals[0]!,
    port: values.port === undefined ? DEFAULTS.ports.dev : toPort(values.port as string, '--port'),
    dataDir: (values['data-dir'] as string | undefined) ?? DEFAULTS.dataDir,
  };
}

function parse(args: readonly string[], options: Record<string, { type: 'string' | 'boolean' }>) {
  try {
    return parseArgs({ args: [...args], options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

function toPort(value: string, flag: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) throw new UsageError(`${flag} must be a port number from 0 to 65535, got ${JSON.stringify(value)}.`);
  return port;
}
