/**
 * A script's config (DESIGN.md "script config"): TOML or JSON, validated by a strict zod schema
 * that reports every problem at once, converted to a frozen camelCase `ScriptConfig`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { z } from 'zod';
import { ConfigError, deepFreeze, formatIssues } from '../config/load.ts';
import { compatibilityDateProblem, unknownCompatibilityFlags } from './compat.ts';

/** Per-script limits when the config names none. */
export const SCRIPT_LIMIT_DEFAULTS = {
  /** How long a script may keep its worker's event loop busy without yielding, per stretch (ms). */
  cpuMs: 30_000,
  /** Old-generation heap of each worker running the script (MiB), as the real platform's 128 MB. */
  memoryMb: 128,
} as const;

export interface ScriptLimits {
  cpuMs: number;
  memoryMb: number;
}

export interface StoreBucketBinding {
  /** The name under which the script finds the bucket in `env`. */
  binding: string;
  bucketName: string;
}

export interface ScriptConfig {
  name: string;
  /** Absolute path of the ES module. */
  main: string;
  compatibilityDate: string;
  compatibilityFlags: readonly string[];
  storeBuckets: readonly StoreBucketBinding[];
  routes: readonly string[];
  limits: ScriptLimits;
}

const RESERVED_WORDS = new Set([
  'await', 'break', 'case', 'catch', 'class', 'const', 'continue', 'debugger', 'default', 'delete', 'do', 'else',
  'enum', 'export', 'extends', 'false', 'finally', 'for', 'function', 'if', 'implements', 'import', 'in',
  'instanceof', 'interface', 'let', 'new', 'null', 'package', 'private', 'protected', 'public', 'return',
  'static', 'super', 'switch', 'this', 'throw', 'true', 'try', 'typeof', 'var', 'void', 'while', 'with', 'yield',
]);
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
/** The store's bucket-name rule (the engine checks it again on every call). */
const BUCKET_NAME = /^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/;

function scriptConfigSchema(baseDir: string, now: number) {
  return z.strictObject({
    name: z.string().min(1),
    main: z.string().min(1).refine((main) => existsSync(resolve(baseDir, main)), {
      error: (issue) => `file ${resolve(baseDir, String(issue.input))} does not exist`,
    }),
    compatibility_date: z.string().superRefine((date, ctx) => {
      const problem = compatibilityDateProblem(date, now);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }),
    compatibility_flags: z.array(z.string()).default([]).superRefine((flags, ctx) => {
      const unknown = unknownCompatibilityFlags(flags);
      if (unknown.length > 0) ctx.addIssue({ code: 'custom', message: `unknown flag(s) ${unknown.map((f) => JSON.stringify(f)).join(', ')}` });
    }),
    store_buckets: z.array(z.strictObject({
      binding: z.string().refine((name) => IDENTIFIER.test(name) && !RESERVED_WORDS.has(name), 'must be a valid JavaScript identifier'),
      bucket_name: z.string().regex(BUCKET_NAME, "must be 3-63 characters of a-z, 0-9 and '-', starting and ending with a letter or digit"),
    })).default([]).superRefine((buckets, ctx) => {
      const seen = new Set<string>();
      buckets.forEach((bucket, index) => {
        if (seen.has(bucket.binding)) ctx.addIssue({ code: 'custom', path: [index, 'binding'], message: `binding ${JSON.stringify(bucket.binding)} is used twice` });
        seen.add(bucket.binding);
      });
    }),
    routes: z.array(z.string().min(1)).optional(),
    limits: z.strictObject({
      cpu_ms: z.number().int().min(10).max(3_600_000).optional(),
      memory_mb: z.number().int().min(16).max(65_536).optional(),
    }).optional(),
  });
}

export interface ParseScriptConfigOptions {
  /** Directory `main` is relative to (the config file's). */
  baseDir: string;
  /** Where the config came from, for messages. */
  source?: string;
  /** Epoch ms for the "not in the future" date check (default: now). */
  now?: number;
}

/** Validates a parsed config object; every problem goes into one CONFIG_INVALID error. */
export function parseScriptConfig(raw: unknown, options: ParseScriptConfigOptions): Readonly<ScriptConfig> {
  const parsed = scriptConfigSchema(options.baseDir, options.now ?? Date.now()).safeParse(raw);
  if (!parsed.success) {
    throw new ConfigError(`Invalid script config${options.source ? ` (${options.source})` : ''}:\n${formatIssues(parsed.error.issues)}`);
  }
  const file = parsed.data;
  return deepFreeze({
    name: file.name,
    main: resolve(options.baseDir, file.main),
    compatibilityDate: file.compatibility_date,
    compatibilityFlags: file.compatibility_flags,
    storeBuckets: file.store_buckets.map((b) => ({ binding: b.binding, bucketName: b.bucket_name })),
    routes: file.routes ?? [],
    limits: {
      cpuMs: file.limits?.cpu_ms ?? SCRIPT_LIMIT_DEFAULTS.cpuMs,
      memoryMb: file.limits?.memory_mb ?? SCRIPT_LIMIT_DEFAULTS.memoryMb,
    },
  });
}

/** Reads a script config file (`.json` as JSON, anything else as TOML) and validates it. */
export function loadScriptConfig(file: string, options: { now?: number } = {}): Readonly<ScriptConfig> {
  const path = resolve(file);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`Script config ${file} cannot be read: ${(error as Error).message}`, { cause: error });
  }
  let raw: unknown;
  try {
    raw = path.endsWith('.json') ? JSON.parse(text) : parseToml(text);
  } catch (error) {
    throw new ConfigError(`Script config ${file} is not valid ${path.endsWith('.json') ? 'JSON' : 'TOML'}: ${(error as Error).message}`, { cause: error });
  }
  return parseScriptConfig(raw, { baseDir: dirname(path), source: file, ...options });
}
