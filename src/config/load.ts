/**
 * Loads the server config: `edgeport.toml` (if present), overlaid by `EDGEPORT_*` environment
 * variables, overlaid by command-line flags; parsed once, every problem reported together in one
 * CONFIG_INVALID error, and deep-frozen.
 */
import { existsSync, readFileSync } from 'node:fs';
import { delimiter } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import type { z } from 'zod';
import { EdgeportError } from '../core/errors/edgeport-error.ts';
import { configFileSchema, toConfig, type Config } from './schema.ts';

export class ConfigError extends EdgeportError<'CONFIG_INVALID'> {
  constructor(message: string, options?: { cause?: unknown }) {
    super('CONFIG_INVALID', 'user', message, options);
  }
}

/** Overrides as a nested object of file keys, e.g. `{ ports: { api: 9999 } }`. */
export type ConfigOverrides = Record<string, unknown>;

const ENV_KEYS: Record<string, (value: string) => ConfigOverrides> = {
  EDGEPORT_DATA_DIR: (v) => ({ data_dir: v }),
  EDGEPORT_HOST: (v) => ({ host: v }),
  EDGEPORT_LOG_LEVEL: (v) => ({ log_level: v }),
  EDGEPORT_EDGE_PORT: (v) => ({ ports: { edge: Number(v) } }),
  EDGEPORT_API_PORT: (v) => ({ ports: { api: Number(v) } }),
  EDGEPORT_GATEWAY_PORT: (v) => ({ ports: { gateway: Number(v) } }),
  EDGEPORT_S3_PORT: (v) => ({ ports: { s3: Number(v) } }),
  EDGEPORT_DB_URL: (v) => ({ db: { url: v } }),
  EDGEPORT_BLOBS_URL: (v) => ({ blobs: { url: v } }),
  EDGEPORT_SECRETS_KEY: (v) => ({ secrets: { key: v } }),
  EDGEPORT_SECRETS_KEY_FILE: (v) => ({ secrets: { key_file: v } }),
  EDGEPORT_LOGS_MAX_BATCH_INTERVAL_MS: (v) => ({ logs: { max_batch_interval_ms: Number(v) } }),
  EDGEPORT_STORE_LIFECYCLE_INTERVAL_MS: (v) => ({ store: { lifecycle_interval_ms: Number(v) } }),
  // Anything but true/false stays a string, which the schema then refuses by name.
  EDGEPORT_EDGE_ALLOW_PRIVATE_ORIGINS: (v) => ({ edge: { allow_private_origins: v === 'true' ? true : v === 'false' ? false : v } }),
  /** Directories separated by `:` (like PATH). */
  EDGEPORT_LOGS_FILE_ROOTS: (v) => ({ logs: { file_roots: v.split(delimiter).filter((path) => path !== '') } }),
  EDGEPORT_LIMITS_HEADER_TIMEOUT_MS: (v) => ({ limits: { header_timeout_ms: Number(v) } }),
  EDGEPORT_LIMITS_KEEP_ALIVE_TIMEOUT_MS: (v) => ({ limits: { keep_alive_timeout_ms: Number(v) } }),
  EDGEPORT_LIMITS_IDLE_TIMEOUT_MS: (v) => ({ limits: { idle_timeout_ms: Number(v) } }),
  EDGEPORT_LIMITS_MAX_CONNECTIONS: (v) => ({ limits: { max_connections: Number(v) } }),
  EDGEPORT_LIMITS_MAX_CONNECTIONS_PER_CLIENT: (v) => ({ limits: { max_connections_per_client: Number(v) } }),
  EDGEPORT_LIMITS_MAX_EVENT_LOOP_DELAY_MS: (v) => ({ limits: { max_event_loop_delay_ms: Number(v) } }),
};

export function envOverrides(env: NodeJS.ProcessEnv): ConfigOverrides {
  let merged: ConfigOverrides = {};
  for (const [name, toOverride] of Object.entries(ENV_KEYS)) {
    const value = env[name];
    if (value !== undefined && value !== '') merged = deepMerge(merged, toOverride(value));
  }
  return merged;
}

export interface LoadConfigOptions {
  /** Path of edgeport.toml; when absent, `./edgeport.toml` is used if it exists. */
  file?: string;
  env?: NodeJS.ProcessEnv;
  flags?: ConfigOverrides;
}

export function loadConfig(options: LoadConfigOptions = {}): Readonly<Config> {
  const path = options.file ?? (existsSync('edgeport.toml') ? 'edgeport.toml' : undefined);
  let fromFile: ConfigOverrides = {};
  if (path !== undefined) {
    if (!existsSync(path)) throw new ConfigError(`Config file ${path} does not exist.`);
    try {
      fromFile = parseToml(readFileSync(path, 'utf8')) as ConfigOverrides;
    } catch (error) {
      throw new ConfigError(`Config file ${path} is not valid TOML: ${(error as Error).message}`, { cause: error });
    }
  }
  const merged = deepMerge(deepMerge(fromFile, envOverrides(options.env ?? process.env)), options.flags ?? {});
  const parsed = configFileSchema.safeParse(merged);
  if (!parsed.success) throw new ConfigError(`Invalid configuration${path ? ` (${path})` : ''}:\n${formatIssues(parsed.error.issues)}`);
  return deepFreeze(toConfig(parsed.data));
}

/** One line per problem, naming the key and (for unknown keys) the offending names. */
export function formatIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .map((issue) => {
      const at = issue.path.length > 0 ? issue.path.join('.') : '(top level)';
      if (issue.code === 'unrecognized_keys') return `  - ${at}: unknown key(s) ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}`;
      return `  - ${at}: ${issue.message}`;
    })
    .join('\n');
}

function deepMerge(base: ConfigOverrides, over: ConfigOverrides): ConfigOverrides {
  const out: ConfigOverrides = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const prior = out[key];
    out[key] = isPlainObject(prior) && isPlainObject(value) ? deepMerge(prior, value) : value;
  }
  return out;
}

function isPlainObject(value: unknown): value is ConfigOverrides {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Freezes an object and everything inside it. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
