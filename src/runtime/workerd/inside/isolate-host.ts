/**
 * The one worker of an account's workerd process that the server talks to: every script of the
 * account runs as an isolate of its own that this worker loads with workerd's Worker Loader, by the
 * name the server gives each request (a header named with a secret of the process), from code the
 * server hands it when the loader asks (the `code` service). The isolate gets only what its code
 * lists: its vars and secrets in `env`, the store service with a token that names it there (the
 * service answers it for its own buckets only), a gate to the process's cache that keeps its
 * caches apart, its outbound network (the SSRF policy as a
 * workerd network service), and a tail when a session watches it. The server's probe is answered
 * here without entering any isolate: an answer means the process's one thread is free.
 */
import { WorkerEntrypoint } from 'cloudflare:workers';

/** A service binding or gate: what `fetch` goes through. */
interface Fetcher {
  fetch(input: Request | string, init?: RequestInit): Promise<Response>;
}

interface WorkerStub {
  getEntrypoint(): Fetcher;
}

/** The Worker Loader's description of a worker (workerd's WorkerCode). */
interface WorkerCode {
  compatibilityDate: string;
  compatibilityFlags: string[];
  mainModule: string;
  modules: Record<string, Record<string, unknown>>;
  env: Record<string, unknown>;
  globalOutbound: Fetcher | null;
  tails: Fetcher[];
}

/** Header names the server and this worker share, made up by the server for each process. */
export interface HostMarks {
  /** A liveness probe, answered here. */
  probe: string;
  /** The loader name of the isolate a request is for. */
  isolate: string;
  /** Set on the answer when the isolate could not be loaded or went away: the body says why. */
  hostFailure: string;
  /** Set by the server on requests a tail session watches: only their traces are passed on. */
  tail: string;
}

/** The code of one isolate as the server's code service hands it over (isolate-code.ts makes it). */
export interface IsolateCode {
  /** The isolate's id (what its store, tail and cache gates name it by). */
  isolate: string;
  compatibilityDate: string;
  compatibilityFlags: string[];
  mainModule: string;
  /** Modules by name; `data` and `wasm` contents in base64. */
  modules: Array<{ name: string; kind: 'js' | 'cjs' | 'text' | 'data' | 'wasm' | 'json'; content: string }>;
  /** Which of edgeport's own modules the isolate gets, and under what names. */
  internalModules: Array<{ name: string; source: 'cacheApi' | 'storeBinding' | 'consoleMarks' }>;
  vars: Array<{ name: string; kind: 'text' | 'json'; value: string }>;
  /** The key of `env` that holds the gates until the prelude takes them out. */
  internalKey: string;
  /** The isolate's secret name at the store service, when it binds buckets: its calls go to `/<token>`, answered for its buckets only. */
  storeToken: string | null;
  /** The number of its outbound network service (`NET_<n>`). */
  outbound: number;
  /** Its caches' namespace. */
  cacheNamespace: string;
  /** Traces go to the tail sink, with the console marks to take off. */
  tail: { line: string; lines: string; end: string } | null;
}

interface HostEnv {
  LOADER: { get(name: string, code: () => Promise<WorkerCode>): WorkerStub };
  CODE: Fetcher;
  STORE: Fetcher;
  CACHE: Fetcher;
  TAIL_SINK: Fetcher;
  MARKS: HostMarks;
  /** Sources of edgeport's modules inside an isolate (bundled by the server). */
  CACHE_API_SOURCE: string;
  STORE_BINDING_SOURCE: string;
  CONSOLE_MARKS_SOURCE: string;
  [network: string]: unknown;
}

interface HostContext {
  exports: Record<string, (options: { props: Record<string, unknown> }) => Fetcher>;
}

const CACHE_NAME_HEADER = 'cf-cache-namespace';

function base64Bytes(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** Asks the server for the code of the isolate loaded as `name`; throws with the server's words when it has none. */
async function workerCode(env: HostEnv, ctx: HostContext, name: string): Promise<WorkerCode> {
  const answer = await env.CODE.fetch(`http://code.internal/${encodeURIComponent(name)}`);
  if (!answer.ok) throw new Error(await answer.text());
  const code = (await answer.json()) as IsolateCode;
  const modules: WorkerCode['modules'] = {};
  for (const module of code.modules) {
    if (module.kind === 'data' || module.kind === 'wasm') modules[module.name] = { [module.kind]: base64Bytes(module.content) };
    else if (module.kind === 'json') modules[module.name] = { json: JSON.parse(module.content) as unknown };
    else modules[module.name] = { [module.kind]: module.content };
  }
  const sources = { cacheApi: env.CACHE_API_SOURCE, storeBinding: env.STORE_BINDING_SOURCE, consoleMarks: env.CONSOLE_MARKS_SOURCE };
  for (const internal of code.internalModules) modules[internal.name] = { js: sources[internal.source] };
  const vars: Record<string, unknown> = {};
  for (const binding of code.vars) vars[binding.name] = binding.kind === 'json' ? (JSON.parse(binding.value) as unknown) : binding.value;
  const gates: Record<string, unknown> = { cache: ctx.exports.CacheGate!({ props: { namespace: code.cacheNamespace } }) };
  // The store service itself, with the isolate's token: the prelude keeps both out of the script's reach.
  if (code.storeToken !== null) Object.assign(gates, { store: env.STORE, storeToken: code.storeToken });
  vars[code.internalKey] = gates;
  const outbound = env[`NET_${code.outbound}`] as Fetcher | undefined;
  if (outbound === undefined) throw new Error(`The process has no outbound network ${code.outbound}.`);
  return {
    compatibilityDate: code.compatibilityDate,
    compatibilityFlags: code.compatibilityFlags,
    mainModule: code.mainModule,
    modules,
    env: vars,
    globalOutbound: outbound,
    tails: code.tail ? [ctx.exports.TailGate!({ props: { isolate: code.isolate, ...code.tail } })] : [],
  };
}

export default {
  async fetch(request: Request, env: HostEnv, ctx: HostContext): Promise<Response> {
    const marks = env.MARKS;
    if (request.headers.has(marks.probe)) return new Response(null, { status: 204 });
    const name = request.headers.get(marks.isolate);
    if (name === null) return new Response('The request names no isolate.', { status: 400, headers: { [marks.hostFailure]: 'request' } });
    // workerd fills `cf` with the Unix-socket caller's pid and user id (edgeport's server process):
    // a script is told nothing of its host, so it gets an empty object, never the socket's.
    const forwarded = new Request(request, { cf: {} } as RequestInit);
    forwarded.headers.delete(marks.isolate);
    try {
      const worker = env.LOADER.get(name, () => workerCode(env, ctx, name));
      return await worker.getEntrypoint().fetch(forwarded);
    } catch (error) {
      // The isolate failed to load (its code threw, or the server has none for the name), or it was
      // unloaded or went away while it answered: the server learns why from the body.
      const message = error instanceof Error ? error.message : String(error);
      return new Response(message, { status: 500, headers: { [marks.hostFailure]: 'isolate' } });
    }
  },
};

/** The process's cache, for one script: every cache it opens is inside its own namespace. */
export class CacheGate extends WorkerEntrypoint<HostEnv> {
  async fetch(request: Request): Promise<Response> {
    const props = (this.ctx as unknown as { props: { namespace: string } }).props;
    const forwarded = new Request(request);
    const name = request.headers.get(CACHE_NAME_HEADER);
    forwarded.headers.set(CACHE_NAME_HEADER, name === null ? props.namespace : `${props.namespace}/${name}`);
    return this.env.CACHE.fetch(forwarded);
  }
}

interface TraceItem {
  event?: { request?: { url: string; method: string; headers: Record<string, string>; cf?: unknown }; response?: { status: number } };
  logs?: Array<{ message: unknown; level: string; timestamp: number }>;
  exceptions?: Array<{ name: string; message: string; timestamp: number }>;
  outcome: string;
  eventTimestamp: number;
}

function plain(value: unknown): unknown {
  try {
    return JSON.parse(JSON.stringify(value ?? null)) as unknown;
  } catch {
    return String(value);
  }
}

/**
 * An isolate's tail (workerd's `tails`), while a session watches its script: after each request
 * the isolate served, workerd hands it the request's trace. Only traces of requests the server
 * marked go on, as JSON to the server's tail sink under the isolate's id; console lines lose the
 * isolate's marks, and the entry module's line for an exception it answered becomes the exception.
 */
export class TailGate extends WorkerEntrypoint<HostEnv> {
  async tail(events: TraceItem[]): Promise<void> {
    const { isolate, ...marks } = (this.ctx as unknown as { props: { isolate: string; line: string; lines: string; end: string } }).props;
    const mark = this.env.MARKS.tail;
    const watched: unknown[] = [];
    for (const item of events) {
      const request = item.event?.request;
      if (!request || request.headers?.[mark] === undefined) continue;
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(request.headers)) if (name !== mark) headers[name] = value;
      const exceptions = (item.exceptions ?? []).map((e) => ({ name: e.name, message: e.message, timestamp: e.timestamp }));
      const logs: unknown[] = [];
      for (const log of item.logs ?? []) {
        const message = unmarked(plain(log.message), marks);
        if (Array.isArray(message) && message[0] === mark) {
          const thrown = message[1] as { name?: unknown; message?: unknown } | undefined;
          exceptions.push({ name: String(thrown?.name), message: String(thrown?.message), timestamp: log.timestamp });
        } else {
          logs.push({ message, level: log.level, timestamp: log.timestamp });
        }
      }
      watched.push({
        outcome: exceptions.length > 0 && item.outcome === 'ok' ? 'exception' : item.outcome,
        eventTimestamp: item.eventTimestamp,
        event: {
          request: { url: request.url, method: request.method, headers, cf: plain(request.cf) },
          response: item.event?.response ? { status: item.event.response.status } : undefined,
        },
        logs,
        exceptions,
        diagnosticsChannelEvents: [],
      });
    }
    if (watched.length > 0)
      await this.env.TAIL_SINK.fetch(`http://tail.internal/${encodeURIComponent(isolate)}`, { method: 'POST', body: JSON.stringify(watched) });
  }
}

/** A console call's arguments without the isolate's marks (console-marks.ts). */
function unmarked(message: unknown, marks: { line: string; lines: string; end: string }): unknown {
  if (!Array.isArray(message)) return message;
  const args = [...message];
  const first = args[0];
  if (first === marks.lines && args[args.length - 1] === marks.end) args.pop();
  if (first === marks.line || first === marks.lines) {
    args.shift();
  } else if (typeof first === 'string') {
    const start = first.startsWith(`${marks.line} `) ? marks.line : first.startsWith(`${marks.lines} `) ? marks.lines : undefined;
    if (start !== undefined) {
      if (start === marks.lines && args[args.length - 1] === marks.end) args.pop();
      args[0] = first.slice(start.length + 1);
    }
  }
  return args;
}
