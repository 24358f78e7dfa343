/**
 * A script's config (docs/object-store.md, docs/configuration.md): TOML or JSON, validated by a strict zod schema
 * that reports every problem at once, converted to a frozen camelCase `ScriptConfig`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { z } from 'zod';
import { ConfigError, deepFreeze, formatIssues } from '../config/load.ts';
import { compatibilityDateProblem, newerThanRuntimeProblem } from './compat.ts';
import { WORKERD } from './workerd/workerd-package.ts';

/** Per-script limits when the config names none. */
export const SCRIPT_LIMIT_DEFAULTS = {
  /** How long a script may hold its isolate without yielding, per stretch (ms): the supervisor's probe waits this long. */
  cpuMs: 30_000,
  /** V8's old-generation heap limit of the script's workerd process (MiB), as the real platform's 128 MB. */
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

/**
 * What a `runtime` key other than "workerd" is told. The Node worker-thread runtime was removed:
 * it let a script read the server's files and environment and end its process.
 */
const RUNTIME_NODE_REMOVED =
  "scripts now run in workerd only: the Node.js worker-thread runtime was removed, since a script there could reach the server's files, " +
  'environment and process. Leave `runtime` out (or set runtime = "workerd"). In workerd a script has the platform\'s Web APIs and nothing of the host ' +
  '(no files, environment or process of the server); Node.js APIs (node:buffer, node:crypto, a virtual node:fs, process with an empty env) come with ' +
  'compatibility_flags = ["nodejs_compat"] (on by default from 2026-08-04), as on the platform';

/**
 * Which addresses a script's outbound fetch() may connect to: CIDR blocks or
 * workerd's names `public`, `private`, `local`, `network`, `unix`, `unix-abstract`. A connection
 * is allowed when it matches an `allow` entry and no `deny` entry.
 */
export interface ScriptOutbound {
  allow: readonly string[];
  deny: readonly string[];
}

export interface ScriptConfig {
  name: string;
  /** Always workerd (docs/architecture.md, "Scripts run in workerd"); the key is kept so configs that name it still load. */
  runtime: 'workerd';
  /** Absolute path of the ES module. */
  main: string;
  compatibilityDate: string;
  compatibilityFlags: readonly string[];
  storeBuckets: readonly StoreBucketBinding[];
  routes: readonly string[];
  limits: ScriptLimits;
  outbound: ScriptOutbound;
}

const RESERVED_WORDS = new Set([
  'await',
  'break',
  'case',
  'catch',
  'class',
  'const',
  'continue',
  'debugger',
  'default',
  'delete',
  'do',
  'else',
  'enum',
  'export',
  'extends',
  'false',
  'finally',
  'for',
  'function',
  'if',
  'implements',
  'import',
  'in',
  'instanceof',
  'interface',
  'let',
  'new',
  'null',
  'package',
  'private',
  'protected',
  'public',
  'return',
  'static',
  'super',
  'switch',
  'this',
  'throw',
  'true',
  'try',
  'typeof',
  'var',
  'void',
  'while',
  'with',
  'yield',
]);
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
/** The store's bucket-name rule (the engine checks it again on every call). */
const BUCKET_NAME = /^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/;

/** workerd's names for address classes; anything else in `outbound` must be a CIDR block. */
const ADDRESS_CLASSES = new Set(['public', 'private', 'local', 'network', 'unix', 'unix-abstract']);
const CIDR = /^(?:\d{1,3}(?:\.\d{1,3}){3}|[0-9a-fA-F:]*:[0-9a-fA-F:.]*)\/\d{1,3}$/;
const addressList = z.array(
  z.string().refine((entry) => ADDRESS_CLASSES.has(entry) || CIDR.test(entry), {
    error: (issue) => `${JSON.stringify(issue.input)} is neither a CIDR block (10.1.0.0/16, fd00::/8) nor one of ${[...ADDRESS_CLASSES].join(', ')}`,
  }),
);

function scriptConfigSchema(baseDir: string, now: number) {
  return z.strictObject({
    name: z.string().min(1),
    runtime: z
      .string()
      .optional()
      .superRefine((runtime, ctx) => {
        if (runtime === undefined || runtime === 'workerd') return;
        ctx.addIssue({
          code: 'custom',
          message: runtime === 'node' ? RUNTIME_NODE_REMOVED : `must be "workerd", the only runtime (or left out), got ${JSON.stringify(runtime)}`,
        });
      }),
    main: z
      .string()
      .min(1)
      .refine((main) => existsSync(resolve(baseDir, main)), {
        error: (issue) => `file ${resolve(baseDir, String(issue.input))} does not exist`,
      }),
    compatibility_date: z.string().superRefine((date, ctx) => {
      const problem = compatibilityDateProblem(date, now) ?? newerThanRuntimeProblem(date, WORKERD.compatibilityDate, `workerd (${WORKERD.version})`);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }),
    compatibility_flags: z.array(z.string()).default([]),
    store_buckets: z
      .array(
        z.strictObject({
          binding: z.string().refine((name) => IDENTIFIER.test(name) && !RESERVED_WORDS.has(name), 'must be a valid JavaScript identifier'),
          bucket_name: z.string().regex(BUCKET_NAME, "must be 3-63 characters of a-z, 0-9 and '-', starting and ending with a letter or digit"),
        }),
      )
      .default([])
      .superRefine((buckets, ctx) => {
        const seen = new Set<string>();
        buckets.forEach((bucket, index) => {
          if (seen.has(bucket.binding))
            ctx.addIssue({ code: 'custom', path: [index, 'binding'], message: `binding ${JSON.stringify(bucket.binding)} is used twice` });
          seen.add(bucket.binding);
        });
      }),
    routes: z.array(z.string().min(1)).optional(),
    limits: z
      .strictObject({
        cpu_ms: z.number().int().min(10).max(3_600_000).optional(),
        memory_mb: z.number().int().min(16).max(65_536).optional(),
      })
      .optional(),
    outbound: z
      .strictObject({
        allow: addressList.optional(),
        deny: addressList.optional(),
      })
      .optional(),
  });
  // compatibility_flags: workerd knows every flag of the platform and refuses an unknown one itself
  // when the script starts, in the platform's words ("No such compatibility flag: …").
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
    runtime: 'workerd',
    main: resolve(options.baseDir, file.main),
    compatibilityDate: file.compatibility_date,
    compatibilityFlags: file.compatibility_flags,
    storeBuckets: file.store_buckets.map((b) => ({ binding: b.binding, bucketName: b.bucket_name })),
    routes: file.routes ?? [],
    limits: {
      cpuMs: file.limits?.cpu_ms ?? SCRIPT_LIMIT_DEFAULTS.cpuMs,
      memoryMb: file.limits?.memory_mb ?? SCRIPT_LIMIT_DEFAULTS.memoryMb,
    },
    outbound: { allow: file.outbound?.allow ?? ['public'], deny: file.outbound?.deny ?? [] },
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
