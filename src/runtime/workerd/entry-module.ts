/**
 * The main module edgeport gives workerd: it imports the script and calls its fetch() with the
 * request, env and ctx, so that a script failure reaches the server as a failure (logged, and
 * answered as in every runtime) rather than as workerd's bare 500, and so that the server can
 * probe whether the isolate still answers. Both answers carry a header named with a secret
 * generated per start, which the script cannot produce by accident.
 */

export interface EntryMarks {
  /** Response header set (to the failure's JSON) when the script threw or returned a non-Response. */
  failureHeader: string;
  /** Request header that asks the entry for a liveness answer, without calling the script. */
  probeHeader: string;
  /** Request header the server sets on requests a tail watches (taken off before the script sees them); the entry then logs a failure as a tail exception. */
  tailHeader?: string;
}

/** The entry's source; `scriptModule` is the name under which the script's bundle is loaded. */
export function entryModuleSource(scriptModule: string, marks: EntryMarks): string {
  return `import script from ${JSON.stringify(`./${scriptModule}`)};
const FAILURE = ${JSON.stringify(marks.failureHeader)};
const PROBE = ${JSON.stringify(marks.probeHeader)};
const TAIL = ${JSON.stringify(marks.tailHeader ?? null)};
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
    if (request.headers.has(PROBE)) return new Response(null, { status: 204 });
    const watched = TAIL !== null && request.headers.has(TAIL);
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
      // The trace of a watched request: the tail worker turns this line into the exception the script threw.
      if (watched) console.log(TAIL, error instanceof Error ? { name: error.name, message: error.message } : { name: 'Error', message: String(error) });
      return new Response(null, { status: 500, headers: { [FAILURE]: encodeURIComponent(JSON.stringify(failure)) } });
    }
  },
};
`;
}
