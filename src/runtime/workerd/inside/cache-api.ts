/**
 * The Cache API (`caches.default`, `caches.open()`) of a script's isolate. workerd gives isolates
 * it loads at run time (the Worker Loader, which hosts every script: isolate-host.ts) no cache of
 * their own ("No Cache was configured"), so the script's prelude puts this one in `caches`: the
 * same calls, checks and errors as workerd's own Cache API, sent in workerd's cache protocol (GET
 * with `only-if-cached`, PUT of the serialised response, PURGE) to the process's cache worker
 * (cache-service.ts), through a gate that keeps each script's caches apart from every other's.
 */

/** The gate to the cache worker (a service binding of the script's env, made for this script). */
export interface CacheGate {
  fetch(request: Request): Promise<Response>;
}

/** The header naming a cache opened by name; the gate puts the script's own namespace in front of it. */
export const CACHE_NAME_HEADER = 'cf-cache-namespace';
/** workerd's limit on a cache's name. */
const MAX_CACHE_NAME_LENGTH = 1024;

type RequestInfo = Request | string | URL;

interface CacheQueryOptions {
  ignoreMethod?: boolean;
}

function coerce(input: RequestInfo): Request {
  return input instanceof Request ? input : new Request(input);
}

/** Headers of `request` for the cache, with the cache's name when it was opened by one. */
function cacheHeaders(request: Request, name: string | undefined): Headers {
  const headers = new Headers(request.headers);
  if (name === undefined) headers.delete(CACHE_NAME_HEADER);
  else headers.set(CACHE_NAME_HEADER, encodeURIComponent(name));
  return headers;
}

const encoder = new TextEncoder();

/** `HTTP/1.1 <status> <text>`, the headers and the body: the PUT payload workerd's cache takes. */
async function serialise(response: Response): Promise<Uint8Array<ArrayBuffer>> {
  const body = new Uint8Array(await response.arrayBuffer());
  let head = `HTTP/1.1 ${response.status} ${response.statusText || 'OK'}\r\n`;
  response.headers.forEach((value, name) => {
    if (name !== 'content-length' && name !== 'transfer-encoding') head += `${name}: ${value}\r\n`;
  });
  head += `content-length: ${body.byteLength}\r\n\r\n`;
  const headBytes = encoder.encode(head);
  const payload = new Uint8Array(headBytes.byteLength + body.byteLength);
  payload.set(headBytes, 0);
  payload.set(body, headBytes.byteLength);
  return payload;
}

export class Cache {
  readonly #gate: CacheGate;
  readonly #name: string | undefined;

  constructor(gate: CacheGate, name: string | undefined) {
    this.#gate = gate;
    this.#name = name;
  }

  add(): never {
    throw new Error("Failed to execute 'add' on 'Cache': the method is not implemented.");
  }

  addAll(): never {
    throw new Error("Failed to execute 'addAll' on 'Cache': the method is not implemented.");
  }

  /** The stored response for the request (honouring its Range and conditional headers), or undefined. */
  async match(input: RequestInfo, options?: CacheQueryOptions): Promise<Response | undefined> {
    const request = coerce(input);
    if (!options?.ignoreMethod && request.method !== 'GET') return undefined;
    const headers = cacheHeaders(request, this.#name);
    headers.set('cache-control', 'only-if-cached');
    const answer = await this.#gate.fetch(new Request(request.url, { method: 'GET', headers }));
    if (answer.headers.get('cf-cache-status') !== 'HIT') {
      await answer.body?.cancel();
      return undefined;
    }
    return answer;
  }

  /** Stores `response` for the request, as workerd's cache does: a GET's, not partial, not `Vary: *`; a 304 is dropped. */
  async put(input: RequestInfo, response: Response): Promise<void> {
    if (!(response instanceof Response)) throw new TypeError("Failed to execute 'put' on 'Cache': parameter 2 is not of type 'Response'.");
    if (response.type === 'error') throw new TypeError('Cache is unable to store an error response');
    const request = coerce(input);
    if (request.method !== 'GET') throw new TypeError('Cannot cache response to non-GET request.');
    if (response.status === 206) throw new TypeError('Cannot cache response to a range request (206 Partial Content).');
    if ((response.headers.get('vary') ?? '').includes('*')) throw new TypeError("Cannot cache response with 'Vary: *' header.");
    if (response.bodyUsed) throw new TypeError('Body has already been used. It can only be used once. Use tee() first if you need to read it twice.');
    if (response.status === 304) {
      await response.body?.cancel();
      return;
    }
    const payload = await serialise(response);
    const answer = await this.#gate.fetch(new Request(request.url, { method: 'PUT', headers: cacheHeaders(request, this.#name), body: payload }));
    await answer.body?.cancel();
  }

  /** Deletes the stored response for the request: true when there was one. */
  async delete(input: RequestInfo, options?: CacheQueryOptions): Promise<boolean> {
    const request = coerce(input);
    if (!options?.ignoreMethod && request.method !== 'GET') return false;
    const headers = cacheHeaders(request, this.#name);
    headers.set('x-real-ip', '127.0.0.1');
    const answer = await this.#gate.fetch(new Request(request.url, { method: 'PURGE', headers }));
    await answer.body?.cancel();
    if (answer.status === 200) return true;
    if (answer.status === 404) return false;
    if (answer.status === 429) throw new Error('Unable to delete cached response. Subrequests are being rate-limited.');
    throw new Error('Unable to delete cached response.');
  }
}

export class CacheStorage {
  readonly #gate: CacheGate;
  readonly default: Cache;

  constructor(gate: CacheGate) {
    this.#gate = gate;
    this.default = new Cache(gate, undefined);
  }

  async open(name: string): Promise<Cache> {
    const cacheName = String(name);
    if (cacheName.length >= MAX_CACHE_NAME_LENGTH) throw new TypeError('Cache name is too long.');
    return new Cache(this.#gate, cacheName);
  }
}

/** Installs the Cache API on the isolate's global scope, its calls going through `gate`. */
export function installCaches(gate: CacheGate): void {
  const scope = globalThis as Record<string, unknown>;
  for (const [name, value] of [
    ['caches', new CacheStorage(gate)],
    ['Cache', Cache],
    ['CacheStorage', CacheStorage],
  ] as const) {
    Object.defineProperty(scope, name, { value, writable: true, configurable: true, enumerable: false });
  }
}
