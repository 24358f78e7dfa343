/**
 * The workerd config (Cap'n Proto text) for one script: the script's worker (edgeport's entry
 * module in front of the script's bundle, its compatibility date and flags, one wrapped binding per
 * `store_buckets` entry), the store service the bindings reach over a Unix socket, the in-memory
 * cache the Cache API uses, and the network the script's fetch() may reach. The worker has no
 * disk service, no environment and no process: nothing of the host is reachable from it.
 */
import { listHonorsInclude } from '../../store/binding/index.ts';
import { EDGEPORT_FLAGS } from '../compat.ts';
import type { ScriptConfig } from '../script-config.ts';

/** Files the config embeds, relative to the config's own directory. */
export const CONFIG_FILES = {
  entry: 'edgeport-entry.js',
  storeBinding: 'store-binding.js',
  cache: 'cache-service.js',
  tail: 'edgeport-tail.js',
} as const;

export const STORE_BINDING_MODULE = 'edgeport-internal:store-binding';

export interface WorkerdConfigInput {
  script: ScriptConfig;
  /** File name of the script's bundle (beside the config), also its module name. */
  scriptModule: string;
  /** Where workerd serves the script. */
  scriptSocket: string;
  /** The store service's socket, when the script binds buckets. */
  storeSocket: string | undefined;
  /** Date given to edgeport's own workers (the cache), one workerd supports. */
  internalCompatibilityDate: string;
  /** The script's modules when it has several (an upload); default: its bundle alone, `scriptModule`. */
  modules?: readonly WorkerdModule[];
  /** Text and JSON bindings (an upload's vars and secrets). */
  vars?: readonly WorkerdVar[];
  /** The tail sink's socket: the script's traces go to edgeport's tail worker (CONFIG_FILES.tail), which passes marked ones on to it. */
  tailSocket?: string;
}

/** One module of the script: its name (what imports resolve), its kind in workerd's config, the file it is embedded from. */
export interface WorkerdModule {
  name: string;
  kind: 'esModule' | 'commonJsModule' | 'text' | 'data' | 'wasm' | 'json';
  file: string;
}

/** A text or JSON binding whose value is embedded from `file` (values may hold any character; a config literal may not). */
export interface WorkerdVar {
  name: string;
  kind: 'text' | 'json';
  file: string;
}

export function workerdConfig(input: WorkerdConfigInput): string {
  const { script } = input;
  const flags = script.compatibilityFlags.filter((flag) => !EDGEPORT_FLAGS.has(flag));
  const honorsInclude = listHonorsInclude(script.compatibilityDate, script.compatibilityFlags);
  const vars = (input.vars ?? []).map((binding) => `(name = ${text(binding.name)}, ${binding.kind} = embed ${text(binding.file)})`);
  const modules = (input.modules ?? [{ name: input.scriptModule, kind: 'esModule', file: input.scriptModule }])
    .map((module) => `(name = ${text(module.name)}, ${module.kind} = embed ${text(module.file)})`);
  const bindings = script.storeBuckets.map(({ binding, bucketName }) => `(
        name = ${text(binding)},
        wrapped = (
          moduleName = ${text(STORE_BINDING_MODULE)},
          innerBindings = [
            (name = "store", service = "store"),
            (name = "bucket", text = ${text(bucketName)}),
            (name = "listHonorsInclude", json = ${text(String(honorsInclude))}),
          ],
        ),
      )`);
  const services = [
    `(name = "script", worker = (
      modules = [
        (name = ${text(CONFIG_FILES.entry)}, esModule = embed ${text(CONFIG_FILES.entry)}),
        ${modules.join(',\n        ')},
      ],
      compatibilityDate = ${text(script.compatibilityDate)},
      compatibilityFlags = [${flags.map(text).join(', ')}],
      bindings = [${[...bindings, ...vars].join(', ')}],
      globalOutbound = "internet",
      cacheApiOutbound = "cache",${input.tailSocket === undefined ? '' : `
      tails = ["tail"],`}
    ))`,
    `(name = "cache", worker = (
      modules = [(name = ${text(CONFIG_FILES.cache)}, esModule = embed ${text(CONFIG_FILES.cache)})],
      compatibilityDate = ${text(input.internalCompatibilityDate)},
    ))`,
    `(name = "internet", network = (
      allow = [${script.outbound.allow.map(text).join(', ')}],
      deny = [${script.outbound.deny.map(text).join(', ')}],
      tlsOptions = (trustBrowserCas = true),
    ))`,
  ];
  if (input.storeSocket !== undefined) {
    services.push(`(name = "store", external = (address = ${text(`unix:${input.storeSocket}`)}, http = ()))`);
  }
  if (input.tailSocket !== undefined) {
    services.push(`(name = "tail", worker = (
      modules = [(name = ${text(CONFIG_FILES.tail)}, esModule = embed ${text(CONFIG_FILES.tail)})],
      compatibilityDate = ${text(input.internalCompatibilityDate)},
      bindings = [(name = "sink", service = "tail-sink")],
    ))`, `(name = "tail-sink", external = (address = ${text(`unix:${input.tailSocket}`)}, http = ()))`);
  }
  const extensions = script.storeBuckets.length === 0 ? '' : `
  extensions = [(modules = [
    (name = ${text(STORE_BINDING_MODULE)}, internal = true, esModule = embed ${text(CONFIG_FILES.storeBinding)}),
  ])],`;
  return `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    ${services.join(',\n    ')},
  ],
  sockets = [(name = "http", address = ${text(`unix:${input.scriptSocket}`)}, http = (), service = "script")],${extensions}
  v8Flags = [${text(`--max-old-space-size=${script.limits.memoryMb}`)}],
);
`;
}

/** A Cap'n Proto text literal. Config values never need control characters; one is refused. */
function text(value: string): string {
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(value)) throw new Error(`${JSON.stringify(value)} has a control character, which a workerd config cannot carry.`);
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}
