/**
 * Inside a worker, `Response` is a subclass that keeps a body given as a string or bytes as it is,
 * so the whole response goes to the server in one message. Node 20 spends ~30 µs building each
 * ReadableStream, so the platform Response behind the body is only built if the script reads it.
 */

const NativeResponse = globalThis.Response;
type NativeResponse = InstanceType<typeof NativeResponse>;

/** Statuses whose responses must have a null body (Fetch standard "null body status"). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);
const TEXT_TYPE = 'text/plain;charset=UTF-8';

/** A copy of the bytes of a BufferSource (the platform copies too), or undefined for other bodies. */
function staticSource(body: unknown): string | Uint8Array<ArrayBuffer> | undefined {
  if (typeof body === 'string') return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body.slice(0));
  if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer, body.byteOffset, body.byteLength).slice();
  return undefined;
}

class ScriptResponse extends NativeResponse {
  /** The body as given, while nobody has asked for it in another form. */
  #source: string | Uint8Array<ArrayBuffer> | undefined;
  /** The platform Response that holds the body once the script touches it. */
  #native: NativeResponse | undefined;
  /** The source went to the server: the body is used. */
  #taken = false;

  constructor(body?: BodyInit | null, init?: ResponseInit) {
    const source = staticSource(body);
    super(source === undefined ? body : null, init);
    if (source === undefined) return;
    if (NULL_BODY_STATUSES.has(this.status)) throw new TypeError(`Response constructor: Invalid response status code ${this.status}`);
    if (typeof source === 'string' && !this.headers.has('content-type')) this.headers.set('content-type', TEXT_TYPE);
    this.#source = source;
  }

  /** As the platform's `Response.json`, but through this class so the body stays a string. */
  static override json(data: unknown, init?: ResponseInit): Response {
    const body: unknown = JSON.stringify(data);
    if (typeof body !== 'string') throw new TypeError('Value is not JSON serializable');
    const headers = new Headers(init?.headers);
    if (!headers.has('content-type')) headers.set('content-type', 'application/json');
    return new ScriptResponse(body, { ...init, headers });
  }

  /** Responses made elsewhere (fetch, clone, Response.error) are Responses too. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return value instanceof NativeResponse;
  }

  /** Takes the untouched source of `response` (its body is then used), or undefined. */
  static takeSource(response: Response): string | Uint8Array<ArrayBuffer> | undefined {
    if (!(#source in response) || response.#native !== undefined) return undefined;
    const source = response.#source;
    response.#source = undefined;
    response.#taken = source !== undefined;
    return source;
  }

  /** The platform Response holding the body once a static body is touched; undefined for other bodies. */
  static nativeOf(response: ScriptResponse): NativeResponse | undefined {
    if (response.#native !== undefined) return response.#native;
    if (response.#taken) response.#native = usedResponse();
    else if (response.#source !== undefined) {
      response.#native = new NativeResponse(response.#source, { status: response.status, statusText: response.statusText });
    }
    return response.#native;
  }

  override clone(): Response {
    const source = this.#source;
    if (source !== undefined && this.#native === undefined) {
      const copy = typeof source === 'string' ? source : source.slice();
      return new ScriptResponse(copy, { status: this.status, statusText: this.statusText, headers: this.headers });
    }
    const native = ScriptResponse.nativeOf(this);
    if (native === undefined) return super.clone();
    if (native.bodyUsed) throw new TypeError('Response.clone: Body has already been consumed.');
    return new NativeResponse(native.clone().body, { status: this.status, statusText: this.statusText, headers: this.headers });
  }
}
Object.defineProperty(ScriptResponse, 'name', { value: 'Response' });

/** A Response whose body has been read, standing in for a source that was sent. */
function usedResponse(): NativeResponse {
  const response = new NativeResponse('');
  void response.body!.getReader().read();
  return response;
}

// Body accessors read from the platform Response once the body is materialised. They are defined
// on the prototype because TypeScript will not let accessors override the lib's `body` property.
for (const name of ['body', 'bodyUsed'] as const) {
  const inherited = Object.getOwnPropertyDescriptor(NativeResponse.prototype, name)!;
  Object.defineProperty(ScriptResponse.prototype, name, {
    configurable: true,
    enumerable: true,
    get(this: ScriptResponse) {
      const native = ScriptResponse.nativeOf(this);
      return native === undefined ? inherited.get!.call(this) : native[name];
    },
  });
}
for (const name of ['arrayBuffer', 'blob', 'bytes', 'formData', 'json', 'text'] as const) {
  const inherited = (NativeResponse.prototype as unknown as Record<string, (this: unknown) => Promise<unknown>>)[name]!;
  Object.defineProperty(ScriptResponse.prototype, name, {
    configurable: true,
    writable: true,
    value: function readBody(this: ScriptResponse) {
      return inherited.call(ScriptResponse.nativeOf(this) ?? this);
    },
  });
}

/** Makes `Response` in this thread the subclass (call before the script loads). */
export function installScriptResponse(): void {
  globalThis.Response = ScriptResponse;
}

/** Takes a response's body if it is still the string or bytes it was built from (it is then used). */
export function takeStaticBody(response: Response): string | Uint8Array<ArrayBuffer> | undefined {
  return ScriptResponse.takeSource(response);
}
