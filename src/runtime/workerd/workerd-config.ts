/**
 * The workerd config (Cap'n Proto text) of one account's process: the host worker the server talks
 * to (inside/isolate-host.ts), which loads each of the account's scripts as an isolate of its own
 * with the Worker Loader; the services those isolates reach through the host's gates (the server's
 * code, store and tail sink over Unix sockets, the in-memory cache the Cache API uses); and one
 * network service per outbound policy the account's scripts have (what their fetch() may reach).
 * No worker has a disk service, an environment or a process: nothing of the host is reachable.
 */
import type { ScriptOutbound } from '../script-config.ts';
import type { HostMarks } from './inside/isolate-host.ts';

/** Files the config embeds, relative to the config's own directory. */
export const CONFIG_FILES = {
  host: 'isolate-host.js',
  cache: 'cache-service.js',
  cacheApi: 'cache-api.js',
  storeBinding: 'store-binding.js',
  consoleMarks: 'console-marks.js',
} as const;

export interface WorkerdConfigInput {
  /** Where workerd serves the host worker. */
  hostSocket: string;
  /** The server's services the host worker reaches. */
  codeSocket: string;
  storeSocket: string;
  tailSocket: string;
  /** The outbound policies of the account's scripts: network `NET_<i>` is policy i. */
  outbounds: readonly ScriptOutbound[];
  marks: HostMarks;
  /** V8's heap limit of each isolate (MiB): the largest `limits.memory_mb` of the account's scripts. */
  memoryMb: number;
  /** Date given to edgeport's own workers (host, cache), one workerd supports. */
  internalCompatibilityDate: string;
}

/** One module of a script: its name (what imports resolve), its kind in workerd's terms, and its content. */
export interface WorkerdModule {
  name: string;
  kind: 'esModule' | 'commonJsModule' | 'text' | 'data' | 'wasm' | 'json';
}

export function workerdConfig(input: WorkerdConfigInput): string {
  const networks = input.outbounds.map(
    (outbound, index) => `(name = "net-${index}", network = (
      allow = [${outbound.allow.map(text).join(', ')}],
      deny = [${outbound.deny.map(text).join(', ')}],
      tlsOptions = (trustBrowserCas = true),
    ))`,
  );
  const services = [
    `(name = "host", worker = (
      modules = [(name = ${text(CONFIG_FILES.host)}, esModule = embed ${text(CONFIG_FILES.host)})],
      compatibilityDate = ${text(input.internalCompatibilityDate)},
      compatibilityFlags = ["enable_ctx_exports"],
      bindings = [
        (name = "LOADER", workerLoader = ()),
        (name = "CODE", service = "code"),
        (name = "STORE", service = "store"),
        (name = "CACHE", service = "cache"),
        (name = "TAIL_SINK", service = "tail-sink"),
        (name = "MARKS", json = ${text(JSON.stringify(input.marks))}),
        (name = "CACHE_API_SOURCE", text = embed ${text(CONFIG_FILES.cacheApi)}),
        (name = "STORE_BINDING_SOURCE", text = embed ${text(CONFIG_FILES.storeBinding)}),
        (name = "CONSOLE_MARKS_SOURCE", text = embed ${text(CONFIG_FILES.consoleMarks)}),
        ${input.outbounds.map((_, index) => `(name = "NET_${index}", service = "net-${index}")`).join(',\n        ')},
      ],
      globalOutbound = "nowhere",
    ))`,
    `(name = "cache", worker = (
      modules = [(name = ${text(CONFIG_FILES.cache)}, esModule = embed ${text(CONFIG_FILES.cache)})],
      compatibilityDate = ${text(input.internalCompatibilityDate)},
      globalOutbound = "nowhere",
    ))`,
    `(name = "code", external = (address = ${text(`unix:${input.codeSocket}`)}, http = ()))`,
    `(name = "store", external = (address = ${text(`unix:${input.storeSocket}`)}, http = ()))`,
    `(name = "tail-sink", external = (address = ${text(`unix:${input.tailSocket}`)}, http = ()))`,
    '(name = "nowhere", network = (allow = [], deny = []))',
    ...networks,
  ];
  return `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    ${services.join(',\n    ')},
  ],
  sockets = [(name = "http", address = ${text(`unix:${input.hostSocket}`)}, http = (), service = "host")],
  v8Flags = [${text(`--max-old-space-size=${input.memoryMb}`)}],
);
`;
}

/** A Cap'n Proto text literal. Config values never need control characters; one is refused. */
function text(value: string): string {
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(value)) throw new Error(`${JSON.stringify(value)} has a control character, which a workerd config cannot carry.`);
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}
