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
