/**
 * The two modules edgeport puts in front of a script in its isolate. The prelude runs first, before
 * any of the script's modules: it takes edgeport's gates out of `env` (so that the script, even
 * through `import { env } from 'cloudflare:workers'`, sees only its own bindings), puts a bucket
 * binding in `env` for each of its `store_buckets` (its calls to the store service carry the
 * isolate's token, held in the prelude's closure), installs the Cache API, and marks the console
 * so that what the script prints is known to be its own (console-marks.ts). The entry is the
 * isolate's main module: it imports the script and calls its fetch() with the request, env and ctx,
 * so that a script failure reaches the server as a failure (logged, and answered as in every
 * runtime) rather than as workerd's bare 500; it also answers the server's load request without
 * calling the script, and ends the isolate when the server unloads it. Its marks are headers named
 * with secrets of the process, which the script cannot produce by accident.
 */

export interface EntryMarks {
  /** Response header set (to the failure's JSON) when the script threw or returned a non-Response. */
  failureHeader: string;
  /** Request header that asks the entry to answer once the isolate is loaded, without calling the script. */
  loadHeader: string;
  /** Request header that ends the isolate (the server unloads it). */
  unloadHeader: string;
  /** Request header the server sets on requests a tail watches (taken off before the script sees them); the entry then logs a failure as a tail exception. */
  tailHeader: string;
}

/** Where edgeport's own modules are in the isolate: beside the script's, named with a prefix of the process's own that no upload uses. */
export interface InternalModuleNames {
  entry: string;
  prelude: string;
  cacheApi: string;
  consoleMarks: string;
  storeBinding: string;
}

export function internalModuleNames(prefix: string): InternalModuleNames {
  return {
    entry: `${prefix}entry.js`,
    prelude: `${prefix}prelude.js`,
    cacheApi: `${prefix}cache-api.js`,
    consoleMarks: `${prefix}console-marks.js`,
    storeBinding: `${prefix}store-binding.js`,
  };
}

export interface PreludeInput {
  names: InternalModuleNames;
  /** The key of `env` holding the gates, taken out before the script runs. */
  internalKey: string;
  /** Each `store_buckets` entry: the binding's name, its bucket, and whether list() honours `include` on the script's date and flags. */
  buckets: ReadonlyArray<{ binding: string; bucket: string; listHonorsInclude: boolean }>;
  /** The console marks of the isolate (inside/console-marks.ts). */
  consoleMarks: { line: string; lines: string; end: string };
}

export function preludeSource(input: PreludeInput): string {
  const { names, buckets } = input;
  const base = (name: string) => `./${name}`;
  return `import { env } from 'cloudflare:workers';
import { installCaches } from ${JSON.stringify(base(names.cacheApi))};
import { markConsole } from ${JSON.stringify(base(names.consoleMarks))};
${buckets.length > 0 ? `import makeStoreBucket from ${JSON.stringify(base(names.storeBinding))};\n` : ''}const gates = env[${JSON.stringify(input.internalKey)}];
delete env[${JSON.stringify(input.internalKey)}];
markConsole(${JSON.stringify(input.consoleMarks)});
installCaches(gates.cache);
${buckets.length > 0 ? 'const store = { fetch: (url, init) => gates.store.fetch(url + gates.storeToken, init) };\n' : ''}${buckets.map(({ binding, bucket, listHonorsInclude }) => `env[${JSON.stringify(binding)}] = makeStoreBucket({ store, bucket: ${JSON.stringify(bucket)}, listHonorsInclude: ${listHonorsInclude} });`).join('\n')}
`;
}

/** The entry's source; `scriptModule` is the name of the script's main module. */
export function entryModuleSource(scriptModule: string, names: InternalModuleNames, marks: EntryMarks): string {
  return `import ${JSON.stringify(`./${names.prelude}`)};
import script from ${JSON.stringify(`./${scriptModule}`)};
import { abortIsolate } from 'cloudflare:workers';
const FAILURE = ${JSON.stringify(marks.failureHeader)};
const LOAD = ${JSON.stringify(marks.loadHeader)};
const UNLOAD = ${JSON.stringify(marks.unloadHeader)};
const TAIL = ${JSON.stringify(marks.tailHeader)};
if (typeof script?.fetch !== 'function') {
  throw new TypeError(${JSON.stringify(`${scriptModule} must have a default export with a fetch(request, env, ctx) method.`)});
}
function describe(value) {
  if (value === null || value === undefined) return String(value);
  if (typeof value === 'object') return 'an object (' + (value.constructor?.name ?? 'Object') + ')';
  return 'a ' + typeof value;
}
export default {
  async fetch(request, env, ctx) {
    if (request.headers.has(LOAD)) return new Response(null, { status: 204 });
    if (request.headers.has(UNLOAD)) abortIsolate('unloaded by the server');
    const watched = request.headers.has(TAIL);
    if (watched) {
      request = new Request(request);
      request.headers.delete(TAIL);
    }
    let passThrough = false;
    const scriptCtx = new Proxy(ctx, {
      get(target, name) {
        if (name === 'passThroughOnException') return () => { passThrough = true; };
        const value = Reflect.get(target, name);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    try {
      const response = await script.fetch(request, env, scriptCtx);
      if (!(response instanceof Response)) {
        throw new TypeError("The script's fetch() must return a Response, but it returned " + describe(response) + '.');
      }
      return response;
    } catch (error) {
      const failure = error instanceof Error
        ? { message: error.name + ': ' + error.message, stack: error.stack, passThrough }
        : { message: String(error), stack: undefined, passThrough };
      // The trace of a watched request: the tail gate turns this line into the exception the script threw.
      if (watched) console.log(TAIL, error instanceof Error ? { name: error.name, message: error.message } : { name: 'Error', message: String(error) });
      return new Response(null, { status: 500, headers: { [FAILURE]: encodeURIComponent(JSON.stringify(failure)) } });
    }
  },
};
`;
}
